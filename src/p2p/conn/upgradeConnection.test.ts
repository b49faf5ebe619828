import { once } from "node:events";
import { afterEach, describe, expect, test } from "vitest";
import { IncompatiblePeerError, NodeInfoInvalidError } from "../nodeInfo.js";
import {
  ChallengeVerificationError,
  FrameDecryptError,
  HandshakeTimeoutError,
  LowOrderPointError,
  PeerIdMismatchError,
  SelfConnectionError,
} from "./errors.js";
import { SEALED_FRAME_SIZE } from "./secretConnection.js";
import {
  channel,
  fulfilled,
  Inbox,
  rejected,
  socketPair,
  testConfig,
  testNode,
  testNodeInfo,
  upgradePair,
} from "./testSupport.js";
import { upgradeConnection } from "./upgradeConnection.js";
import { encodeBytesValueDelimited } from "./wire.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Ephemeral key message (35 bytes) then the AuthSig and NodeInfo frames: where MConnection bytes start. */
const HANDSHAKE_BYTES = 35 + 2 * SEALED_FRAME_SIZE;

describe("upgradeConnection", () => {
  test("default: both sides learn the other's proven key, ID and NodeInfo", async () => {
    const [na, nb] = [testNode(), testNode()];
    const r = await upgradePair({ node: na, expectedId: nb.id }, { node: nb });
    cleanups.push(r.cleanup);
    const [ca, cb] = [fulfilled(r.a), fulfilled(r.b)];
    expect(ca.remoteNodeInfo).toEqual(testNodeInfo(nb));
    expect(cb.remoteNodeInfo).toEqual(testNodeInfo(na));
    expect(ca.remotePubKey).toEqual(nb.privKey.slice(32));
    expect(cb.remotePubKey).toEqual(na.privKey.slice(32));
    expect(ca.remoteHost).toBe("127.0.0.1");
    expect(cb.remotePort).toBeGreaterThan(0);
  });

  test("behavior: messages flow both ways after the upgrade", async () => {
    const r = await upgradePair({ node: testNode() }, { node: testNode() });
    cleanups.push(r.cleanup);
    const [ca, cb] = [fulfilled(r.a), fulfilled(r.b)];
    const [ia, ib] = [new Inbox().start(ca), new Inbox().start(cb)];
    expect(ca.trySend(0x20, Uint8Array.of(1, 2, 3))).toBe(true);
    expect(await cb.send(0x21, Uint8Array.of(4))).toBe(true);
    await Promise.all([ib.count(1), ia.count(1)]);
    expect(ib.messages).toEqual([{ channelId: 0x20, msg: Uint8Array.of(1, 2, 3) }]);
    expect(ia.messages).toEqual([{ channelId: 0x21, msg: Uint8Array.of(4) }]);
  });

  test("error: the dialed ID does not match the proven key", async () => {
    const [na, nb] = [testNode(), testNode()];
    const wrong = testNode().id;
    const r = await upgradePair({ node: na, expectedId: wrong }, { node: nb });
    cleanups.push(r.cleanup);
    const err = rejected(r.a);
    expect(err).toBeInstanceOf(PeerIdMismatchError);
    expect((err as Error).message).toBe(
      `auth failure: conn.ID (${nb.id}) dialed ID (${wrong}) mismatch. Check the <id>@ part of the peer address`,
    );
    expect(r.b.status).toBe("rejected");
  });

  test("error: NodeInfo.ID differs from the proven key", async () => {
    const [na, nb] = [testNode(), testNode()];
    const liar = testNodeInfo(testNode());
    const r = await upgradePair({ node: na }, { node: nb, nodeInfo: liar });
    cleanups.push(r.cleanup);
    const err = rejected(r.a);
    expect(err).toBeInstanceOf(PeerIdMismatchError);
    expect((err as Error).message).toContain(`conn.ID (${nb.id}) NodeInfo.ID (${liar.id}) mismatch`);
  });

  test("error: connecting to ourselves is refused", async () => {
    const n = testNode();
    const r = await upgradePair({ node: n }, { node: n });
    cleanups.push(r.cleanup);
    const err = rejected(r.a);
    expect(err).toBeInstanceOf(SelfConnectionError);
    expect((err as Error).message).toBe(
      `self ID<${n.id}>: refusing to connect to ourselves. Remove our own address from the peer lists`,
    );
  });

  test("error: a peer on another network is incompatible", async () => {
    const [na, nb] = [testNode(), testNode()];
    const r = await upgradePair(
      { node: na, nodeInfo: testNodeInfo(na, { network: "chain-a" }) },
      { node: nb, nodeInfo: testNodeInfo(nb, { network: "chain-b" }) },
    );
    cleanups.push(r.cleanup);
    const err = rejected(r.a);
    expect(err).toBeInstanceOf(IncompatiblePeerError);
    expect((err as Error).message).toBe(
      "incompatible: peer is on a different network. Got chain-b, expected chain-a. Check that both nodes use the same genesis chain_id",
    );
  });

  test("error: a peer without a common channel is incompatible", async () => {
    const [na, nb] = [testNode(), testNode()];
    const r = await upgradePair(
      { node: na, nodeInfo: testNodeInfo(na, { channels: Uint8Array.of(0x20) }) },
      { node: nb, nodeInfo: testNodeInfo(nb, { channels: Uint8Array.of(0x30) }) },
    );
    cleanups.push(r.cleanup);
    expect((rejected(r.a) as Error).message).toContain(
      "incompatible: peer has no common channels. Our channels: [32] ; Peer channels: [48]",
    );
  });

  test("error: an invalid peer NodeInfo is rejected", async () => {
    const [na, nb] = [testNode(), testNode()];
    const r = await upgradePair({ node: na }, { node: nb, nodeInfo: testNodeInfo(nb, { moniker: "" }) });
    cleanups.push(r.cleanup);
    const err = rejected(r.a);
    expect(err).toBeInstanceOf(NodeInfoInvalidError);
    expect((err as Error).message).toBe(
      "invalid NodeInfo: info.Moniker must be valid non-empty ASCII text without tabs, but got ",
    );
  });

  test("error: a low-order ephemeral key is rejected", async () => {
    const pair = await socketPair();
    cleanups.push(pair.cleanup);
    const up = upgradeConnection(pair.b, {
      privKey: testNode().privKey,
      nodeInfo: testNodeInfo(testNode()),
      channels: [channel(0x20)],
      handshakeTimeoutMs: 5_000,
      config: testConfig(),
    });
    pair.a.write(encodeBytesValueDelimited(new Uint8Array(32)));
    await expect(up).rejects.toBeInstanceOf(LowOrderPointError);
    await expect(up).rejects.toThrow("detected low order point from remote peer");
  });

  test("error: a peer that never answers hits the handshake timeout", async () => {
    const pair = await socketPair();
    cleanups.push(pair.cleanup);
    const closed = once(pair.b, "close");
    const up = upgradeConnection(pair.b, {
      privKey: testNode().privKey,
      nodeInfo: testNodeInfo(testNode()),
      channels: [channel(0x20)],
      handshakeTimeoutMs: 100,
      config: testConfig(),
    });
    await expect(up).rejects.toBeInstanceOf(HandshakeTimeoutError);
    await closed;
  });

  test("error: a tampered AuthSig frame fails the handshake", async () => {
    const flipAt = 35 + 10;
    const r = await upgradePair({ node: testNode() }, { node: testNode() }, (chunk, offset) => {
      const i = flipAt - offset;
      if (i >= 0 && i < chunk.length) chunk[i] = (chunk[i] ?? 0) ^ 0x01;
      return chunk;
    });
    cleanups.push(r.cleanup);
    expect(rejected(r.b)).toBeInstanceOf(FrameDecryptError);
  });

  test("error: a tampered ephemeral key fails the challenge (man in the middle)", async () => {
    const r = await upgradePair({ node: testNode() }, { node: testNode() }, (chunk, offset) => {
      const i = 10 - offset;
      if (i >= 0 && i < chunk.length) chunk[i] = (chunk[i] ?? 0) ^ 0x01;
      return chunk;
    });
    cleanups.push(r.cleanup);
    // Each side derives different keys: the first sealed frame fails to open or the signature fails.
    const reasons = [r.a, r.b].map((x) => (x.status === "rejected" ? x.reason : undefined));
    expect(reasons.some((e) => e instanceof FrameDecryptError || e instanceof ChallengeVerificationError)).toBe(true);
    expect(reasons.every((e) => e !== undefined)).toBe(true);
  });

  test("error: tampered ciphertext after the handshake stops the connection", async () => {
    const flipAt = HANDSHAKE_BYTES + 20;
    const r = await upgradePair({ node: testNode() }, { node: testNode() }, (chunk, offset) => {
      const i = flipAt - offset;
      if (i >= 0 && i < chunk.length) chunk[i] = (chunk[i] ?? 0) ^ 0x80;
      return chunk;
    });
    cleanups.push(r.cleanup);
    const [ca, cb] = [fulfilled(r.a), fulfilled(r.b)];
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    ca.trySend(0x20, new Uint8Array(100).fill(7));
    const err = await ib.error;
    expect(err).toBeInstanceOf(FrameDecryptError);
    expect((err as Error).message).toContain("failed to decrypt SecretConnection");
    expect(ib.messages).toEqual([]);
  });

  test("error: a replayed frame fails authentication", async () => {
    let firstFrame: Buffer | undefined;
    const collected: Buffer[] = [];
    let total = 0;
    const r = await upgradePair({ node: testNode() }, { node: testNode() }, (chunk, offset) => {
      // Capture the first post-handshake frame and send it twice.
      const start = Math.max(0, HANDSHAKE_BYTES - offset);
      if (firstFrame === undefined && start < chunk.length) {
        collected.push(chunk.subarray(start));
        total += chunk.length - start;
        if (total >= SEALED_FRAME_SIZE) {
          firstFrame = Buffer.concat(collected).subarray(0, SEALED_FRAME_SIZE);
          return Buffer.concat([chunk, firstFrame]);
        }
      }
      return chunk;
    });
    cleanups.push(r.cleanup);
    const [ca, cb] = [fulfilled(r.a), fulfilled(r.b)];
    new Inbox().start(ca);
    const ib = new Inbox().start(cb);
    ca.trySend(0x20, Uint8Array.of(1));
    await ib.count(1);
    expect(await ib.error).toBeInstanceOf(FrameDecryptError);
  });
});
