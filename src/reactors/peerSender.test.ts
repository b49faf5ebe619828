import { describe, expect, test } from "vitest";
import { silentLogger } from "../util/logger.js";
import { PeerSender } from "./peerSender.js";
import { FakePeer } from "./testing/fakeP2p.js";

const b = (n: number) => Uint8Array.of(n);
const tick = () => new Promise((r) => setImmediate(r));

describe("PeerSender", () => {
  test("default: trySend while the queue has room", () => {
    const s = new PeerSender(silentLogger());
    const p = new FakePeer("p");
    expect(s.send(p, 1, b(1))).toBe(true);
    expect(p.sent.map((x) => [x.channel, x.bytes[0], x.via])).toEqual([[1, 1, "try"]]);
    expect(s.pending(p, 1)).toBe(0);
  });

  test("behavior: a full channel forms an ordered line; other channels are not held up", async () => {
    const s = new PeerSender(silentLogger());
    const p = new FakePeer("p");
    p.setFull(true);
    s.send(p, 1, b(1));
    s.send(p, 1, b(2));
    expect(s.pending(p, 1)).toBe(2);
    p.setFull(false);
    s.send(p, 2, b(9));
    s.send(p, 1, b(3));
    await tick();
    expect(p.sent.map((x) => [x.channel, x.bytes[0]])).toEqual([
      [2, 9],
      [1, 1],
      [1, 2],
      [1, 3],
    ]);
    expect(s.pending(p, 1)).toBe(0);
  });

  test("args: maxPending bounds a line; later messages are dropped", () => {
    const s = new PeerSender(silentLogger(), { maxPending: 2 });
    const p = new FakePeer("p");
    p.setFull(true);
    expect([1, 2, 3].map((n) => s.send(p, 1, b(n)))).toEqual([true, true, false]);
  });

  test("behavior: removePeer and a stopped peer end the line", async () => {
    const s = new PeerSender(silentLogger());
    const p = new FakePeer("p");
    p.setFull(true);
    s.send(p, 1, b(1));
    s.send(p, 1, b(2));
    s.removePeer(p);
    expect(s.pending(p, 1)).toBe(0);
    p.setFull(false);
    await tick();
    // Only the message already handed to peer.send() goes out.
    expect(p.sent.map((x) => x.bytes[0])).toEqual([1]);

    const q = new FakePeer("q");
    q.setFull(true);
    s.send(q, 1, b(1));
    q.stop();
    await tick();
    expect(s.pending(q, 1)).toBe(0);
    expect(s.send(q, 1, b(2))).toBe(false);
  });
});
