import { describe, expect, test } from "vitest";
import type { ConsensusMessage } from "../consensus/index.js";
import { BitArray, type ChainState, defaultConsensusParams, SIGNED_MSG_TYPE } from "../types/index.js";
import { bytesToHex } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import { decodeConsensusMessage, encodeConsensusMessage } from "./consensusCodec.js";
import {
  CONSENSUS_CHANNEL,
  CONSENSUS_MESSAGE_CHANNEL,
  type ConsensusPort,
  ConsensusReactor,
  peerNodeAddress,
} from "./consensusReactor.js";
import { InvalidConsensusMessageError } from "./errors.js";
import { FakePeer, FakeSwitch } from "./testing/fakeP2p.js";
import { comparable, everyKind, makeProposal, makeVote } from "./testing/fixtures.js";

/** Records what the reactor hands to consensus. */
class FakeConsensus implements ConsensusPort {
  readonly received: { peer: string; msg: ConsensusMessage }[] = [];
  readonly added: { peer: string; address: string | undefined }[] = [];
  readonly removed: string[] = [];
  state = { initialHeight: 1, consensusParams: defaultConsensusParams() } as ChainState;

  receivePeerMessage(peerId: string, msg: ConsensusMessage): void {
    this.received.push({ peer: peerId, msg });
  }
  addPeer(peerId: string, nodeAddress?: string): void {
    this.added.push({ peer: peerId, address: nodeAddress });
  }
  removePeer(peerId: string): void {
    this.removed.push(peerId);
  }
  chainState(): ChainState {
    return this.state;
  }
}

function setup(opts: { waitSync?: boolean; peers?: number } = {}) {
  const reactor = new ConsensusReactor(silentLogger());
  if (opts.waitSync === true) reactor.waitForSync();
  const sw = new FakeSwitch();
  reactor.start(sw);
  const peers = Array.from({ length: opts.peers ?? 2 }, (_, i) => new FakePeer(`peer${i}`, { port: 40_000 + i }));
  for (const p of peers) {
    sw.peerList.push(p);
    reactor.addPeer(p);
  }
  const cs = new FakeConsensus();
  reactor.setConsensus(cs);
  return { reactor, sw, peers, cs };
}

const nrs: ConsensusMessage = {
  kind: "newRoundStep",
  height: 5,
  round: 0,
  step: 1,
  secondsSinceStartTime: 3,
  lastCommitRound: 0,
};

describe("ConsensusReactor", () => {
  test("default: four channels with CometBFT's ids, priorities and capacities", () => {
    const r = new ConsensusReactor(silentLogger());
    expect(r.channels().map((c) => [c.id, c.priority, c.sendQueueCapacity, c.recvMessageCapacity])).toEqual([
      [0x20, 6, 100, 1_048_576],
      [0x21, 10, 100, 1_048_576],
      [0x22, 7, 100, 1_048_576],
      [0x23, 1, 2, 1_048_576],
    ]);
  });

  test("behavior: broadcast encodes once per message and sends each kind on its CometBFT channel", () => {
    const { reactor, peers } = setup();
    for (const msg of everyKind()) reactor.broadcast(msg);
    const expected: Record<ConsensusMessage["kind"], number> = {
      newRoundStep: 0x20,
      newValidBlock: 0x20,
      hasVote: 0x20,
      voteSetMaj23: 0x20,
      proposal: 0x21,
      proposalPol: 0x21,
      blockPart: 0x21,
      vote: 0x22,
      voteSetBits: 0x23,
    };
    expect(CONSENSUS_MESSAGE_CHANNEL).toEqual(expected);
    for (const peer of peers) {
      expect(peer.sent.map((s) => [decodeConsensusMessage(s.bytes).kind, s.channel])).toEqual(
        everyKind().map((m) => [m.kind, expected[m.kind]]),
      );
    }
    // The same bytes object went to both peers (encoded once).
    expect(peers[0]?.sent[0]?.bytes).toBe(peers[1]?.sent[0]?.bytes);
  });

  test("behavior: sendTo reaches only the named peer; unknown peers are ignored", () => {
    const { reactor, peers } = setup();
    const vote: ConsensusMessage = { kind: "vote", vote: makeVote() };
    reactor.sendTo("peer1", vote);
    reactor.sendTo("nobody", vote);
    expect(peers[0]?.sent).toHaveLength(0);
    expect(peers[1]?.sent.map((s) => s.channel)).toEqual([CONSENSUS_CHANNEL.vote]);
    expect(comparable(decodeConsensusMessage(peers[1]?.sent[0]?.bytes ?? new Uint8Array()))).toEqual(comparable(vote));
  });

  test("behavior: when a peer's queue is full, votes and parts wait in order instead of being dropped", async () => {
    const { reactor, peers } = setup({ peers: 1 });
    const peer = peers[0] as FakePeer;
    peer.setFull(true);
    const votes = [1, 2, 3].map((i): ConsensusMessage => ({ kind: "vote", vote: makeVote({ validatorIndex: i }) }));
    for (const v of votes) reactor.sendTo(peer.id, v);
    // VoteSetBits is sent with TrySend in CometBFT: dropped when the queue is full.
    reactor.sendTo(peer.id, {
      kind: "voteSetBits",
      height: 12,
      round: 0,
      type: SIGNED_MSG_TYPE.prevote,
      blockId: makeVote().blockId,
      votes: BitArray.fromIndices(4, [1]),
    });
    expect(peer.sent).toHaveLength(0);
    peer.setFull(false);
    // A message queued after the line formed must not overtake it.
    reactor.sendTo(peer.id, { kind: "vote", vote: makeVote({ validatorIndex: 4 }) });
    await new Promise((r) => setImmediate(r));
    const indexes = peer.sent.map((s) => {
      const m = decodeConsensusMessage(s.bytes);
      return m.kind === "vote" ? m.vote.validatorIndex : m.kind;
    });
    expect(indexes).toEqual([1, 2, 3, 4]);
    expect(peer.sent.every((s) => s.via === "send")).toBe(true);
  });

  test("behavior: receive decodes, checks the channel and hands the message to consensus", () => {
    const { reactor, peers, cs } = setup();
    const peer = peers[0] as FakePeer;
    for (const msg of everyKind()) {
      const m = msg.kind === "newRoundStep" ? nrs : msg;
      reactor.receive(CONSENSUS_MESSAGE_CHANNEL[m.kind], peer, encodeConsensusMessage(m));
    }
    expect(cs.received.map((r) => [r.peer, r.msg.kind])).toEqual(everyKind().map((m) => ["peer0", m.kind]));
    // A valid message on another kind's channel is logged and dropped (no punishment, as CometBFT).
    reactor.receive(CONSENSUS_CHANNEL.state, peer, encodeConsensusMessage({ kind: "vote", vote: makeVote() }));
    expect(cs.received).toHaveLength(everyKind().length);
  });

  test("error: undecodable or invalid bytes throw so the switch stops the peer", () => {
    const { reactor, peers, cs } = setup();
    const peer = peers[0] as FakePeer;
    expect(() => reactor.receive(CONSENSUS_CHANNEL.vote, peer, Uint8Array.of(0x32, 0xff))).toThrow(
      InvalidConsensusMessageError,
    );
    const bad = encodeConsensusMessage({ ...nrs, height: -1 } as ConsensusMessage);
    expect(() => reactor.receive(CONSENSUS_CHANNEL.state, peer, bad)).toThrow(/negative Height/);
    expect(cs.received).toHaveLength(0);
  });

  test("error: NewRoundStep below the initial height, or with a wrong last commit round", () => {
    const { reactor, peers, cs } = setup();
    const peer = peers[0] as FakePeer;
    cs.state = { ...cs.state, initialHeight: 10 };
    const send = (m: Partial<typeof nrs>) =>
      reactor.receive(CONSENSUS_CHANNEL.state, peer, encodeConsensusMessage({ ...nrs, ...m } as ConsensusMessage));
    expect(() => send({ height: 9 })).toThrow(/lower than initial height 10/);
    expect(() => send({ height: 10, lastCommitRound: 0 })).toThrow(/must be -1 for initial height 10/);
    expect(() => send({ height: 11, lastCommitRound: -1 })).toThrow(/can only be negative for initial height/);
    send({ height: 10, lastCommitRound: -1 });
    expect(cs.received).toHaveLength(1);
  });

  test("error: a proposal with more parts than block.max_bytes allows", () => {
    const { reactor, peers, cs } = setup();
    const params = defaultConsensusParams();
    cs.state = { ...cs.state, consensusParams: { ...params, block: { ...params.block, maxBytes: 65_537n } } };
    const proposal = (total: number) =>
      encodeConsensusMessage({
        kind: "proposal",
        proposal: makeProposal({
          blockId: { ...makeProposal().blockId, partSetHeader: { total, hash: new Uint8Array(32) } },
        }),
      });
    expect(() => reactor.receive(CONSENSUS_CHANNEL.data, peers[0] as FakePeer, proposal(3))).toThrow(
      /too many parts 3 \(max: 2\)/,
    );
    reactor.receive(CONSENSUS_CHANNEL.data, peers[0] as FakePeer, proposal(2));
    expect(cs.received).toHaveLength(1);
  });

  test("behavior: before setConsensus messages are dropped and peers remembered, then added", () => {
    const reactor = new ConsensusReactor(silentLogger());
    const sw = new FakeSwitch();
    reactor.start(sw);
    const a = new FakePeer("a", { host: "10.0.0.1", port: 5000 });
    const b = new FakePeer("b", { host: "::1", port: 6000 });
    const c = new FakePeer("c");
    for (const p of [a, b, c]) reactor.addPeer(p);
    reactor.removePeer(c, undefined);
    reactor.receive(CONSENSUS_CHANNEL.state, a, encodeConsensusMessage(nrs));
    // Bad bytes still throw before consensus exists.
    expect(() => reactor.receive(CONSENSUS_CHANNEL.state, a, Uint8Array.of(1))).toThrow(InvalidConsensusMessageError);
    const cs = new FakeConsensus();
    reactor.setConsensus(cs);
    expect(cs.added).toEqual([
      { peer: "a", address: "a@10.0.0.1:5000" },
      { peer: "b", address: "b@[::1]:6000" },
    ]);
    expect(cs.received).toHaveLength(0);
    const d = new FakePeer("d", { port: 7000 });
    reactor.addPeer(d);
    expect(cs.added.at(-1)).toEqual({ peer: "d", address: peerNodeAddress(d) });
    expect(peerNodeAddress(d)).toBe("d@127.0.0.1:7000");
  });

  test("behavior: removePeer tells consensus and stops sending; a stale peer object is ignored", () => {
    const { reactor, peers, cs } = setup();
    const p0 = peers[0] as FakePeer;
    reactor.removePeer(new FakePeer("peer0"), undefined);
    expect(cs.removed).toEqual([]);
    reactor.removePeer(p0, new Error("gone"));
    expect(cs.removed).toEqual(["peer0"]);
    reactor.broadcast(nrs);
    expect(p0.sent).toHaveLength(0);
    expect(peers[1]?.sent).toHaveLength(1);
  });

  test("behavior: during block sync only State channel messages reach consensus", () => {
    const { reactor, peers, cs } = setup({ waitSync: true });
    const peer = peers[0] as FakePeer;
    expect(reactor.isWaitingForSync()).toBe(true);
    reactor.receive(CONSENSUS_CHANNEL.vote, peer, encodeConsensusMessage({ kind: "vote", vote: makeVote() }));
    reactor.receive(
      CONSENSUS_CHANNEL.data,
      peer,
      encodeConsensusMessage({ kind: "proposal", proposal: makeProposal() }),
    );
    reactor.receive(CONSENSUS_CHANNEL.state, peer, encodeConsensusMessage(nrs));
    expect(cs.received.map((r) => r.msg.kind)).toEqual(["newRoundStep"]);
    expect(cs.added.map((a) => a.peer)).toEqual(["peer0", "peer1"]);
    reactor.switchToConsensus();
    expect(reactor.isWaitingForSync()).toBe(false);
    reactor.receive(CONSENSUS_CHANNEL.vote, peer, encodeConsensusMessage({ kind: "vote", vote: makeVote() }));
    expect(cs.received.map((r) => r.msg.kind)).toEqual(["newRoundStep", "vote"]);
  });

  test("behavior: nothing is sent after stop", () => {
    const { reactor, peers } = setup();
    reactor.stop();
    reactor.broadcast(nrs);
    reactor.sendTo("peer0", nrs);
    expect(peers.flatMap((p) => p.sent)).toEqual([]);
    expect(bytesToHex(encodeConsensusMessage(nrs))).toMatch(/^0a/);
  });
});
