import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { type InProcessNode, startInProcessNode } from "../../../test/integration/inProcessNode.js";
import { formatRfc3339Nano } from "../../util/time.js";
import { expectInternalError, expectMethodNotFound, expectParamsError, resultOf } from "./testing/expectations.js";
import {
  CHAIN_ID,
  GENESIS_APP_STATE,
  hexUpper,
  NODE_POWER,
  NON_VALIDATOR,
  OTHER_POWER,
  PAIR_TXS,
  REAL_CHAIN_CONFIG,
  type RealChain,
  SINGLE_TX,
  sha256,
  signDuplicateVoteEvidence,
  startRealChain,
} from "./testing/realChain.js";
import { arg, RpcTestClient, TRANSPORTS, type Transport } from "./testing/rpcTestClient.js";
import { startFakeRpc } from "./testing/startFakeRpc.js";

/**
 * Every node-RPC route over URI, JSON-RPC POST and WebSocket against a real node started in this
 * process (testing/realChain.ts: kvstore app, three validators of which only this node signs).
 * Expected values come from the node's own stores.
 */

const hexOf = hexUpper;
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const ZERO_BLOCK_ID = { hash: "", parts: { total: 0, hash: "" } };

/** The ExecTxResult the kvstore app gives a `key=value` tx, in its jsonpb form. */
function kvTxResult(key: string, value: string) {
  const attrs = (creator: string, k: string) => [
    { key: "creator", value: creator, index: true },
    { key: "key", value: k, index: true },
    { key: "index_key", value: "index is working", index: true },
    { key: "noindex_key", value: "index is working", index: false },
  ];
  return {
    code: 0,
    data: null,
    log: "",
    info: "",
    gas_wanted: "0",
    gas_used: "0",
    events: [
      { type: "app", attributes: attrs("Cosmoshi Netowoko", key) },
      { type: "app", attributes: attrs("Cosmoshi", value) },
    ],
    codespace: "",
  };
}

let chain: RealChain;

beforeAll(async () => {
  chain = await startRealChain();
});
afterAll(() => chain?.close());
// Tests that send txs leave blocks behind; each test starts on a chain that stands still.
beforeEach(() => chain.settle());

describe.each(TRANSPORTS)("comet rpc over %s", (transport: Transport) => {
  const call = (method: string, params: Parameters<RpcTestClient["call"]>[2] = {}) =>
    chain.client.call(transport, method, params);
  const blockIdOf = (h: number) => chain.meta(h).blockId;

  test("default: health", async () => {
    expect(resultOf(await call("health"))).toEqual({});
  });

  test("default: status", async () => {
    const r = resultOf(await call("status"));
    const latest = chain.latestHeight();
    const info = chain.n.node;
    expect(Object.keys(r)).toEqual(["node_info", "sync_info", "validator_info"]);
    expect(r.node_info).toMatchObject({
      protocol_version: { p2p: "8", block: "11", app: "1" },
      id: info.nodeKey.id,
      network: CHAIN_ID,
      version: "0.38.25",
      channels: expect.stringMatching(/^40202122233038/),
      other: { tx_index: "on", rpc_address: info.config.rpc.laddr },
    });
    expect(r.sync_info).toEqual({
      latest_block_hash: hexOf(blockIdOf(latest).hash),
      latest_app_hash: hexOf(chain.block(latest).header.appHash),
      latest_block_height: String(latest),
      latest_block_time: formatRfc3339Nano(chain.block(latest).header.time),
      earliest_block_hash: hexOf(blockIdOf(1).hash),
      earliest_app_hash: hexOf(chain.block(1).header.appHash),
      earliest_block_height: "1",
      earliest_block_time: formatRfc3339Nano(chain.block(1).header.time),
      catching_up: false,
    });
    expect(r.validator_info.voting_power).toBe(String(NODE_POWER));
    expect(r.validator_info.pub_key.type).toBe("tendermint/PubKeyEd25519");
    expect(r.validator_info.address).toMatch(/^[0-9A-F]{40}$/);
    expect(r.validator_info.address).toBe(hexOf(chain.nodeAddress));
  });

  test("default: net_info", async () => {
    expect(resultOf(await call("net_info"))).toEqual({
      listening: true,
      listeners: ["Listener(@)"],
      n_peers: "0",
      peers: [],
    });
  });

  test("default: blockchain returns at most 20 metas, descending", async () => {
    const r = resultOf(await call("blockchain"));
    const latest = chain.latestHeight();
    expect(r.last_height).toBe(String(latest));
    const expected = Array.from({ length: Math.min(20, latest) }, (_, i) => String(latest - i));
    expect(r.block_metas.map((m: { header: { height: string } }) => m.header.height)).toEqual(expected);
    const single = chain.meta(chain.heights.singleTx);
    const at = r.block_metas.find(
      (m: { header: { height: string } }) => m.header.height === String(single.header.height),
    );
    expect(at).toMatchObject({ block_size: String(single.blockSize), num_txs: "1" });
    expect(Object.keys(r.block_metas[0])).toEqual(["block_id", "block_size", "header", "num_txs"]);
  });

  test("args: blockchain minHeight/maxHeight", async () => {
    const r = resultOf(await call("blockchain", { minHeight: arg.int(2), maxHeight: arg.int(3) }));
    expect(r.block_metas.map((m: { header: { height: string } }) => m.header.height)).toEqual(["3", "2"]);
  });

  test("error: blockchain bounds", async () => {
    expectInternalError(
      await call("blockchain", { minHeight: arg.int(5), maxHeight: arg.int(3) }),
      transport,
      "min height 5 can't be greater than max height 3",
    );
    expectInternalError(
      await call("blockchain", { minHeight: arg.int(-1) }),
      transport,
      "heights must be non-negative",
    );
  });

  test("default: genesis", async () => {
    const r = resultOf(await call("genesis"));
    expect(Object.keys(r.genesis)).toEqual([
      "genesis_time",
      "chain_id",
      "initial_height",
      "consensus_params",
      "validators",
      "app_hash",
      "app_state",
    ]);
    expect(r.genesis.initial_height).toBe("1");
    expect(r.genesis.consensus_params).toEqual({
      block: { max_bytes: "22020096", max_gas: "-1" },
      evidence: { max_age_num_blocks: "100000", max_age_duration: "172800000000000", max_bytes: "1048576" },
      validator: { pub_key_types: ["ed25519"] },
      version: { app: "0" },
      abci: { vote_extensions_enable_height: "0" },
    });
    expect(r.genesis.validators[0]).toMatchObject({ power: "10", name: "", address: hexOf(chain.nodeAddress) });
    expect(r.genesis.app_state.accounts[0].name).toBe(GENESIS_APP_STATE.accounts[0]?.name);
  });

  test("default: genesis_chunked reassembles to the genesis document", async () => {
    const whole = resultOf(await call("genesis")).genesis;
    const chunk = resultOf(await call("genesis_chunked", { chunk: arg.int(0) }));
    expect(chunk.chunk).toBe("0");
    expect(chunk.total).toBe("1");
    expect(JSON.parse(Buffer.from(chunk.data, "base64").toString("utf8"))).toEqual(whole);
    expectInternalError(
      await call("genesis_chunked", { chunk: arg.int(1) }),
      transport,
      "there are 0 chunks, 1 is invalid",
    );
  });

  test("default: block (latest)", async () => {
    const r = resultOf(await call("block"));
    const latest = chain.latestHeight();
    const id = blockIdOf(latest);
    expect(r.block_id).toEqual({ hash: hexOf(id.hash), parts: { total: 1, hash: hexOf(id.partSetHeader.hash) } });
    expect(Object.keys(r.block)).toEqual(["header", "data", "evidence", "last_commit"]);
    expect(r.block.header.height).toBe(String(latest));
    expect(r.block.header.version).toEqual({ block: "11", app: "1" });
    expect(r.block.data).toEqual({ txs: [] });
    const evidence = chain.block(latest).evidence;
    if (evidence.length === 0) expect(r.block.evidence).toEqual({ evidence: [] });
    else expect(r.block.evidence.evidence).toHaveLength(evidence.length);
  });

  test("args: block height with txs", async () => {
    const h = chain.heights.pairTxs;
    const real = chain.block(h);
    const r = resultOf(await call("block", { height: arg.int(h) }));
    expect(r.block.data.txs).toEqual(PAIR_TXS.map((t) => t.toString("base64")));
    expect(r.block.header.version).toEqual({ block: "11", app: "1" });
    // The two validators added by txs never sign: their commit signatures are absent.
    expect(real.lastCommit.signatures).toHaveLength(3);
    expect(r.block.last_commit.signatures[2]).toEqual({
      block_id_flag: 1,
      validator_address: "",
      timestamp: "0001-01-01T00:00:00Z",
      signature: null,
    });
    expect(r.block.last_commit.signatures[0]).toMatchObject({
      block_id_flag: 2,
      validator_address: hexOf(chain.nodeAddress),
      timestamp: formatRfc3339Nano(real.lastCommit.signatures[0]?.timestamp ?? 0n),
    });
  });

  test("args: block at the initial height", async () => {
    const r = resultOf(await call("block", { height: arg.int(1) }));
    expect(r.block.header.last_block_id).toEqual(ZERO_BLOCK_ID);
    expect(r.block.header.last_results_hash).toBe(hexOf(chain.block(1).header.lastResultsHash));
    expect(r.block.last_commit).toEqual({ height: "0", round: 0, block_id: ZERO_BLOCK_ID, signatures: [] });
  });

  test("error: block heights", async () => {
    const latest = chain.latestHeight();
    expectInternalError(
      await call("block", { height: arg.int(0) }),
      transport,
      "height must be greater than 0, but got 0",
    );
    expectInternalError(
      await call("block", { height: arg.int(-3) }),
      transport,
      "height must be greater than 0, but got -3",
    );
    expectInternalError(
      await call("block", { height: arg.int(latest + 1) }),
      transport,
      `height ${latest + 1} must be less than or equal to the current blockchain height ${latest}`,
    );
    // URI: cmtjson checks the raw text for quotes first; JSON-RPC: the quoted string's content is not a number.
    expectParamsError(
      await call("block", { height: arg.raw("abc", "abc") }),
      transport,
      transport === "uri" ? /invalid 64-bit integer encoding "abc", expected string/ : /invalid character 'a'/,
    );
  });

  test("default: block_by_hash", async () => {
    const r = resultOf(await call("block_by_hash", { hash: arg.bytes(blockIdOf(3).hash) }));
    expect(r.block.header.height).toBe("3");
    expect(r.block_id.hash).toBe(hexOf(blockIdOf(3).hash));
    const missing = resultOf(await call("block_by_hash", { hash: arg.bytes(sha256("nope")) }));
    expect(missing).toEqual({ block_id: ZERO_BLOCK_ID, block: null });
  });

  test("default: block_results", async () => {
    const h = chain.heights.pairTxs;
    const r = resultOf(await call("block_results", { height: arg.int(h) }));
    expect(Object.keys(r)).toEqual([
      "height",
      "txs_results",
      "finalize_block_events",
      "validator_updates",
      "consensus_param_updates",
      "app_hash",
    ]);
    expect(r.height).toBe(String(h));
    expect(r.txs_results[0]).toEqual(kvTxResult("name", "satoshi"));
    expect(r.txs_results[1]).toEqual(kvTxResult("creator", "Cosmoshi"));
    expect(r.validator_updates).toBeNull();
    expect(r.consensus_param_updates).toBeNull();
    expect(r.app_hash).toBe(b64(chain.block(h + 1).header.appHash));
    // The block after a tx block commits its app hash and has no txs.
    const empty = resultOf(await call("block_results", { height: arg.int(h + 1) }));
    expect(empty.txs_results).toBeNull();
    const v = resultOf(await call("block_results", { height: arg.int(chain.heights.validatorTxs) }));
    expect(v.validator_updates.map((u: { power: string }) => u.power)).toEqual([
      String(NODE_POWER),
      String(OTHER_POWER),
      String(OTHER_POWER),
    ]);
    expect(v.validator_updates[0].pub_key.Sum.type).toBe("tendermint.crypto.PublicKey_Ed25519");
    expect(v.validator_updates[0].pub_key.Sum.value.ed25519).toBe(b64(chain.nodePubKey));
    expect(v.consensus_param_updates).toBeNull();
  });

  test("default: commit", async () => {
    const latest = chain.latestHeight();
    const head = resultOf(await call("commit"));
    expect(head.canonical).toBe(false);
    expect(head.signed_header.header.height).toBe(String(latest));
    expect(head.signed_header.commit.height).toBe(String(latest));
    const older = resultOf(await call("commit", { height: arg.int(latest - 1) }));
    expect(older.canonical).toBe(true);
    expect(older.signed_header.commit.block_id.hash).toBe(hexOf(blockIdOf(latest - 1).hash));
  });

  test("default: header and header_by_hash", async () => {
    const h = resultOf(await call("header", { height: arg.int(4) }));
    expect(h.header.height).toBe("4");
    const byHash = resultOf(await call("header_by_hash", { hash: arg.hex(blockIdOf(4).hash) }));
    expect(byHash).toEqual(h);
    expect(resultOf(await call("header_by_hash", { hash: arg.hex(sha256("x")) }))).toEqual({ header: null });
  });

  test("default: check_tx", async () => {
    expect(resultOf(await call("check_tx", { tx: arg.bytes(Buffer.from("hello=world")) }))).toEqual({
      code: 0,
      data: null,
      log: "",
      info: "",
      gas_wanted: "1",
      gas_used: "0",
      events: [],
      codespace: "",
    });
  });

  test("default: tx with proof", async () => {
    const tx = PAIR_TXS[1];
    const r = resultOf(await call("tx", { hash: arg.bytes(sha256(tx)), prove: arg.bool(true) }));
    expect(Object.keys(r)).toEqual(["hash", "height", "index", "tx_result", "tx", "proof"]);
    expect(r).toMatchObject({
      hash: hexOf(sha256(tx)),
      height: String(chain.heights.pairTxs),
      index: 1,
      tx: tx.toString("base64"),
    });
    expect(r.proof.data).toBe(tx.toString("base64"));
    expect(r.proof.root_hash).toBe(hexOf(chain.block(chain.heights.pairTxs).header.dataHash));
    expect(r.proof.proof).toMatchObject({ total: "2", index: "1" });
    expect(r.proof.proof.aunts).toHaveLength(1);
    const noProof = resultOf(await call("tx", { hash: arg.bytes(sha256(tx)) }));
    expect(noProof.proof).toBeUndefined();
    expectInternalError(
      await call("tx", { hash: arg.bytes(sha256("none")) }),
      transport,
      `tx (${hexOf(sha256("none"))}) not found`,
    );
  });

  test("default: tx_search", async () => {
    const pair = chain.heights.pairTxs;
    const single = chain.heights.singleTx;
    const r = resultOf(await call("tx_search", { query: arg.str(`tx.height=${pair}`) }));
    expect(r.total_count).toBe("2");
    expect(r.txs.map((t: { index: number }) => t.index)).toEqual([0, 1]);
    // The fixture's txs: 3 validator updates, the single tx, the pair.
    const range = `tx.height>=${single} AND tx.height<=${pair}`;
    const desc = resultOf(await call("tx_search", { query: arg.str(range), order_by: arg.str("desc") }));
    expect(desc.txs.map((t: { height: string }) => t.height)).toEqual([String(pair), String(pair), String(single)]);
    const paged = resultOf(await call("tx_search", { query: arg.str(range), page: arg.int(2), per_page: arg.int(1) }));
    expect(paged.total_count).toBe("3");
    expect(paged.txs).toHaveLength(1);
    expect(paged.txs[0]).toMatchObject({ height: String(pair), index: 0 });
    const byCreator = resultOf(
      await call("tx_search", { query: arg.str(`app.creator='Cosmoshi Netowoko' AND tx.height<=${pair}`) }),
    );
    expect(byCreator.total_count).toBe("6");
    const noIndex = resultOf(await call("tx_search", { query: arg.str("app.noindex_key='index is working'") }));
    expect(noIndex).toEqual({ txs: [], total_count: "0" });
  });

  test("error: tx_search", async () => {
    const range = `tx.height>=${chain.heights.singleTx} AND tx.height<=${chain.heights.pairTxs}`;
    expectInternalError(
      await call("tx_search", { query: arg.str(range), page: arg.int(5), per_page: arg.int(1) }),
      transport,
      "page should be within [1, 3] range, given 5",
    );
    expectInternalError(
      await call("tx_search", { query: arg.str("tx.height>1"), order_by: arg.str("sideways") }),
      transport,
      "expected order_by to be either `asc` or `desc` or empty",
    );
    expectInternalError(await call("tx_search", { query: arg.str("tx.height>>1") }), transport, /^offset \d+: got/);
    expectInternalError(
      await call("tx_search", { query: arg.str(`a='${"x".repeat(600)}'`) }),
      transport,
      "maximum query length exceeded",
    );
  });

  test("default: block_search (descending by default)", async () => {
    const latest = chain.latestHeight();
    const r = resultOf(await call("block_search", { query: arg.str(`block.height>${latest - 3}`) }));
    expect(r.total_count).toBe("3");
    expect(r.blocks.map((b: { block: { header: { height: string } } }) => b.block.header.height)).toEqual([
      String(latest),
      String(latest - 1),
      String(latest - 2),
    ]);
    expect(Object.keys(r.blocks[0])).toEqual(["block_id", "block"]);
  });

  test("default: validators are the next height's set", async () => {
    const latest = chain.latestHeight();
    const r = resultOf(await call("validators"));
    expect(r.block_height).toBe(String(latest + 1));
    expect(r.count).toBe(String(r.validators.length));
    expect(r.total).toBe(r.count);
    // Idle between blocks, the round state holds the same set (with the same priorities).
    const dump = resultOf(await call("dump_consensus_state"));
    expect(dump.round_state.height).toBe(String(latest + 1));
    expect(r.validators[0]).toEqual({
      address: hexOf(chain.nodeAddress),
      pub_key: { type: "tendermint/PubKeyEd25519", value: b64(chain.nodePubKey) },
      voting_power: String(NODE_POWER),
      proposer_priority: dump.round_state.validators.validators[0].proposer_priority,
    });
    // The three-member set, from two blocks after the updates on.
    const page2 = resultOf(
      await call("validators", {
        height: arg.int(chain.heights.validatorTxs + 2),
        page: arg.int(2),
        per_page: arg.int(2),
      }),
    );
    expect(page2).toMatchObject({ block_height: String(chain.heights.validatorTxs + 2), count: "1", total: "3" });
    expectInternalError(
      await call("validators", { height: arg.int(latest + 2) }),
      transport,
      `height ${latest + 2} must be less than or equal to the current blockchain height ${latest + 1}`,
    );
  });

  test("default: dump_consensus_state (fields as the OpenAPI document has them)", async () => {
    const latest = chain.latestHeight();
    const r = resultOf(await call("dump_consensus_state"));
    expect(Object.keys(r)).toEqual(["round_state", "peers"]);
    const rs = r.round_state;
    expect(Object.keys(rs)).toEqual([
      "height",
      "round",
      "step",
      "start_time",
      "commit_time",
      "validators",
      "proposal",
      "proposal_block",
      "proposal_block_parts",
      "locked_round",
      "locked_block",
      "locked_block_parts",
      "valid_round",
      "valid_block",
      "valid_block_parts",
      "votes",
      "commit_round",
      "last_commit",
      "last_validators",
      "triggered_timeout_precommit",
    ]);
    // Waiting for txs: NewHeight (1) until timeout_commit has passed, then NewRound (2).
    expect(rs).toMatchObject({
      height: String(latest + 1),
      round: 0,
      locked_round: -1,
      valid_round: "-1",
      commit_round: -1,
    });
    expect([1, 2]).toContain(rs.step);
    // The sets of this height and the last (evidence tests may have removed a validator since the fixture).
    const setAt = async (h: number) => {
      const v = resultOf(await call("validators", { height: arg.int(h) }));
      const total = v.validators.reduce((n: bigint, x: { voting_power: string }) => n + BigInt(x.voting_power), 0n);
      return { size: Number(v.total), total };
    };
    const now = await setAt(latest + 1);
    const last = await setAt(latest);
    const nils = (n: number) => Array.from({ length: n }, () => "nil-Vote");
    expect(rs.votes[0]).toEqual({
      round: "0",
      prevotes: nils(now.size),
      prevotes_bit_array: `BA{${now.size}:${"_".repeat(now.size)}} 0/${now.total} = 0.00`,
      precommits: nils(now.size),
      precommits_bit_array: `BA{${now.size}:${"_".repeat(now.size)}} 0/${now.total} = 0.00`,
    });
    const fraction = (Number(NODE_POWER) / Number(last.total)).toFixed(2);
    expect(rs.last_commit.votes_bit_array).toBe(
      `BA{${last.size}:x${"_".repeat(last.size - 1)}} ${NODE_POWER}/${last.total} = ${fraction}`,
    );
    const seen = chain.n.node.blockStore.loadSeenCommit(latest);
    const time = formatRfc3339Nano(seen?.signatures[0]?.timestamp ?? 0n).replace(/\./g, "\\.");
    expect(rs.last_commit.votes[0]).toMatch(
      new RegExp(
        `^Vote\\{0:${hexOf(chain.nodeAddress).slice(0, 12)} ${latest}/00/SIGNED_MSG_TYPE_PRECOMMIT\\(Precommit\\) ${hexOf(blockIdOf(latest).hash).slice(0, 12)} [0-9A-F]{12} 000000000000 @ ${time}\\}$`,
      ),
    );
    expect(rs.last_commit.votes.slice(1)).toEqual(nils(last.size - 1));
    expect(rs.last_commit.peer_maj_23s).toEqual({});
    expect(rs.validators.proposer).toBeTypeOf("object");
    expect(rs.validators.proposer.address).toBe(hexOf(chain.nodeAddress));
    // A single node has no peers (peer states: encode.test.ts).
    expect(r.peers).toEqual([]);
  });

  test("default: consensus_state", async () => {
    const r = resultOf(await call("consensus_state"));
    expect(r.round_state["height/round/step"]).toMatch(new RegExp(`^${chain.latestHeight() + 1}/0/[12]$`));
    expect(r.round_state.proposal_block_hash).toBe("");
    expect(r.round_state.height_vote_set[0].round).toBe(0);
    expect(r.round_state.proposer.index).toBeTypeOf("number");
    expect(r.round_state.proposer.address).toBe(hexOf(chain.nodeAddress));
  });

  test("default: consensus_params", async () => {
    const r = resultOf(await call("consensus_params"));
    expect(r.block_height).toBe(String(chain.latestHeight() + 1));
    expect(r.consensus_params.evidence.max_age_duration).toBe("172800000000000");
  });

  test("default: broadcast, unconfirmed and mempool errors", async () => {
    const tx = Buffer.from(`tx-${transport}=1`);
    const sync = resultOf(await call("broadcast_tx_sync", { tx: arg.bytes(tx) }));
    expect(sync).toEqual({ code: 0, data: "", log: "", codespace: "", hash: hexOf(sha256(tx)) });
    expectInternalError(
      await call("broadcast_tx_sync", { tx: arg.bytes(tx) }),
      transport,
      "tx already exists in cache",
    );
    const badTx = Buffer.from(`=bad-${transport}`);
    const bad = resultOf(await call("broadcast_tx_sync", { tx: arg.bytes(badTx) }));
    const badCheck = await chain.n.node.app.checkTx({ tx: badTx, type: 0 });
    expect(bad).toEqual({
      code: badCheck.code,
      data: "",
      log: badCheck.log,
      codespace: "",
      hash: hexOf(sha256(badTx)),
    });
    expect(bad.code).not.toBe(0);
  });

  test("default: broadcast_tx_commit waits for the Tx event", async () => {
    const tx = Buffer.from(`commit-${transport}=1`);
    const r = resultOf(await call("broadcast_tx_commit", { tx: arg.bytes(tx) }));
    expect(Object.keys(r)).toEqual(["check_tx", "tx_result", "hash", "height"]);
    const height = Number(r.height);
    expect(chain.block(height).data.txs.map((t) => Buffer.from(t).toString())).toContain(tx.toString());
    expect(r.hash).toBe(hexOf(sha256(tx)));
    expect(r.check_tx.code).toBe(0);
    expect(r.tx_result.events[0].type).toBe("app");
    const bad = resultOf(await call("broadcast_tx_commit", { tx: arg.bytes(Buffer.from(`=bad-commit-${transport}`)) }));
    expect(bad.height).toBe("0");
    expect(bad.check_tx.code).not.toBe(0);
    expect(bad.tx_result).toEqual({
      code: 0,
      data: null,
      log: "",
      info: "",
      gas_wanted: "0",
      gas_used: "0",
      events: [],
      codespace: "",
    });
    expect(await chain.rpcSubscriptions()).toBe(0);
  });

  test("default: abci_info and abci_query", async () => {
    const latest = chain.latestHeight();
    const info = await chain.n.node.app.info();
    expect(resultOf(await call("abci_info"))).toEqual({
      response: {
        data: info.data,
        version: "2.0.0",
        app_version: "1",
        last_block_height: String(latest),
        last_block_app_hash: b64(info.lastBlockAppHash),
      },
    });
    const q = resultOf(
      await call("abci_query", {
        path: arg.str("/store"),
        data: arg.hex(Buffer.from("name")),
        height: arg.int(0),
        prove: arg.bool(true),
      }),
    );
    // The kvstore app gives no proof ops (their encoding: encode.test.ts).
    expect(q.response).toEqual({
      code: 0,
      log: "exists",
      info: "",
      index: "-1",
      key: b64(Buffer.from("name")),
      value: b64(Buffer.from("satoshi")),
      proofOps: null,
      height: String(latest),
      codespace: "",
    });
    const missing = resultOf(await call("abci_query", { path: arg.str("/store") }));
    expect(missing.response).toMatchObject({ code: 0, log: "does not exist", key: null, value: null, proofOps: null });
  });

  test("default: broadcast_evidence", async () => {
    // A double vote by one of the validators that never sign, at a height where it is in the set.
    const height = chain.heights.validatorTxs + 2 + TRANSPORTS.indexOf(transport);
    const set = resultOf(await call("validators", { height: arg.int(height) }));
    const key = chain.otherKeys[0];
    if (key === undefined) throw new RangeError("no key");
    const signed = (opts: { heightB?: number; reversed?: boolean } = {}) => {
      const index = set.validators.findIndex(
        (v: { pub_key: { value: string } }) => v.pub_key.value === b64(key.bytes.subarray(32)),
      );
      return signDuplicateVoteEvidence({
        key,
        height,
        index,
        blockTime: chain.block(height).header.time,
        totalVotingPower: NODE_POWER + 2n * OTHER_POWER,
        validatorPower: OTHER_POWER,
        ...opts,
      });
    };
    const ev = signed();
    const r = resultOf(await call("broadcast_evidence", { evidence: arg.raw(ev.wire, JSON.stringify(ev.wire)) }));
    expect(r).toEqual({ hash: b64(ev.hash) });
    const bad = signed({ reversed: true });
    expectInternalError(
      await call("broadcast_evidence", { evidence: arg.raw(bad.wire, JSON.stringify(bad.wire)) }),
      transport,
      "evidence.ValidateBasic failed: duplicate votes in invalid order",
    );
    // Votes of two heights pass ValidateBasic; the evidence pool refuses them.
    const heights = signed({ heightB: height + 1 });
    expectInternalError(
      await call("broadcast_evidence", { evidence: arg.raw(heights.wire, JSON.stringify(heights.wire)) }),
      transport,
      `failed to add evidence: invalid evidence: h/r/s does not match: ${height}/0/2 vs ${height + 1}/0/2`,
    );
    expectInternalError(
      await call("broadcast_evidence", { evidence: arg.raw(null, "null") }),
      transport,
      "no evidence was provided",
    );
    expectParamsError(
      await call("broadcast_evidence", { evidence: arg.raw({ type: "x", value: {} }, '{"type":"x","value":{}}') }),
      transport,
      'unknown type "x"',
    );
  });

  test("error: subscribe family outside WebSocket", async () => {
    if (transport === "ws") return;
    for (const m of ["subscribe", "unsubscribe", "unsubscribe_all"]) {
      const reply = await call(m, { query: arg.str("tm.event='NewBlock'") });
      expect(reply.body).toMatchObject({ error: { code: -32601, message: "Method not found" } });
      expect(reply.status).toBe(transport === "uri" ? 404 : 200);
      if (transport === "uri") expect(reply.body.id).toBe(-1);
    }
  });

  test("error: unsafe routes are absent unless enabled", async () => {
    expectMethodNotFound(await call("unsafe_flush_mempool"), transport);
    expectMethodNotFound(await call("dial_seeds", { seeds: arg.raw(["a@b:1"], '["a@b:1"]') }), transport);
    expectMethodNotFound(await call("no_such_method"), transport);
  });
});

/**
 * A second node, with the unsafe routes on and indexing off, that is not its chain's validator: it
 * never makes a block, so it also shows the answers before the first block.
 */
describe("a node with unsafe routes, no indexer and no blocks", () => {
  let other: InProcessNode;
  let client: RpcTestClient;
  beforeAll(async () => {
    other = await startInProcessNode(
      {
        ...REAL_CHAIN_CONFIG,
        "--rpc.unsafe": true,
        "--tx_index.indexer": "null",
        "--block_sync": false,
      },
      NON_VALIDATOR,
    );
    client = new RpcTestClient(other.rpcUrl);
  });
  afterAll(async () => {
    await client?.close();
    await other?.close();
  });

  describe.each(TRANSPORTS)("unsafe routes and disabled indexer over %s", (transport: Transport) => {
    test("args: dial_seeds, dial_peers, unsafe_flush_mempool", async () => {
      const seeds = [`${"aa".repeat(20)}@127.0.0.1:1`];
      expect(
        resultOf(await client.call(transport, "dial_seeds", { seeds: arg.raw(seeds, JSON.stringify(seeds)) })),
      ).toEqual({ log: "Dialing seeds in progress. See /net_info for details" });
      expectInternalError(await client.call(transport, "dial_seeds", {}), transport, "no seeds provided");
      expect(
        resultOf(
          await client.call(transport, "dial_peers", {
            peers: arg.raw(seeds, JSON.stringify(seeds)),
            persistent: arg.bool(true),
          }),
        ),
      ).toEqual({ log: "Dialing peers in progress. See /net_info for details" });
      expectInternalError(
        await client.call(transport, "dial_peers", { peers: arg.raw(["nope"], '["nope"]') }),
        transport,
        "address (nope) does not contain ID",
      );
      await client.call(transport, "broadcast_tx_sync", { tx: arg.bytes(Buffer.from(`flush-${transport}=1`)) });
      expect(resultOf(await client.call(transport, "num_unconfirmed_txs")).n_txs).toBe("1");
      expect(resultOf(await client.call(transport, "unsafe_flush_mempool"))).toEqual({});
      expect(resultOf(await client.call(transport, "num_unconfirmed_txs")).n_txs).toBe("0");
    });

    test("default: broadcast_tx_async and the unconfirmed txs (this node never makes a block)", async () => {
      const tx2 = Buffer.from(`async-${transport}=1`);
      const tx3 = Buffer.from(`async-${transport}=2`);
      expect(resultOf(await client.call(transport, "broadcast_tx_async", { tx: arg.bytes(tx2) }))).toEqual({
        code: 0,
        data: "",
        log: "",
        codespace: "",
        hash: hexOf(sha256(tx2)),
      });
      // The sync broadcast returns once tx3 is checked, and txs are checked in order of arrival.
      resultOf(await client.call(transport, "broadcast_tx_sync", { tx: arg.bytes(tx3) }));
      const un = resultOf(await client.call(transport, "unconfirmed_txs", { limit: arg.int(1) }));
      expect(un.n_txs).toBe("1");
      expect(Number(un.total)).toBeGreaterThanOrEqual(2);
      expect(un.txs).toEqual([tx2.toString("base64")]);
      const num = resultOf(await client.call(transport, "num_unconfirmed_txs"));
      expect(num.txs).toBeNull();
      expect(num.n_txs).toBe(num.total);
      expectInternalError(
        await client.call(transport, "broadcast_tx_async", { tx: arg.bytes(tx2) }),
        transport,
        "tx already exists in cache",
      );
      expect(resultOf(await client.call(transport, "unsafe_flush_mempool"))).toEqual({});
    });

    test("error: indexing disabled", async () => {
      expectInternalError(
        await client.call(transport, "tx", { hash: arg.bytes(sha256("x")) }),
        transport,
        "transaction indexing is disabled",
      );
      expectInternalError(
        await client.call(transport, "tx_search", { query: arg.str("tx.height=1") }),
        transport,
        "transaction indexing is disabled",
      );
      expectInternalError(
        await client.call(transport, "block_search", { query: arg.str("block.height=1") }),
        transport,
        "block indexing is disabled",
      );
    });
  });

  describe.each(TRANSPORTS)("an empty chain over %s", (transport: Transport) => {
    test("default: status, block and commit before the first block", async () => {
      const s = resultOf(await client.call(transport, "status"));
      expect(s.sync_info).toEqual({
        latest_block_hash: "",
        latest_app_hash: "",
        latest_block_height: "0",
        latest_block_time: "1970-01-01T00:00:00Z",
        earliest_block_hash: "",
        earliest_app_hash: "",
        earliest_block_height: "0",
        earliest_block_time: "1970-01-01T00:00:00Z",
        catching_up: false,
      });
      expect(resultOf(await client.call(transport, "block"))).toEqual({ block_id: ZERO_BLOCK_ID, block: null });
      expect(resultOf(await client.call(transport, "commit"))).toBeNull();
      expect(resultOf(await client.call(transport, "header"))).toEqual({ header: null });
      expect(resultOf(await client.call(transport, "validators")).block_height).toBe("1");
      expectInternalError(
        await client.call(transport, "blockchain"),
        transport,
        "min height 1 can't be greater than max height 0",
      );
    });
  });
});

test("behavior: broadcast_tx_commit times out", async () => {
  // Error level: a fake node whose mempool admits txs that no block ever includes.
  const f = await startFakeRpc({ timeoutBroadcastTxCommitMs: 150 });
  try {
    const reply = await f.client.call("http", "broadcast_tx_commit", { tx: arg.bytes(Buffer.from("never")) });
    expectInternalError(reply, "http", "timed out waiting for tx to be included in a block");
    expect(f.node.bus.numClients()).toBe(0);
  } finally {
    await f.close();
  }
});

test("behavior: a broadcast_tx_commit wait counts as a subscription for max_subscription_clients", async () => {
  // Error level: a fake node whose mempool admits txs that no block ever includes, so the first wait stays open.
  const f = await startFakeRpc({ maxSubscriptionClients: 1, timeoutBroadcastTxCommitMs: 3000 });
  try {
    const first = f.client.call("http", "broadcast_tx_commit", { tx: arg.bytes(Buffer.from("held")) });
    await vi.waitFor(() => expect([...f.node.services.txWaits.owners()].length).toBe(1), { timeout: 2000 });
    const second = await f.client.call("http", "broadcast_tx_commit", { tx: arg.bytes(Buffer.from("other")) });
    expectInternalError(second, "http", "max_subscription_clients 1 reached");
    expectInternalError(await first, "http", "timed out waiting for tx to be included in a block");
    expect([...f.node.services.txWaits.owners()]).toEqual([]);
  } finally {
    await f.close();
  }
});

test("error: block_results of a height whose results are gone", async () => {
  // Error level: a real node keeps every height's results, so a fake state store lacks them.
  const f = await startFakeRpc(
    {},
    {
      customize: (node) => {
        node.services.state = { ...node.services.state, loadFinalizeBlockResponse: () => undefined };
      },
    },
  );
  try {
    for (const transport of TRANSPORTS) {
      expectInternalError(
        await f.client.call(transport, "block_results", { height: arg.int(1) }),
        transport,
        "could not find results for height #1",
      );
    }
  } finally {
    await f.close();
  }
});

test("behavior: the fixture chain is as built", () => {
  const { validatorTxs, singleTx, pairTxs, built } = chain.heights;
  expect([validatorTxs, singleTx, pairTxs, built]).toEqual([2, 4, 6, 7]);
  expect(chain.block(singleTx).data.txs.map((t) => Buffer.from(t).toString())).toEqual([SINGLE_TX.toString()]);
});

describe("status answer reuse", () => {
  test("behavior: the kept status answer is rebuilt when the chain moves", async () => {
    const status = async () => resultOf(await chain.client.call("http", "status"));
    const first = await status();
    const height = chain.latestHeight();
    expect(first.sync_info.latest_block_height).toBe(String(height));
    expect(await status()).toEqual(first);
    await chain.commitTxs([Buffer.from("status-moves=1")]);
    const second = await status();
    const latest = chain.latestHeight();
    expect(latest).toBeGreaterThan(height);
    expect(second.sync_info.latest_block_height).toBe(String(latest));
    expect(second.sync_info.latest_block_hash).toBe(hexOf(chain.meta(latest).blockId.hash));
  });
});

describe("block answer reuse", () => {
  test("behavior: a kept block answer is the block of the height asked", async () => {
    for (const h of [3, 4, 3, 4]) {
      const r = resultOf(await chain.client.call("http", "block", { height: arg.int(h) }));
      expect(r.block.header.height).toBe(String(h));
      expect(r.block_id.hash).toBe(hexOf(chain.meta(h).blockId.hash));
    }
  });
});
