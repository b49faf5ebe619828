import { describe, expect, test } from "vitest";
import type { Peer, ReactorSwitch } from "../p2p/reactor.js";
import { openMemoryKvStore } from "../store/index.js";
import { type Evidence, generateEd25519PrivKey } from "../types/index.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { InvalidEvidenceMessageError, InvalidEvidenceSubmissionError } from "./errors.js";
import { EvidencePool } from "./evidencePool.js";
import {
  decodeEvidenceListMessage,
  EVIDENCE_CHANNEL,
  EvidenceReactor,
  encodeEvidenceListMessage,
} from "./evidenceReactor.js";
import { FakeChain } from "./testing/fakeChain.js";

interface FakePeer extends Peer {
  /** Evidence received per message, decoded. */
  received: Evidence[][];
  /** While set, the channel's send queue is full: trySend refuses. */
  full: boolean;
}

function fakePeer(id: string): FakePeer {
  const data = new Map<string, unknown>();
  const received: Evidence[][] = [];
  const peer: FakePeer = {
    id,
    received,
    full: false,
    nodeInfo: {
      protocolVersion: { p2p: 8n, block: 11n, app: 0n },
      id,
      listenAddr: "127.0.0.1:0",
      network: "evidence-test-chain",
      version: "0.38.0",
      channels: Uint8Array.of(EVIDENCE_CHANNEL),
      moniker: id,
      other: { txIndex: "on", rpcAddress: "" },
    },
    isOutbound: true,
    isPersistent: false,
    remoteHost: "127.0.0.1",
    remotePort: 1,
    socketAddr: { id, host: "127.0.0.1", port: 1 },
    send: () => {
      throw new RangeError("the reactor must not wait on a peer's queue");
    },
    trySend: (channelId, msg) => {
      expect(channelId).toBe(EVIDENCE_CHANNEL);
      if (peer.full) return false;
      received.push(decodeEvidenceListMessage(msg));
      return true;
    },
    isRunning: () => true,
    status: () => {
      throw new RangeError("not used");
    },
    get: (key) => data.get(key),
    set: (key, value) => {
      data.set(key, value);
    },
  };
  return peer;
}

function fakeSwitch(peers: FakePeer[]) {
  const stopped: { peer: string; reason: unknown }[] = [];
  let onStop: (() => void) | undefined;
  const sw: ReactorSwitch = {
    peers: () => peers,
    peer: (id) => peers.find((p) => p.id === id),
    broadcast: () => {},
    stopPeerForError: (peer, reason) => {
      stopped.push({ peer: peer.id, reason });
      onStop?.();
    },
    nodeId: () => "self",
  };
  const nextStop = () =>
    new Promise<void>((resolve) => {
      onStop = resolve;
    });
  return { sw, stopped, nextStop };
}

function setup(opts: { peerHeight?: (peer: Peer) => number | undefined } = {}) {
  const chain = new FakeChain(4);
  chain.advanceTo(10);
  const pool = new EvidencePool({
    db: openMemoryKvStore(),
    stateStore: chain.stateStore,
    blockStore: chain.blockStore,
    log: silentLogger(),
  });
  const clock = new ManualClock();
  const reactor = new EvidenceReactor(pool, {
    broadcastIntervalMs: 1000,
    clock,
    log: silentLogger(),
    ...(opts.peerHeight === undefined ? {} : { peerHeight: opts.peerHeight }),
  });
  const peers = [fakePeer("a"), fakePeer("b")];
  const sw = fakeSwitch(peers);
  reactor.start(sw.sw);
  const added = () =>
    new Promise<Evidence>((resolve) => {
      const off = pool.onEvidenceAdded((ev) => {
        off();
        resolve(ev);
      });
    });
  return { chain, pool, clock, reactor, peers, ...sw, added };
}

/** Lets queued sends (promise callbacks) run. */
const tick = () => new Promise((r) => setImmediate(r));

describe("EvidenceReactor", () => {
  test("default: channel 0x38, priority 6, 1 MB messages", () => {
    const { reactor } = setup();
    expect(reactor.channels()).toEqual([
      { id: 0x38, priority: 6, sendQueueCapacity: 1, recvMessageCapacity: 1_048_576, name: "evidence" },
    ]);
    reactor.stop();
  });

  test("behavior: a peer whose queue is full gets the evidence on a later interval, with nothing left waiting", async () => {
    const { chain, pool, clock, reactor, peers } = setup();
    const [a] = peers as [FakePeer, FakePeer];
    a.full = true;
    reactor.addPeer(a);
    const ev = chain.evidence(1, 5);
    await pool.addEvidence(ev);
    await tick();
    clock.advance(1000);
    await tick();
    expect(a.received).toEqual([]);
    a.full = false;
    clock.advance(1000);
    await tick();
    expect(a.received).toEqual([[ev]]);
    reactor.stop();
  });

  test("behavior: a new peer gets the pending evidence; new evidence goes to every peer once per interval", async () => {
    const { chain, pool, clock, reactor, peers } = setup();
    const [a, b] = peers as [FakePeer, FakePeer];
    const ev1 = chain.evidence(1, 5);
    await pool.addEvidence(ev1);
    reactor.addPeer(a);
    await tick();
    expect(a.received).toEqual([[ev1]]);

    reactor.addPeer(b);
    const ev2 = chain.evidence(2, 6);
    await pool.addEvidence(ev2);
    await tick();
    expect(a.received).toEqual([[ev1], [ev2]]);
    expect(b.received).toEqual([[ev1], [ev2]]);

    // Nothing new: nothing sent until the interval passes, then all pending evidence again.
    clock.advance(999);
    await tick();
    expect(a.received).toHaveLength(2);
    clock.advance(1);
    await tick();
    expect(a.received).toEqual([[ev1], [ev2], [ev1], [ev2]]);

    // Committed evidence is no longer offered.
    await pool.update(chain.advanceTo(11), [ev1, ev2]);
    clock.advance(1000);
    await tick();
    expect(a.received).toHaveLength(4);
    reactor.stop();
  });

  test("behavior: evidence from a peer is added and relayed to the others, not echoed", async () => {
    const { chain, pool, reactor, peers, added } = setup();
    const [a, b] = peers as [FakePeer, FakePeer];
    reactor.addPeer(a);
    reactor.addPeer(b);
    const ev = chain.evidence(3, 7);
    const done = added();
    reactor.receive(EVIDENCE_CHANNEL, a, encodeEvidenceListMessage([ev]));
    expect(await done).toEqual(ev);
    await tick();
    expect(pool.isPending(ev)).toBe(true);
    expect(a.received).toEqual([]);
    expect(b.received).toEqual([[ev]]);
    reactor.stop();
  });

  test("error: an undecodable or malformed message throws (the switch stops the peer)", () => {
    const { chain, reactor, peers } = setup();
    const a = peers[0] as FakePeer;
    reactor.addPeer(a);
    expect(() => reactor.receive(EVIDENCE_CHANNEL, a, Uint8Array.of(0x0a, 0x05, 0x01))).toThrow(
      InvalidEvidenceMessageError,
    );
    const ev = chain.evidence(1, 5);
    const swapped = { ...ev, voteA: ev.voteB, voteB: ev.voteA };
    expect(() => reactor.receive(EVIDENCE_CHANNEL, a, encodeEvidenceListMessage([swapped]))).toThrow(
      /^invalid evidence \(#0\): duplicate votes in invalid order$/,
    );
    reactor.stop();
  });

  test("error: evidence that fails verification stops the peer", async () => {
    const { chain, pool, reactor, peers, stopped, nextStop } = setup();
    const a = peers[0] as FakePeer;
    reactor.addPeer(a);
    const ev = chain.evidence(1, 5);
    const forged = { ...ev, voteB: chain.vote(1, 5, ev.voteB.blockId, { key: generateEd25519PrivKey() }) };
    const stop = nextStop();
    reactor.receive(EVIDENCE_CHANNEL, a, encodeEvidenceListMessage([forged]));
    await stop;
    expect(stopped).toHaveLength(1);
    expect(stopped[0]?.reason).toBeInstanceOf(InvalidEvidenceSubmissionError);
    expect(pool.size()).toBe(0);
    reactor.stop();
  });

  test("behavior: evidence from a height above this node's is ignored, not punished", async () => {
    const { chain, pool, reactor, peers, stopped } = setup();
    const a = peers[0] as FakePeer;
    reactor.addPeer(a);
    const ahead = new FakeChain(4);
    ahead.advanceTo(20);
    reactor.receive(EVIDENCE_CHANNEL, a, encodeEvidenceListMessage([ahead.evidence(1, 15)]));
    await tick();
    await pool.flush();
    expect(stopped).toEqual([]);
    expect(pool.size()).toBe(0);
    expect(chain.state.lastBlockHeight).toBe(10);
    reactor.stop();
  });

  test("args: peerHeight holds evidence back until the peer is past its height", async () => {
    let height = 5;
    const { chain, pool, clock, reactor, peers } = setup({ peerHeight: () => height });
    const a = peers[0] as FakePeer;
    reactor.addPeer(a);
    await pool.addEvidence(chain.evidence(1, 5));
    await tick();
    expect(a.received).toEqual([]);
    height = 6;
    clock.advance(1000);
    await tick();
    expect(a.received).toHaveLength(1);
    reactor.stop();
  });
});
