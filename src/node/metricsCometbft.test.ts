import { Registry } from "prom-client";
import { describe, expect, test } from "vitest";
import { encodeBlocksyncMessage } from "../blocksync/index.js";
import { encodeConsensusMessage, encodeMempoolTxs } from "../reactors/index.js";
import { ValidatorSet } from "../types/index.js";
import { CometbftMetrics, type CometbftMetricsSources, messageTypeLabel } from "./metricsCometbft.js";
import { ComethMetrics } from "./metricsCometh.js";
import { HistogramFamily, ScalarFamily } from "./metricsKit.js";

function sources(over: Partial<CometbftMetricsSources> = {}): CometbftMetricsSources {
  return {
    stateSyncing: () => false,
    height: () => 7,
    validators: () => ValidatorSet.empty(),
    mempoolSize: () => 3,
    mempoolSizeBytes: () => 300,
    peers: () => [{ id: "aa", pendingSend: () => 2 }],
    blockSyncing: () => false,
    validatorsAt: () => undefined,
    ownAddress: () => undefined,
    blockTime: () => undefined,
    initialHeight: () => 1,
    ...over,
  };
}

function setup() {
  const registry = new Registry();
  registry.setDefaultLabels({ chain_id: "c" });
  const m = new CometbftMetrics(registry, "cometbft", sources());
  return { registry, m };
}

/** CometBFT v0.38.25's 58 metric names and types (every metrics.gen.go), as `<subsystem>_<name>`. */
const UPSTREAM: Record<string, "gauge" | "counter" | "histogram"> = {
  consensus_height: "gauge",
  consensus_validator_last_signed_height: "gauge",
  consensus_rounds: "gauge",
  consensus_round_duration_seconds: "histogram",
  consensus_validators: "gauge",
  consensus_validators_power: "gauge",
  consensus_validator_power: "gauge",
  consensus_validator_missed_blocks: "gauge",
  consensus_missing_validators: "gauge",
  consensus_missing_validators_power: "gauge",
  consensus_byzantine_validators: "gauge",
  consensus_byzantine_validators_power: "gauge",
  consensus_block_interval_seconds: "histogram",
  consensus_num_txs: "gauge",
  consensus_block_size_bytes: "gauge",
  consensus_chain_size_bytes: "counter",
  consensus_total_txs: "gauge",
  consensus_latest_block_height: "gauge",
  consensus_block_parts: "counter",
  consensus_duplicate_block_part: "counter",
  consensus_duplicate_vote: "counter",
  consensus_step_duration_seconds: "histogram",
  consensus_block_gossip_parts_received: "counter",
  consensus_quorum_prevote_delay: "gauge",
  consensus_quorum_precommit_delay: "gauge",
  consensus_full_prevote_delay: "gauge",
  consensus_precommits_counted: "gauge",
  consensus_precommits_staking_percentage: "gauge",
  consensus_vote_extension_receive_count: "counter",
  consensus_proposal_receive_count: "counter",
  consensus_proposal_create_count: "counter",
  consensus_round_voting_power_percent: "gauge",
  consensus_late_votes: "counter",
  p2p_peers: "gauge",
  p2p_peer_receive_bytes_total: "counter",
  p2p_peer_send_bytes_total: "counter",
  p2p_peer_pending_send_bytes: "gauge",
  p2p_num_txs: "gauge",
  p2p_message_receive_bytes_total: "counter",
  p2p_message_send_bytes_total: "counter",
  mempool_size: "gauge",
  mempool_size_bytes: "gauge",
  mempool_tx_size_bytes: "histogram",
  mempool_failed_txs: "counter",
  mempool_rejected_txs: "counter",
  mempool_evicted_txs: "counter",
  mempool_recheck_times: "counter",
  mempool_active_outbound_connections: "gauge",
  state_block_processing_time: "histogram",
  state_consensus_param_updates: "counter",
  state_validator_set_updates: "counter",
  blocksync_syncing: "gauge",
  blocksync_num_txs: "gauge",
  blocksync_total_txs: "gauge",
  blocksync_block_size_bytes: "gauge",
  blocksync_latest_block_height: "gauge",
  statesync_syncing: "gauge",
  abci_connection_method_timing_seconds: "histogram",
};

describe("CometBFT metric set", () => {
  test("default: every CometBFT v0.38.25 metric is registered under its name and type", async () => {
    const { registry } = setup();
    expect(Object.keys(UPSTREAM)).toHaveLength(58);
    const text = await registry.metrics();
    for (const [name, type] of Object.entries(UPSTREAM)) {
      expect(text, name).toContain(`# TYPE cometbft_${name} ${type}\n`);
    }
    // CometBFT v1's store timing too.
    expect(text).toContain("# TYPE cometbft_store_block_store_access_duration_seconds histogram\n");
    // Gauges read from the node at scrape time.
    expect(text).toMatch(/^cometbft_consensus_height\{chain_id="c"\} 7$/m);
    expect(text).toMatch(/^cometbft_mempool_size_bytes\{chain_id="c"\} 300$/m);
    expect(text).toMatch(/^cometbft_p2p_peer_pending_send_bytes\{peer_id="aa",chain_id="c"\} 2$/m);
  });

  test("behavior: statesync_syncing is 1 while state sync runs and 0 before and after, read at each scrape", async () => {
    let syncing = false;
    const registry = new Registry();
    new CometbftMetrics(registry, "cometbft", sources({ stateSyncing: () => syncing }));
    expect(await registry.metrics()).toMatch(/^cometbft_statesync_syncing 0$/m);
    syncing = true;
    expect(await registry.metrics()).toMatch(/^cometbft_statesync_syncing 1$/m);
    syncing = false;
    expect(await registry.metrics()).toMatch(/^cometbft_statesync_syncing 0$/m);
  });

  test("behavior: p2p bytes are counted per peer and channel (chID as %#x) and per message type", async () => {
    const { registry, m } = setup();
    const hasVote = encodeConsensusMessage({ kind: "hasVote", height: 5, round: 0, type: 1, index: 2 });
    m.sent("peer1", 0x20, hasVote);
    m.sent("peer1", 0x20, hasVote);
    const txs = encodeMempoolTxs([new Uint8Array([1, 2, 3])]);
    m.received("peer2", 0x30, txs);
    const status = encodeBlocksyncMessage({ kind: "statusRequest" });
    m.received("peer2", 0x40, status);
    const text = await registry.metrics();
    expect(text).toContain(
      `cometbft_p2p_peer_send_bytes_total{peer_id="peer1",chID="0x20",chain_id="c"} ${2 * hasVote.length}`,
    );
    expect(text).toContain(
      `cometbft_p2p_message_send_bytes_total{message_type="consensus_HasVote",chain_id="c"} ${2 * hasVote.length}`,
    );
    expect(text).toContain(
      `cometbft_p2p_peer_receive_bytes_total{peer_id="peer2",chID="0x30",chain_id="c"} ${txs.length}`,
    );
    expect(text).toContain(
      `cometbft_p2p_message_receive_bytes_total{message_type="mempool_Txs",chain_id="c"} ${txs.length}`,
    );
    expect(text).toContain(`message_type="blocksync_StatusRequest"`);
    expect(messageTypeLabel(0x38, new Uint8Array([10, 0]))).toBe("types_EvidenceList");
    expect(messageTypeLabel(0x00, new Uint8Array([18, 0]))).toBe("p2p_PexAddrs");
    expect(messageTypeLabel(0x99, new Uint8Array([10]))).toBe("unknown");
  });

  test("behavior: mempool hooks feed tx sizes and CometBFT's failed/rejected/evicted/recheck counters", async () => {
    const { registry, m } = setup();
    const cometh = new ComethMetrics(registry, { nodeSubscriptions: () => 4 });
    const hooks = cometh.mempoolHooks(m);
    hooks.added(100);
    hooks.failed(3, "sdk");
    hooks.failed(7, "");
    hooks.rejected("full");
    hooks.rejected("in_cache");
    hooks.rechecked();
    hooks.evicted();
    const text = await registry.metrics();
    expect(text).toMatch(/^cometbft_mempool_tx_size_bytes_bucket\{le="243",chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_mempool_tx_size_bytes_bucket\{le="81",chain_id="c"\} 0$/m);
    expect(text).toMatch(/^cometbft_mempool_failed_txs\{chain_id="c"\} 2$/m);
    // Upstream counts only a full mempool (and a tx already in it) as rejected.
    expect(text).toMatch(/^cometbft_mempool_rejected_txs\{chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_mempool_recheck_times\{chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_mempool_evicted_txs\{chain_id="c"\} 1$/m);
    expect(text).toContain('cometh_checktx_total{result="accepted",reason="ok",chain_id="c"} 1');
    expect(text).toContain('cometh_checktx_total{result="rejected",reason="invalid_sequence",chain_id="c"} 1');
    expect(text).toContain('cometh_checktx_total{result="rejected",reason="code_7",chain_id="c"} 1');
    expect(text).toContain('cometh_checktx_total{result="rejected",reason="mempool_full",chain_id="c"} 1');
    expect(text).toContain('cometh_checktx_total{result="rejected",reason="tx_in_cache",chain_id="c"} 1');
    expect(text).toContain('cometh_rpc_subscriptions{server="node",chain_id="c"} 4');
  });

  test("behavior: steps and rounds are timed as MarkStep/MarkRound do (the step or round that ends)", async () => {
    const { registry, m } = setup();
    m.roundStep(0, 1, 0, 2, BigInt(Date.now() - 500) * 1_000_000n); // NewHeight → NewRound (round 0 starts)
    m.roundStep(0, 2, 0, 3, 0n); // NewRound → Propose
    m.roundStep(0, 3, 1, 2, 0n); // round 1
    m.lateVote(1);
    m.lateVote(2);
    m.lateVote(2);
    m.proposalProcessed(true);
    m.proposalProcessed(false);
    m.blockPartReceived(true, true);
    m.blockPartReceived(true, false);
    m.blockPartReceived(false, false);
    const text = await registry.metrics();
    expect(text).toMatch(/^cometbft_consensus_step_duration_seconds_count\{step="NewRound",chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_consensus_step_duration_seconds_count\{step="Propose",chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_consensus_round_duration_seconds_count\{chain_id="c"\} 1$/m);
    expect(text).toMatch(/^cometbft_consensus_rounds\{chain_id="c"\} 0$/m);
    expect(text).toContain('cometbft_consensus_late_votes{vote_type="prevote",chain_id="c"} 1');
    expect(text).toContain('cometbft_consensus_late_votes{vote_type="precommit",chain_id="c"} 2');
    expect(text).toContain('cometbft_consensus_proposal_receive_count{status="rejected",chain_id="c"} 1');
    expect(text).toContain('cometbft_consensus_block_gossip_parts_received{matches_current="true",chain_id="c"} 2');
    expect(text).toContain('cometbft_consensus_block_gossip_parts_received{matches_current="false",chain_id="c"} 1');
    expect(text).toMatch(/^cometbft_consensus_duplicate_block_part\{chain_id="c"\} 1$/m);
  });
});

describe("metric families", () => {
  test("behavior: histograms print cumulative buckets, +Inf, sum and count", async () => {
    const registry = new Registry();
    const h = new HistogramFamily(registry, { name: "h", help: "x", buckets: [1, 2], labelNames: ["m"] });
    h.child("a").observe(0.5);
    h.child("a").observe(1.5);
    h.child("a").observe(5);
    const text = await registry.metrics();
    expect(text).toContain('h_bucket{m="a",le="1"} 1\nh_bucket{m="a",le="2"} 2\nh_bucket{m="a",le="+Inf"} 3');
    expect(text).toContain('h_sum{m="a"} 7\nh_count{m="a"} 3');
    const g = new ScalarFamily(registry, { name: "g", help: "y", type: "gauge", labelNames: ["k"] });
    expect(await registry.metrics()).toContain("# TYPE g gauge");
    g.child("x").value = 2;
    expect(await registry.metrics()).toContain('g{k="x"} 2');
  });
});
