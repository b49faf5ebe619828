import { afterEach, describe, expect, test } from "vitest";
import { ConnectionClosedError } from "./conn/index.js";
import {
  ChannelConflictError,
  CurrentlyDialingOrExistingAddressError,
  DialError,
  SwitchAuthenticationFailureError,
  SwitchConnectToSelfError,
} from "./errors.js";
import { parseNetAddress } from "./netAddress.js";
import { DEFAULT_RECONNECT_BACKOFF, mconnConfigFromP2P, type Switch } from "./switch.js";
import { createTestSwitch, dialAddress, RecordingReactor, TEST_CHANNEL, testNodeKey } from "./testing/testSwitches.js";

const running: Switch[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function node(opts: Parameters<typeof createTestSwitch>[0] = {}): Promise<{ sw: Switch; r: RecordingReactor }> {
  const sw = createTestSwitch(opts);
  const r = new RecordingReactor();
  sw.addReactor(r);
  await sw.start();
  running.push(sw);
  return { sw, r };
}

const bytes = (...xs: number[]) => Uint8Array.from(xs);
const hasPeer = (sw: Switch, id: string) => () => sw.peer(id) !== undefined;

describe("Switch", () => {
  test("default: starts on a real port with channels from the reactors", async () => {
    const { sw } = await node({ externalAddress: "" });
    expect(sw.isListening()).toBe(true);
    expect(sw.listenAddress().port).toBeGreaterThan(0);
    expect(sw.nodeInfo().listenAddr).toBe(`tcp://127.0.0.1:${sw.listenAddress().port}`);
    expect([...sw.nodeInfo().channels]).toEqual([TEST_CHANNEL]);
    expect(sw.listeners()).toEqual(["Listener(@)"]);
    expect(sw.numPeers()).toEqual({ outbound: 0, inbound: 0, dialing: 0 });
    await sw.stop();
    expect(sw.isListening()).toBe(false);
  });

  test("error: two reactors on one channel", () => {
    const sw = createTestSwitch();
    sw.addReactor(new RecordingReactor("a"));
    expect(() => sw.addReactor(new RecordingReactor("b"))).toThrowErrorMatchingInlineSnapshot(
      `[ChannelConflictError: channel 40 has multiple reactors a & b. Give each reactor its own channel IDs]`,
    );
    expect(() => sw.addReactor(new RecordingReactor("c", [0x41, TEST_CHANNEL]))).toThrow(ChannelConflictError);
  });

  test("behavior: two switches connect via persistent peers and exchange messages", async () => {
    const b = await node();
    const a = await node();
    a.sw.dialPeersAsync([dialAddress(b.sw)], { persistent: true });
    await a.r.until(hasPeer(a.sw, b.sw.nodeId()), "A has B");
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");

    const toB = a.sw.peer(b.sw.nodeId());
    expect(toB?.isOutbound).toBe(true);
    expect(toB?.isPersistent).toBe(true);
    expect(toB?.socketAddr).toEqual(parseNetAddress(dialAddress(b.sw)));
    const toA = b.sw.peer(a.sw.nodeId());
    expect(toA?.isOutbound).toBe(false);
    // Inbound peers are dialed back at their self-reported listen address.
    expect(toA?.socketAddr).toEqual({ id: a.sw.nodeId(), host: "127.0.0.1", port: a.sw.listenAddress().port });
    expect(a.sw.numPeers()).toEqual({ outbound: 1, inbound: 0, dialing: 0 });
    expect(b.sw.numPeers()).toEqual({ outbound: 0, inbound: 1, dialing: 0 });

    expect(await toB?.send(TEST_CHANNEL, bytes(1, 2, 3))).toBe(true);
    await b.r.until(() => b.r.received.length === 1, "B receives");
    expect(b.r.received[0]).toEqual({ channelId: TEST_CHANNEL, from: a.sw.nodeId(), msg: bytes(1, 2, 3) });
    b.sw.broadcast(TEST_CHANNEL, bytes(9));
    await a.r.until(() => a.r.received.length === 1, "A receives");
    expect(a.r.received[0]?.msg).toEqual(bytes(9));

    toA?.set("k", 42);
    expect(toA?.get("k")).toBe(42);
    expect(toA?.status().channels.map((c) => c.id)).toEqual([TEST_CHANNEL]);
  });

  test("behavior: sending on a channel the peer did not announce is refused locally", async () => {
    const b = await node();
    const sw = createTestSwitch();
    const r = new RecordingReactor();
    sw.addReactor(r);
    sw.addReactor(new RecordingReactor("extra", [0x41]));
    await sw.start();
    running.push(sw);
    const peer = await sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)));
    expect(await peer.send(0x41, bytes(1))).toBe(false);
    expect(peer.trySend(0x41, bytes(1))).toBe(false);
    expect(await peer.send(TEST_CHANNEL, bytes(2))).toBe(true);
    await b.r.until(() => b.r.received.length === 1, "B gets the message on the shared channel");
    expect(peer.isRunning()).toBe(true);
  });

  test("behavior: three switches in a persistent ring all connect and broadcast", async () => {
    const [x, y, z] = [await node(), await node(), await node()];
    x.sw.addPersistentPeers([dialAddress(y.sw)]);
    x.sw.dialPeersAsync([dialAddress(y.sw)]);
    y.sw.dialPeersAsync([dialAddress(z.sw)], { persistent: true });
    z.sw.dialPeersAsync([dialAddress(x.sw)], { persistent: true });
    for (const n of [x, y, z]) await n.r.until(() => n.sw.peers().length === 2, "two peers each");
    for (const n of [x, y, z]) expect(n.sw.numPeers()).toEqual({ outbound: 1, inbound: 1, dialing: 0 });

    x.sw.broadcast(TEST_CHANNEL, bytes(7));
    await y.r.until(() => y.r.received.length === 1, "y receives");
    await z.r.until(() => z.r.received.length === 1, "z receives");
    expect(y.r.received[0]?.from).toBe(x.sw.nodeId());
    expect(z.r.received[0]?.from).toBe(x.sw.nodeId());
  });

  test("error: duplicate connections and self are refused", async () => {
    const b = await node();
    const key = testNodeKey();
    const a = await node({ nodeKey: key });
    const bAddr = parseNetAddress(dialAddress(b.sw));
    await a.sw.dialPeerWithAddress(bAddr);
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");
    const original = b.sw.peer(a.sw.nodeId());

    await expect(a.sw.dialPeerWithAddress(bAddr)).rejects.toThrow(CurrentlyDialingOrExistingAddressError);
    await expect(b.sw.dialPeerWithAddress(parseNetAddress(dialAddress(a.sw)))).rejects.toThrow(
      CurrentlyDialingOrExistingAddressError,
    );
    await expect(a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(a.sw)))).rejects.toThrow(
      SwitchConnectToSelfError,
    );

    // A second node with A's key gets in on its side, but B drops the duplicate at once.
    const twin = await node({ nodeKey: key });
    await twin.sw.dialPeerWithAddress(bAddr);
    await twin.r.until(() => twin.r.removed.length === 1, "twin dropped by B");
    expect(b.sw.peers()).toHaveLength(1);
    expect(b.sw.peer(a.sw.nodeId())).toBe(original);
    expect(b.r.removed).toHaveLength(0);
  });

  test("behavior: two nodes dialing each other at once keep one connection, the one the lower ID dialed", async () => {
    const a = await node();
    const b = await node();
    const [lower, higher] = a.sw.nodeId() < b.sw.nodeId() ? [a, b] : [b, a];
    await Promise.allSettled([
      a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw))),
      b.sw.dialPeerWithAddress(parseNetAddress(dialAddress(a.sw))),
    ]);
    await lower.r.until(hasPeer(lower.sw, higher.sw.nodeId()), "lower has higher");
    await higher.r.until(hasPeer(higher.sw, lower.sw.nodeId()), "higher has lower");
    // Both sides settled on the same connection: outbound at the lower ID, inbound at the higher.
    await lower.r.until(() => lower.sw.peer(higher.sw.nodeId())?.isOutbound === true, "lower keeps its dial");
    await higher.r.until(() => higher.sw.peer(lower.sw.nodeId())?.isOutbound === false, "higher keeps the inbound");
    expect(lower.sw.peers()).toHaveLength(1);
    expect(higher.sw.peers()).toHaveLength(1);
    // And it works: a message goes through.
    lower.sw.broadcast(TEST_CHANNEL, bytes(3));
    await higher.r.until(() => higher.r.received.length >= 1, "message over the kept connection");
  });

  test("error: dialing a wrong ID or a closed port", async () => {
    const b = await node();
    const a = await node();
    const wrongId = { ...parseNetAddress(dialAddress(b.sw)), id: testNodeKey().id };
    await expect(a.sw.dialPeerWithAddress(wrongId)).rejects.toThrow(SwitchAuthenticationFailureError);
    const port = b.sw.listenAddress().port;
    await b.sw.stop();
    await expect(a.sw.dialPeerWithAddress({ id: b.sw.nodeId(), host: "127.0.0.1", port })).rejects.toThrow(DialError);
    expect(a.sw.numPeers().dialing).toBe(0);
  });

  test("behavior: inbound limit, unconditional peers exempt", async () => {
    const unconditionalKey = testNodeKey();
    const hub = await node({ maxNumInboundPeers: 1, unconditionalPeerIds: [unconditionalKey.id] });
    const first = await node();
    await first.sw.dialPeerWithAddress(parseNetAddress(dialAddress(hub.sw)));
    await hub.r.until(() => hub.sw.numPeers().inbound === 1, "first inbound");

    const second = await node();
    await second.sw.dialPeerWithAddress(parseNetAddress(dialAddress(hub.sw)));
    await second.r.until(() => second.r.removed.length === 1, "second refused");
    expect(hub.sw.peer(second.sw.nodeId())).toBeUndefined();

    const vip = await node({ nodeKey: unconditionalKey });
    await vip.sw.dialPeerWithAddress(parseNetAddress(dialAddress(hub.sw)));
    await hub.r.until(hasPeer(hub.sw, vip.sw.nodeId()), "unconditional accepted");
    expect(hub.sw.numPeers()).toEqual({ outbound: 0, inbound: 1, dialing: 0 });
    expect(hub.sw.peers()).toHaveLength(2);
  });

  test("error: a second peer from the same IP without allow_duplicate_ip", async () => {
    const b = await node({ allowDuplicateIp: false });
    const a = await node({ allowDuplicateIp: false });
    const c = await node({ allowDuplicateIp: false });
    await a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)));
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");
    // B drops the socket before the handshake: C sees the connection closed.
    await expect(c.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)))).rejects.toThrow(ConnectionClosedError);
    expect(b.sw.peers()).toHaveLength(1);
    await expect(a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(c.sw)))).rejects.toThrow(
      CurrentlyDialingOrExistingAddressError,
    );
  });

  test("behavior: outbound limit applies to non-persistent dials only", async () => {
    const [b, c] = [await node(), await node()];
    const a = await node({ maxNumOutboundPeers: 1 });
    await a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)));
    await expect(a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(c.sw)))).rejects.toThrow(
      /already have enough outbound peers/,
    );
    a.sw.addPersistentPeers([dialAddress(c.sw)]);
    await a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(c.sw)));
    expect(a.sw.peers()).toHaveLength(2);
  });

  test("behavior: a persistent peer is redialed after the other side restarts", async () => {
    const bKey = testNodeKey();
    const b1 = await node({ nodeKey: bKey });
    const port = b1.sw.listenAddress().port;
    const a = await node();
    a.sw.dialPeersAsync([dialAddress(b1.sw)], { persistent: true });
    await a.r.until(() => a.r.added.length === 1, "first connection");

    await b1.sw.stop();
    await a.r.until(() => a.r.removed.length === 1, "A notices B left");
    expect(a.sw.peers()).toHaveLength(0);

    const b2 = await node({ nodeKey: bKey, laddr: `tcp://127.0.0.1:${port}` });
    await a.r.until(() => a.r.added.length === 2, "A redials B");
    await b2.r.until(hasPeer(b2.sw, a.sw.nodeId()), "B sees A again");
    expect(a.sw.peer(bKey.id)?.isPersistent).toBe(true);
  });

  test("behavior: stopPeerForError removes the peer everywhere; non-persistent peers stay gone", async () => {
    const b = await node();
    const a = await node();
    const peer = await a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)));
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");

    const reason = new DialError("x", "test reason");
    a.sw.stopPeerForError(peer, reason);
    expect(peer.isRunning()).toBe(false);
    expect(a.sw.peers()).toHaveLength(0);
    expect(a.r.removed).toEqual([{ peer, reason }]);
    expect(await peer.send(TEST_CHANNEL, bytes(1))).toBe(false);
    await b.r.until(() => b.r.removed.length === 1, "B notices");
    a.sw.stopPeerForError(peer, reason); // already stopped: no-op
    expect(a.r.removed).toHaveLength(1);
  });

  test("behavior: a reactor that throws in receive stops the peer", async () => {
    const b = await node();
    const a = await node();
    b.r.poisonByte = 0xff;
    const peer = await a.sw.dialPeerWithAddress(parseNetAddress(dialAddress(b.sw)));
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");
    await peer.send(TEST_CHANNEL, bytes(0xff));
    await b.r.until(() => b.r.removed.length === 1, "B stops A");
    expect(String(b.r.removed[0]?.reason)).toMatch(/poisoned/);
    await a.r.until(() => a.r.removed.length === 1, "A sees the disconnect");
  });

  test("args: dialPeersAsync throws on a malformed address before dialing", async () => {
    const a = await node();
    expect(() => a.sw.dialPeersAsync(["nope"])).toThrow(/does not contain ID/);
    expect(a.sw.numPeers().dialing).toBe(0);
  });

  test("args: mconnConfigFromP2P maps the [p2p] settings", () => {
    expect(
      mconnConfigFromP2P({ flushThrottleTimeoutMs: 10, sendRate: 1, recvRate: 2, maxPacketMsgPayloadSize: 3 }),
    ).toMatchObject({
      flushThrottleMs: 10,
      sendRateBytesPerSec: 1,
      recvRateBytesPerSec: 2,
      maxPacketMsgPayloadSize: 3,
    });
  });

  test("behavior: redials at once, then at a fixed interval, then backs off (capped by persistent_peers_max_dial_period)", () => {
    const sw = createTestSwitch({
      reconnectBackoff: { intervalMs: 100, intervalAttempts: 3, backoffBase: 3, backoffAttempts: 4, jitterMs: 0 },
    });
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => sw.reconnectDelayMs(i))).toEqual([0, 100, 100, 1000, 3000, 9000, 27000]);
    const capped = createTestSwitch({
      persistentPeersMaxDialPeriodMs: 5000,
      reconnectBackoff: { intervalMs: 100, intervalAttempts: 3, backoffBase: 3, backoffAttempts: 4, jitterMs: 0 },
    });
    expect([3, 4, 5, 6].map((i) => capped.reconnectDelayMs(i))).toEqual([1000, 3000, 5000, 5000]);
    // CometBFT's defaults: 5 s plus up to 3 s for the first 20 attempts.
    const d = createTestSwitch({ reconnectBackoff: DEFAULT_RECONNECT_BACKOFF }).reconnectDelayMs(1);
    expect(d).toBeGreaterThanOrEqual(5000);
    expect(d).toBeLessThan(8000);
  });
});

describe("Switch traffic hook", () => {
  test("behavior: every message queued to or received from a peer is reported with its channel", async () => {
    const seen: string[] = [];
    const traffic = (dir: string) => (peerId: string, channelId: number, msg: Uint8Array) =>
      seen.push(`${dir} ${peerId.slice(0, 4)} ${channelId} ${msg.length}`);
    const b = await node({ traffic: { sent: traffic("b-sent"), received: traffic("b-recv") } });
    const a = await node();
    a.sw.dialPeersAsync([dialAddress(b.sw)], { persistent: true });
    await b.r.until(hasPeer(b.sw, a.sw.nodeId()), "B has A");
    await a.r.until(hasPeer(a.sw, b.sw.nodeId()), "A has B");
    expect(await a.sw.peer(b.sw.nodeId())?.send(TEST_CHANNEL, bytes(1, 2, 3))).toBe(true);
    await b.r.until(() => b.r.received.length === 1, "B receives");
    const toA = b.sw.peer(a.sw.nodeId());
    expect(toA?.trySend(TEST_CHANNEL, bytes(4, 5))).toBe(true);
    expect(await toA?.send(TEST_CHANNEL, bytes(6))).toBe(true);
    const id = a.sw.nodeId().slice(0, 4);
    expect(seen).toEqual([
      `b-recv ${id} ${TEST_CHANNEL} 3`,
      `b-sent ${id} ${TEST_CHANNEL} 2`,
      `b-sent ${id} ${TEST_CHANNEL} 1`,
    ]);
  });
});
