import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, test } from "vitest";
import {
  ConnectionClosedError,
  MConnectionConfigError,
  MessageTooLargeError,
  PongTimeoutError,
  UnknownChannelError,
} from "./errors.js";
import { MConnection } from "./mConnection.js";
import { channel, fulfilled, Inbox, type Side, testConfig, testNode, upgradePair } from "./testSupport.js";
import type { PeerConnection } from "./upgradeConnection.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function connected(
  a: Omit<Side, "node"> = {},
  b: Omit<Side, "node"> = {},
): Promise<[PeerConnection, PeerConnection]> {
  const r = await upgradePair({ node: testNode(), ...a }, { node: testNode(), ...b });
  cleanups.push(r.cleanup);
  return [fulfilled(r.a), fulfilled(r.b)];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("MConnection", () => {
  test("args: pong timeout must be below the ping interval", () => {
    const stream = {} as ConstructorParameters<typeof MConnection>[0];
    expect(
      () => new MConnection(stream, [channel(1)], testConfig({ pingIntervalMs: 100, pongTimeoutMs: 100 })),
    ).toThrow(MConnectionConfigError);
    expect(() => new MConnection(stream, [channel(1, { priority: 0 })], testConfig())).toThrow(
      "channel ch1 (1) has priority 0. Channel priority must be a positive number",
    );
  });

  test("behavior: a 1 MB message is cut into packets and reassembled", async () => {
    const [ca, cb] = await connected();
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    const big = new Uint8Array(randomBytes(1024 * 1024));
    expect(await ca.send(0x20, big)).toBe(true);
    expect(ca.trySend(0x21, Uint8Array.of(9))).toBe(true);
    await ib.count(2);
    const got = ib.messages.find((m) => m.channelId === 0x20);
    expect(got?.msg.length).toBe(big.length);
    expect(Buffer.from(got?.msg ?? []).equals(Buffer.from(big))).toBe(true);
    expect(ib.messages.find((m) => m.channelId === 0x21)?.msg).toEqual(Uint8Array.of(9));
  });

  test("behavior: many messages keep their per-channel order", async () => {
    const [ca, cb] = await connected({ channels: [channel(0x20, { sendQueueCapacity: 1 }), channel(0x21)] });
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    for (let i = 0; i < 200; i++) expect(await ca.send(0x20, Uint8Array.of(i & 0xff, i >> 8))).toBe(true);
    await ib.count(200);
    expect(ib.messages.map((m) => (m.msg[0] ?? 0) + ((m.msg[1] ?? 0) << 8))).toEqual([...Array(200).keys()]);
  });

  test("behavior: the channel with the lowest recentlySent/priority sends next", async () => {
    const low = channel(0x20, { priority: 1 });
    const high = channel(0x21, { priority: 10 });
    const [ca, cb] = await connected({ channels: [low, high] });
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    const msg = new Uint8Array(20);
    for (let i = 0; i < 5; i++) expect(ca.trySend(0x20, msg)).toBe(true);
    for (let i = 0; i < 5; i++) expect(ca.trySend(0x21, msg)).toBe(true);
    await ib.count(10);
    // Tie at zero goes to the first channel; after that the high-priority channel may send 10x as much.
    expect(ib.messages.map((m) => m.channelId)).toEqual([0x20, 0x21, 0x21, 0x21, 0x21, 0x21, 0x20, 0x20, 0x20, 0x20]);
    const st = ca.status().channels;
    expect(st.map((c) => [c.id, c.priority, c.sendQueueCapacity])).toEqual([
      [0x20, 1, 10],
      [0x21, 10, 10],
    ]);
    expect(st.every((c) => c.recentlySent > 0 && c.sendQueueSize === 0)).toBe(true);
  });

  test("behavior: trySend returns false on a full queue; send waits for room", async () => {
    const [ca, cb] = await connected({ channels: [channel(0x20, { sendQueueCapacity: 2 }), channel(0x21)] });
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    expect(ca.trySend(0x20, Uint8Array.of(1))).toBe(true);
    expect(ca.trySend(0x20, Uint8Array.of(2))).toBe(true);
    expect(ca.trySend(0x20, Uint8Array.of(3))).toBe(false);
    expect(ca.status().channels[0]?.sendQueueSize).toBe(2);
    const waited = ca.send(0x20, Uint8Array.of(4));
    expect(await waited).toBe(true);
    await ib.count(3);
    expect(ib.messages.map((m) => m.msg[0])).toEqual([1, 2, 4]);
    expect(ca.trySend(0x99, Uint8Array.of(1))).toBe(false);
    expect(await ca.send(0x99, Uint8Array.of(1))).toBe(false);
  });

  test("error: a message over the channel's recvMessageCapacity stops the connection", async () => {
    const [ca, cb] = await connected({}, { channels: [channel(0x20, { recvMessageCapacity: 1000 }), channel(0x21)] });
    const ia = new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    ca.trySend(0x20, new Uint8Array(5000));
    const err = await ib.error;
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as Error).message).toBe("received message exceeds available capacity: 1000 < 1024 on channel 0x20");
    expect(await ia.error).toBeInstanceOf(ConnectionClosedError);
    expect(cb.trySend(0x20, Uint8Array.of(1))).toBe(false);
    expect(ib.messages).toEqual([]);
  });

  test("error: a packet on an unknown channel stops the connection", async () => {
    const [ca, cb] = await connected({ channels: [channel(0x20), channel(0x30)] }, { channels: [channel(0x20)] });
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    ca.trySend(0x30, Uint8Array.of(1));
    const err = await ib.error;
    expect(err).toBeInstanceOf(UnknownChannelError);
    expect((err as Error).message).toBe("unknown channel 0x30. The peer sent on a channel we did not announce");
  });

  test("behavior: close() is idempotent, silent locally, and seen as closed remotely", async () => {
    const [ca, cb] = await connected();
    const ia = new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    ca.trySend(0x20, Uint8Array.of(5));
    ca.close();
    ca.close();
    expect(await ib.error).toBeInstanceOf(ConnectionClosedError);
    // Messages queued before close still go out (FlushStop).
    expect(ib.messages.map((m) => m.msg)).toEqual([Uint8Array.of(5)]);
    expect(ia.errors).toBe(0);
    expect(ca.trySend(0x20, Uint8Array.of(1))).toBe(false);
    expect(await ca.send(0x20, Uint8Array.of(1))).toBe(false);
  });

  test("behavior: pings and pongs keep an idle connection alive", async () => {
    // A pong timeout of 120 ms, not 40: both ends share this process, and on a busy machine it could
    // be descheduled past 40 ms between a ping and its pong (the timer then fires first; npm test
    // failed so at a load of 9 on 2 cores).
    const config = testConfig({ pingIntervalMs: 150, pongTimeoutMs: 120 });
    const [ca, cb] = await connected({ config }, { config });
    const ia = new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    await sleep(650);
    expect(ia.errors + ib.errors).toBe(0);
    // Each side sent ~4 pings (2 bytes each on the wire) and answered as many.
    const st = ca.status();
    expect(st.sendMonitor.bytes + st.recvMonitor.bytes).toBeGreaterThan(0);
    expect(ca.trySend(0x20, Uint8Array.of(1))).toBe(true);
    await ib.count(1);
  });

  test("error: a peer that stops answering pings is dropped after the pong timeout", async () => {
    const config = testConfig({ pingIntervalMs: 60, pongTimeoutMs: 40 });
    const [ca] = await connected({ config });
    // The other side never starts: it neither reads our pings nor answers them.
    const ia = new Inbox().start(ca);
    const started = performance.now();
    const err = await ia.error;
    expect(err).toBeInstanceOf(PongTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  test("behavior: send_rate limits outgoing bytes", async () => {
    const rate = 200_000;
    const [ca, cb] = await connected({
      config: testConfig({ sendRateBytesPerSec: rate }),
      channels: [channel(0x20, { sendQueueCapacity: 100 }), channel(0x21)],
    });
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    const total = 200_000;
    const started = performance.now();
    for (let i = 0; i < total / 10_000; i++) expect(ca.trySend(0x20, new Uint8Array(10_000))).toBe(true);
    await ib.count(total / 10_000);
    const elapsedMs = performance.now() - started;
    // ~1 s at 200 kB/s (less one sample's burst); loose bounds to stay clear of timing noise.
    expect(elapsedMs).toBeGreaterThan(600);
    expect(elapsedMs).toBeLessThan(4_000);
    const st = ca.status().sendMonitor;
    expect(st.samples).toBeGreaterThan(3);
    expect(st.peakRate).toBeLessThan(rate * 2);
  });

  test("behavior: recv_rate limits incoming bytes", async () => {
    const rate = 200_000;
    const [ca, cb] = await connected(
      { channels: [channel(0x20, { sendQueueCapacity: 100 }), channel(0x21)] },
      { config: testConfig({ recvRateBytesPerSec: rate }) },
    );
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    const total = 200_000;
    const started = performance.now();
    for (let i = 0; i < total / 10_000; i++) expect(ca.trySend(0x20, new Uint8Array(10_000))).toBe(true);
    await ib.count(total / 10_000);
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeGreaterThan(600);
    expect(elapsedMs).toBeLessThan(4_000);
    const st = cb.status();
    expect(st.recvMonitor.bytes).toBeGreaterThan(100_000);
    expect(st.recvMonitor.active).toBe(true);
    expect(st.durationMs).toBeGreaterThan(0);
  });
});
