import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bytesToHexUpper } from "../../util/bytes.js";
import { expectInternalError, expectMethodNotFound, expectParamsError, resultOf } from "./testing/expectations.js";
import { blockIdAt, CHAIN_ID, LATEST_HEIGHT, sha256, TXS_BY_HEIGHT, VALIDATORS } from "./testing/fakeServices.js";
import { arg, TRANSPORTS, type Transport } from "./testing/rpcTestClient.js";
import { type FakeRpc, startFakeRpc } from "./testing/startFakeRpc.js";

const hexOf = (b: Uint8Array) => bytesToHexUpper(b);
const ZERO_BLOCK_ID = { hash: "", parts: { total: 0, hash: "" } };

const duplicateVoteEvidence = (heightB: string) => {
  const vote = (height: string, hash: string) => ({
    type: 2,
    height,
    round: 0,
    block_id: { hash, parts: { total: 1, hash: "AB".repeat(32) } },
    timestamp: "2024-01-01T00:00:01Z",
    validator_address: hexOf(VALIDATORS[0]?.address ?? new Uint8Array()),
    validator_index: 0,
    signature: Buffer.alloc(64, 1).toString("base64"),
    extension: null,
    extension_signature: null,
  });
  return {
    type: "tendermint/DuplicateVoteEvidence",
    value: {
      vote_a: vote("3", "CD".repeat(32)),
      vote_b: vote(heightB, "EF".repeat(32)),
      TotalVotingPower: "20",
      ValidatorPower: "10",
      Timestamp: "2024-01-01T00:00:03Z",
    },
  };
};

describe.each(TRANSPORTS)("comet rpc over %s", (transport: Transport) => {
  let f: FakeRpc;
  const call = (method: string, params: Parameters<FakeRpc["client"]["call"]>[2] = {}) =>
    f.client.call(transport, method, params);

  beforeAll(async () => {
    f = await startFakeRpc();
  });
  afterAll(() => f.close());

  test("default: health", async () => {
    expect(resultOf(await call("health"))).toEqual({});
  });

  test("default: status", async () => {
    const r = resultOf(await call("status"));
    expect(Object.keys(r)).toEqual(["node_info", "sync_info", "validator_info"]);
    expect(r.node_info).toMatchObject({
      protocol_version: { p2p: "8", block: "11", app: "1" },
      id: "dd".repeat(20),
      network: CHAIN_ID,
      version: "0.38.25",
      channels: "40202122233038606100",
      other: { tx_index: "on", rpc_address: "tcp://127.0.0.1:26657" },
    });
    expect(r.sync_info).toEqual({
      latest_block_hash: hexOf(blockIdAt(6).hash),
      latest_app_hash: hexOf(sha256("app:5")),
      latest_block_height: "6",
      latest_block_time: "2024-01-01T00:00:06.1Z",
      earliest_block_hash: hexOf(blockIdAt(1).hash),
      earliest_app_hash: hexOf(sha256("app:0")),
      earliest_block_height: "1",
      earliest_block_time: "2024-01-01T00:00:01.1Z",
      catching_up: false,
    });
    expect(r.validator_info.voting_power).toBe("10");
    expect(r.validator_info.pub_key.type).toBe("tendermint/PubKeyEd25519");
    expect(r.validator_info.address).toMatch(/^[0-9A-F]{40}$/);
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
    expect(r.last_height).toBe("6");
    expect(r.block_metas.map((m: { header: { height: string } }) => m.header.height)).toEqual([
      "6",
      "5",
      "4",
      "3",
      "2",
      "1",
    ]);
    expect(r.block_metas[2]).toMatchObject({ block_size: "504", num_txs: "1" });
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
    expect(r.genesis.validators[0]).toMatchObject({ power: "10", name: "val0" });
    expect(r.genesis.app_state.accounts[0].name).toBe("<alice>");
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
    expect(r.block_id).toEqual({
      hash: hexOf(blockIdAt(6).hash),
      parts: { total: 1, hash: hexOf(blockIdAt(6).partSetHeader.hash) },
    });
    expect(Object.keys(r.block)).toEqual(["header", "data", "evidence", "last_commit"]);
    expect(r.block.header.height).toBe("6");
    expect(r.block.header.version).toEqual({ block: "11", app: "1" });
    expect(r.block.data).toEqual({ txs: [] });
    expect(r.block.evidence).toEqual({ evidence: [] });
  });

  test("args: block height with txs", async () => {
    const r = resultOf(await call("block", { height: arg.int(2) }));
    expect(r.block.data.txs).toEqual((TXS_BY_HEIGHT[2] ?? []).map((t) => Buffer.from(t).toString("base64")));
    expect(r.block.header.version).toEqual({ block: "11" });
    expect(r.block.last_commit.signatures[2]).toEqual({
      block_id_flag: 1,
      validator_address: "",
      timestamp: "0001-01-01T00:00:00Z",
      signature: null,
    });
    expect(r.block.last_commit.signatures[0]).toMatchObject({
      block_id_flag: 2,
      timestamp: "2024-01-01T00:00:01.101Z",
    });
  });

  test("args: block at the initial height", async () => {
    const r = resultOf(await call("block", { height: arg.int(1) }));
    expect(r.block.header.last_block_id).toEqual(ZERO_BLOCK_ID);
    expect(r.block.header.last_results_hash).toBe("");
    expect(r.block.last_commit).toEqual({ height: "0", round: 0, block_id: ZERO_BLOCK_ID, signatures: [] });
  });

  test("error: block heights", async () => {
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
      await call("block", { height: arg.int(7) }),
      transport,
      "height 7 must be less than or equal to the current blockchain height 6",
    );
    // URI: cmtjson checks the raw text for quotes first; JSON-RPC: the quoted string's content is not a number.
    expectParamsError(
      await call("block", { height: arg.raw("abc", "abc") }),
      transport,
      transport === "uri" ? /invalid 64-bit integer encoding "abc", expected string/ : /invalid character 'a'/,
    );
  });

  test("default: block_by_hash", async () => {
    const r = resultOf(await call("block_by_hash", { hash: arg.bytes(blockIdAt(3).hash) }));
    expect(r.block.header.height).toBe("3");
    expect(r.block_id.hash).toBe(hexOf(blockIdAt(3).hash));
    const missing = resultOf(await call("block_by_hash", { hash: arg.bytes(sha256("nope")) }));
    expect(missing).toEqual({ block_id: ZERO_BLOCK_ID, block: null });
  });

  test("default: block_results", async () => {
    const r = resultOf(await call("block_results", { height: arg.int(2) }));
    expect(Object.keys(r)).toEqual([
      "height",
      "txs_results",
      "finalize_block_events",
      "validator_updates",
      "consensus_param_updates",
      "app_hash",
    ]);
    expect(r.height).toBe("2");
    expect(r.txs_results[0]).toEqual({
      code: 0,
      data: null,
      log: "",
      info: "",
      gas_wanted: "10",
      gas_used: "1",
      events: [
        {
          type: "app",
          attributes: [
            { key: "creator", value: "Cosmoshi Netowoko", index: true },
            { key: "key", value: "name", index: true },
            { key: "noindex_key", value: "x", index: false },
          ],
        },
      ],
      codespace: "",
    });
    expect(r.txs_results[1].data).toBe("b2s=");
    expect(r.validator_updates).toBeNull();
    expect(r.consensus_param_updates).toBeNull();
    const r3 = resultOf(await call("block_results", { height: arg.int(3) }));
    expect(r3.txs_results).toBeNull();
    expect(r3.validator_updates[0].power).toBe("7");
    expect(r3.validator_updates[0].pub_key.Sum.type).toBe("tendermint.crypto.PublicKey_Ed25519");
    expect(r3.consensus_param_updates.block).toEqual({ max_bytes: "22020096", max_gas: "-1" });
    expect(r3.consensus_param_updates.version).toEqual({});
    expectInternalError(
      await call("block_results", { height: arg.int(1) }),
      transport,
      "could not find results for height #1",
    );
  });

  test("default: commit", async () => {
    const latest = resultOf(await call("commit"));
    expect(latest.canonical).toBe(false);
    expect(latest.signed_header.header.height).toBe("6");
    expect(latest.signed_header.commit.height).toBe("6");
    const older = resultOf(await call("commit", { height: arg.int(5) }));
    expect(older.canonical).toBe(true);
    expect(older.signed_header.commit.block_id.hash).toBe(hexOf(blockIdAt(5).hash));
  });

  test("default: header and header_by_hash", async () => {
    const h = resultOf(await call("header", { height: arg.int(4) }));
    expect(h.header.height).toBe("4");
    const byHash = resultOf(await call("header_by_hash", { hash: arg.hex(blockIdAt(4).hash) }));
    expect(byHash).toEqual(h);
    expect(resultOf(await call("header_by_hash", { hash: arg.hex(sha256("x")) }))).toEqual({ header: null });
  });

  test("default: check_tx", async () => {
    expect(resultOf(await call("check_tx", { tx: arg.bytes(Buffer.from("hello")) }))).toEqual({
      code: 0,
      data: "q80=",
      log: "",
      info: "",
      gas_wanted: "1",
      gas_used: "0",
      events: [],
      codespace: "",
    });
  });

  test("default: tx with proof", async () => {
    const tx = Buffer.from("creator=Cosmoshi");
    const r = resultOf(await call("tx", { hash: arg.bytes(sha256(tx)), prove: arg.bool(true) }));
    expect(Object.keys(r)).toEqual(["hash", "height", "index", "tx_result", "tx", "proof"]);
    expect(r).toMatchObject({ hash: hexOf(sha256(tx)), height: "2", index: 1, tx: tx.toString("base64") });
    expect(r.proof.data).toBe(tx.toString("base64"));
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
    const r = resultOf(await call("tx_search", { query: arg.str("tx.height=2") }));
    expect(r.total_count).toBe("2");
    expect(r.txs.map((t: { index: number }) => t.index)).toEqual([0, 1]);
    const desc = resultOf(await call("tx_search", { query: arg.str("tx.height>1"), order_by: arg.str("desc") }));
    expect(desc.txs.map((t: { height: string }) => t.height)).toEqual(["4", "2", "2"]);
    const paged = resultOf(
      await call("tx_search", { query: arg.str("tx.height>1"), page: arg.int(2), per_page: arg.int(1) }),
    );
    expect(paged.total_count).toBe("3");
    expect(paged.txs).toHaveLength(1);
    expect(paged.txs[0]).toMatchObject({ height: "2", index: 1 });
    const byCreator = resultOf(await call("tx_search", { query: arg.str("app.creator='Cosmoshi Netowoko'") }));
    expect(byCreator.total_count).toBe("3");
    const noIndex = resultOf(await call("tx_search", { query: arg.str("app.noindex_key='x'") }));
    expect(noIndex).toEqual({ txs: [], total_count: "0" });
  });

  test("error: tx_search", async () => {
    expectInternalError(
      await call("tx_search", { query: arg.str("tx.height>1"), page: arg.int(5), per_page: arg.int(1) }),
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
    const r = resultOf(await call("block_search", { query: arg.str("block.height>3") }));
    expect(r.total_count).toBe("3");
    expect(r.blocks.map((b: { block: { header: { height: string } } }) => b.block.header.height)).toEqual([
      "6",
      "5",
      "4",
    ]);
    expect(Object.keys(r.blocks[0])).toEqual(["block_id", "block"]);
  });

  test("default: validators are the next height's set", async () => {
    const r = resultOf(await call("validators"));
    expect(r.block_height).toBe("7");
    expect(r.count).toBe("3");
    expect(r.total).toBe("3");
    expect(r.validators[0]).toEqual({
      address: hexOf(VALIDATORS[0]?.address ?? new Uint8Array()),
      pub_key: {
        type: "tendermint/PubKeyEd25519",
        value: Buffer.from(VALIDATORS[0]?.pubKey.bytes ?? []).toString("base64"),
      },
      voting_power: "10",
      proposer_priority: "-5",
    });
    const page2 = resultOf(await call("validators", { height: arg.int(3), page: arg.int(2), per_page: arg.int(2) }));
    expect(page2).toMatchObject({ block_height: "3", count: "1", total: "3" });
    expectInternalError(
      await call("validators", { height: arg.int(8) }),
      transport,
      "height 8 must be less than or equal to the current blockchain height 7",
    );
  });

  test("default: dump_consensus_state (fields as the OpenAPI document has them)", async () => {
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
    expect(rs).toMatchObject({ height: "7", round: 0, step: 1, locked_round: -1, valid_round: "-1", commit_round: -1 });
    expect(rs.votes).toEqual([
      {
        round: "0",
        prevotes: ["nil-Vote", "nil-Vote", "nil-Vote"],
        prevotes_bit_array: "BA{3:___} 0/20 = 0.00",
        precommits: ["nil-Vote", "nil-Vote", "nil-Vote"],
        precommits_bit_array: "BA{3:___} 0/20 = 0.00",
      },
    ]);
    expect(rs.last_commit.votes_bit_array).toBe("BA{3:xx_} 15/20 = 0.75");
    expect(rs.last_commit.votes[0]).toMatch(
      /^Vote\{0:[0-9A-F]{12} 6\/00\/SIGNED_MSG_TYPE_PRECOMMIT\(Precommit\) [0-9A-F]{12} [0-9A-F]{12} 000000000000 @ 2024-01-01T00:00:06.101Z\}$/,
    );
    expect(rs.last_commit.peer_maj_23s["aa".repeat(20)].hash).toBe(hexOf(blockIdAt(6).hash));
    expect(rs.validators.proposer).toBeTypeOf("object");
    const peer = r.peers[0];
    expect(peer.node_address).toBe(`${"bb".repeat(20)}@127.0.0.1:26656`);
    expect(peer.peer_state.round_state).toMatchObject({
      height: "7",
      round: "0",
      step: 3,
      proposal: false,
      proposal_block_parts_header: { total: 0, hash: "" },
      proposal_pol_round: -1,
      proposal_pol: null,
      prevotes: "x__",
      last_commit: "xx_",
      catchup_commit: null,
    });
    expect(peer.peer_state.stats).toEqual({ votes: "12", block_parts: "3" });
    expect(r.peers[1]).toEqual({ node_address: "", peer_state: null });
  });

  test("default: consensus_state", async () => {
    const r = resultOf(await call("consensus_state"));
    expect(r.round_state["height/round/step"]).toBe("7/0/1");
    expect(r.round_state.proposal_block_hash).toBe("");
    expect(r.round_state.height_vote_set[0].round).toBe(0);
    expect(r.round_state.proposer.index).toBeTypeOf("number");
  });

  test("default: consensus_params", async () => {
    const r = resultOf(await call("consensus_params"));
    expect(r.block_height).toBe("7");
    expect(r.consensus_params.evidence.max_age_duration).toBe("172800000000000");
  });

  test("default: broadcast, unconfirmed and mempool errors", async () => {
    const tx = Buffer.from(`tx-${transport}`);
    const sync = resultOf(await call("broadcast_tx_sync", { tx: arg.bytes(tx) }));
    expect(sync).toEqual({ code: 0, data: "ABCD", log: "", codespace: "", hash: hexOf(sha256(tx)) });
    expectInternalError(
      await call("broadcast_tx_sync", { tx: arg.bytes(tx) }),
      transport,
      "tx already exists in cache",
    );
    const bad = resultOf(await call("broadcast_tx_sync", { tx: arg.bytes(Buffer.from(`bad-${transport}`)) }));
    expect(bad).toMatchObject({ code: 1, data: "", log: "bad tx", codespace: "app" });
    const tx2 = Buffer.from(`async-${transport}`);
    expect(resultOf(await call("broadcast_tx_async", { tx: arg.bytes(tx2) }))).toEqual({
      code: 0,
      data: "",
      log: "",
      codespace: "",
      hash: hexOf(sha256(tx2)),
    });
    expectInternalError(
      await call("broadcast_tx_async", { tx: arg.bytes(tx2) }),
      transport,
      "tx already exists in cache",
    );
    const un = resultOf(await call("unconfirmed_txs", { limit: arg.int(1) }));
    expect(un.n_txs).toBe("1");
    expect(Number(un.total)).toBeGreaterThanOrEqual(2);
    const num = resultOf(await call("num_unconfirmed_txs"));
    expect(num.txs).toBeNull();
    expect(num.n_txs).toBe(num.total);
  });

  test("default: broadcast_tx_commit waits for the Tx event", async () => {
    const tx = Buffer.from(`commit-${transport}`);
    const pending = call("broadcast_tx_commit", { tx: arg.bytes(tx) });
    setTimeout(() => f.node.includeTx(tx, 9), 100);
    const r = resultOf(await pending);
    expect(Object.keys(r)).toEqual(["check_tx", "tx_result", "hash", "height"]);
    expect(r.height).toBe("9");
    expect(r.hash).toBe(hexOf(sha256(tx)));
    expect(r.check_tx.code).toBe(0);
    expect(r.tx_result.events[0].type).toBe("app");
    const bad = resultOf(await call("broadcast_tx_commit", { tx: arg.bytes(Buffer.from(`bad-commit-${transport}`)) }));
    expect(bad.height).toBe("0");
    expect(bad.check_tx.code).toBe(1);
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
    expect(f.node.bus.numClients()).toBe(0);
  });

  test("default: abci_info and abci_query", async () => {
    expect(resultOf(await call("abci_info"))).toEqual({
      response: {
        data: "fake-app",
        version: "1.0.0",
        app_version: "1",
        last_block_height: "6",
        last_block_app_hash: Buffer.from(sha256("app:6")).toString("base64"),
      },
    });
    const q = resultOf(
      await call("abci_query", {
        path: arg.str("/store"),
        data: arg.hex(Buffer.from([0xab, 0xcd])),
        height: arg.int(0),
        prove: arg.bool(true),
      }),
    );
    expect(q.response).toEqual({
      code: 0,
      log: "exists",
      info: "",
      index: "0",
      key: "q80=",
      value: "dmFsdWU=",
      proofOps: { ops: [{ type: "ics23", key: "q80=", data: "cHJvb2Y=" }] },
      height: "6",
      codespace: "",
    });
    const missing = resultOf(await call("abci_query", { path: arg.str("/missing") }));
    expect(missing.response).toMatchObject({ code: 1, key: null, value: null, proofOps: null });
  });

  test("default: broadcast_evidence", async () => {
    const ev = duplicateVoteEvidence("3");
    const r = resultOf(await call("broadcast_evidence", { evidence: arg.raw(ev, JSON.stringify(ev)) }));
    expect(r).toEqual({ hash: Buffer.from(sha256("evidence:3")).toString("base64") });
    expect(f.node.evidenceAdded.at(-1)?.voteA.height).toBe(3);
    const bad = duplicateVoteEvidence("4");
    expectInternalError(
      await call("broadcast_evidence", { evidence: arg.raw(bad, JSON.stringify(bad)) }),
      transport,
      "evidence.ValidateBasic failed: votes are for different heights",
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

describe.each(TRANSPORTS)("unsafe routes and disabled indexer over %s", (transport: Transport) => {
  let f: FakeRpc;
  beforeAll(async () => {
    f = await startFakeRpc({ unsafe: true }, { txIndex: false });
  });
  afterAll(() => f.close());

  test("args: dial_seeds, dial_peers, unsafe_flush_mempool", async () => {
    const seeds = ["aa@1.2.3.4:26656"];
    expect(
      resultOf(await f.client.call(transport, "dial_seeds", { seeds: arg.raw(seeds, JSON.stringify(seeds)) })),
    ).toEqual({ log: "Dialing seeds in progress. See /net_info for details" });
    expectInternalError(await f.client.call(transport, "dial_seeds", {}), transport, "no seeds provided");
    expect(
      resultOf(
        await f.client.call(transport, "dial_peers", {
          peers: arg.raw(seeds, JSON.stringify(seeds)),
          persistent: arg.bool(true),
        }),
      ),
    ).toEqual({ log: "Dialing peers in progress. See /net_info for details" });
    expectInternalError(
      await f.client.call(transport, "dial_peers", { peers: arg.raw(["nope"], '["nope"]') }),
      transport,
      "address (nope) does not contain ID",
    );
    expect(resultOf(await f.client.call(transport, "unsafe_flush_mempool"))).toEqual({});
  });

  test("error: indexing disabled", async () => {
    expectInternalError(
      await f.client.call(transport, "tx", { hash: arg.bytes(sha256("x")) }),
      transport,
      "transaction indexing is disabled",
    );
    expectInternalError(
      await f.client.call(transport, "tx_search", { query: arg.str("tx.height=1") }),
      transport,
      "transaction indexing is disabled",
    );
    expectInternalError(
      await f.client.call(transport, "block_search", { query: arg.str("block.height=1") }),
      transport,
      "block indexing is disabled",
    );
  });
});

test("behavior: broadcast_tx_commit times out", async () => {
  const f = await startFakeRpc({ timeoutBroadcastTxCommitMs: 150 });
  try {
    const reply = await f.client.call("http", "broadcast_tx_commit", { tx: arg.bytes(Buffer.from("never")) });
    expectInternalError(reply, "http", "timed out waiting for tx to be included in a block");
    expect(f.node.bus.numClients()).toBe(0);
  } finally {
    await f.close();
  }
});

describe.each(TRANSPORTS)("an empty chain over %s", (transport: Transport) => {
  let f: FakeRpc;
  beforeAll(async () => {
    f = await startFakeRpc(
      {},
      {
        customize: (node) => {
          const blocks = node.services.blocks;
          node.services.blocks = {
            ...blocks,
            base: () => 0,
            height: () => 0,
            loadBlock: () => undefined,
            loadBlockMeta: () => undefined,
          };
        },
      },
    );
  });
  afterAll(() => f.close());

  test("default: status, block and commit before the first block", async () => {
    const s = resultOf(await f.client.call(transport, "status"));
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
    expect(resultOf(await f.client.call(transport, "block"))).toEqual({ block_id: ZERO_BLOCK_ID, block: null });
    expect(resultOf(await f.client.call(transport, "commit"))).toBeNull();
    expect(resultOf(await f.client.call(transport, "header"))).toEqual({ header: null });
    expect(resultOf(await f.client.call(transport, "validators")).block_height).toBe("1");
    expectInternalError(
      await f.client.call(transport, "blockchain"),
      transport,
      "min height 1 can't be greater than max height 0",
    );
  });
});

test("behavior: LATEST_HEIGHT fixture sanity", () => {
  expect(LATEST_HEIGHT).toBe(6);
});

describe("status answer reuse", () => {
  test("behavior: the kept status answer is rebuilt when the chain moves", async () => {
    const { cometRoutes } = await import("./routes.js");
    const { createFakeNode } = await import("./testing/fakeServices.js");
    const { encodeJson } = await import("../jsonrpc/index.js");
    const node = createFakeNode();
    let height = LATEST_HEIGHT - 1;
    const services = { ...node.services, blocks: { ...node.services.blocks, height: () => height } };
    const status = cometRoutes.status;
    if (status === undefined) throw new Error("no status route");
    const run = () => JSON.parse(encodeJson(status.run({}, services, {} as never) as never));
    const first = run();
    expect(first.sync_info.latest_block_height).toBe(String(LATEST_HEIGHT - 1));
    expect(run()).toEqual(first);
    height = LATEST_HEIGHT;
    const second = run();
    expect(second.sync_info.latest_block_height).toBe(String(LATEST_HEIGHT));
    expect(second.sync_info.latest_block_hash).toBe(hexOf(blockIdAt(LATEST_HEIGHT).hash));
  });
});

describe("block answer reuse", () => {
  test("behavior: a kept block answer is the block of the height asked", async () => {
    const { cometRoutes } = await import("./routes.js");
    const { createFakeNode } = await import("./testing/fakeServices.js");
    const { encodeJson } = await import("../jsonrpc/index.js");
    const node = createFakeNode();
    const block = cometRoutes.block;
    if (block === undefined) throw new Error("no block route");
    const at = (h: number) =>
      JSON.parse(encodeJson(block.run({ height: BigInt(h) }, node.services, {} as never) as never));
    for (const h of [3, 4, 3, 4]) {
      const r = at(h);
      expect(r.block.header.height).toBe(String(h));
      expect(r.block_id.hash).toBe(hexOf(blockIdAt(h).hash));
    }
  });
});
