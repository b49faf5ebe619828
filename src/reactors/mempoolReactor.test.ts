import { describe, expect, test } from "vitest";
import { Mempool } from "../mempool/index.js";
import type { CheckTxRequest, CheckTxResponse } from "../types/index.js";
import { bytesToUtf8, utf8ToBytes } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import { InvalidMempoolMessageError } from "./errors.js";
import { decodeMempoolTxs, encodeMempoolTxs } from "./mempoolCodec.js";
import { MEMPOOL_CHANNEL, MempoolReactor } from "./mempoolReactor.js";
import { FakePeer, FakeSwitch } from "./testing/fakeP2p.js";

function response(code: number): CheckTxResponse {
  return { code, data: new Uint8Array(), log: "", info: "", gasWanted: 1n, gasUsed: 0n, events: [], codespace: "" };
}

function setup(opts: { broadcast?: boolean; peers?: number } = {}) {
  const invalid = new Set<string>();
  const app = {
    async checkTx(req: CheckTxRequest): Promise<CheckTxResponse> {
      return response(invalid.has(bytesToUtf8(req.tx)) ? 1 : 0);
    },
  };
  const mempool = new Mempool(
    { size: 100, maxTxsBytes: 1 << 20, maxTxBytes: 1024, cacheSize: 100, keepInvalidTxsInCache: false, recheck: false },
    { app, log: silentLogger() },
  );
  const reactor = new MempoolReactor(mempool, { broadcast: opts.broadcast ?? true, maxTxBytes: 1024 }, silentLogger());
  const sw = new FakeSwitch();
  reactor.start(sw);
  const peers = Array.from({ length: opts.peers ?? 3 }, (_, i) => new FakePeer(`peer${i}`));
  for (const p of peers) reactor.addPeer(p);
  return { invalid, mempool, reactor, peers };
}

/** The txs each peer was sent, as text. */
function sentTxs(peers: FakePeer[]): string[][] {
  return peers.map((p) =>
    p.sent.flatMap((s) => {
      expect(s.channel).toBe(MEMPOOL_CHANNEL);
      return decodeMempoolTxs(s.bytes).map(bytesToUtf8);
    }),
  );
}

const msg = (...txs: string[]) => encodeMempoolTxs(txs.map(utf8ToBytes));

describe("MempoolReactor", () => {
  test("default: channel 0x30, priority 5, sized for one max_tx_bytes tx", () => {
    const { reactor } = setup();
    expect(reactor.channels()).toEqual([
      {
        id: 0x30,
        priority: 5,
        sendQueueCapacity: 1,
        recvMessageCapacity: encodeMempoolTxs([new Uint8Array(1024)]).length,
        name: "mempool",
      },
    ]);
  });

  test("behavior: a tx from a peer is checked and relayed to every other peer", async () => {
    const { mempool, reactor, peers } = setup();
    reactor.receive(MEMPOOL_CHANNEL, peers[0] as FakePeer, msg("a", "b"));
    await reactor.idle();
    expect(mempool.txs().map(bytesToUtf8)).toEqual(["a", "b"]);
    expect(sentTxs(peers)).toEqual([[], ["a", "b"], ["a", "b"]]);
  });

  test("behavior: a tx admitted from RPC goes to every peer", async () => {
    const { mempool, peers } = setup();
    await mempool.checkTx(utf8ToBytes("rpc"));
    expect(sentTxs(peers)).toEqual([["rpc"], ["rpc"], ["rpc"]]);
  });

  test("behavior: invalid and duplicate txs from peers are dropped quietly, and not relayed", async () => {
    const { invalid, mempool, reactor, peers } = setup();
    invalid.add("bad");
    await mempool.checkTx(utf8ToBytes("dup"));
    reactor.receive(MEMPOOL_CHANNEL, peers[1] as FakePeer, msg("bad", "dup"));
    await reactor.idle();
    expect(mempool.txs().map(bytesToUtf8)).toEqual(["dup"]);
    expect(sentTxs(peers)).toEqual([["dup"], ["dup"], ["dup"]]);
  });

  test("args: broadcast=false admits peer txs but relays nothing", async () => {
    const { mempool, reactor, peers } = setup({ broadcast: false });
    reactor.receive(MEMPOOL_CHANNEL, peers[0] as FakePeer, msg("a"));
    await reactor.idle();
    await mempool.checkTx(utf8ToBytes("rpc"));
    reactor.addPeer(new FakePeer("late"));
    expect(mempool.size()).toBe(2);
    expect(sentTxs(peers)).toEqual([[], [], []]);
  });

  test("behavior: a new peer gets the txs already in the mempool, except the ones it sent", async () => {
    const { mempool, reactor, peers } = setup({ peers: 1 });
    const p0 = peers[0] as FakePeer;
    reactor.receive(MEMPOOL_CHANNEL, p0, msg("from-p0"));
    await reactor.idle();
    await mempool.checkTx(utf8ToBytes("rpc"));
    reactor.removePeer(p0, undefined);
    const again = new FakePeer("peer0");
    const other = new FakePeer("other");
    reactor.addPeer(again);
    reactor.addPeer(other);
    expect(sentTxs([again, other])).toEqual([["rpc"], ["from-p0", "rpc"]]);
  });

  test("behavior: txs wait in order while a peer's queue is full", async () => {
    const { mempool, peers } = setup({ peers: 1 });
    const p0 = peers[0] as FakePeer;
    p0.setFull(true);
    for (const t of ["1", "2", "3"]) await mempool.checkTx(utf8ToBytes(t));
    expect(p0.sent).toHaveLength(0);
    p0.setFull(false);
    await new Promise((r) => setImmediate(r));
    expect(sentTxs([p0])).toEqual([["1", "2", "3"]]);
  });

  test("behavior: an empty Txs message is ignored", async () => {
    const { mempool, reactor, peers } = setup();
    reactor.receive(MEMPOOL_CHANNEL, peers[0] as FakePeer, msg());
    await reactor.idle();
    expect(mempool.size()).toBe(0);
  });

  test("error: bytes that are not a mempool message throw (the switch stops the peer)", () => {
    const { reactor, peers } = setup();
    expect(() => reactor.receive(MEMPOOL_CHANNEL, peers[0] as FakePeer, Uint8Array.of(0x0a, 0x09))).toThrow(
      InvalidMempoolMessageError,
    );
  });

  test("behavior: nothing is relayed after stop", async () => {
    const { mempool, reactor, peers } = setup();
    reactor.stop();
    await mempool.checkTx(utf8ToBytes("late"));
    expect(sentTxs(peers)).toEqual([[], [], []]);
  });
});
