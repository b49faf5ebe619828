import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseNetAddress, type Switch } from "../../src/p2p/index.js";
import { createTestSwitch, RecordingReactor, testNodeInfo, testNodeKey } from "../../src/p2p/testing/testSwitches.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

// Hostile input on the p2p port of a running validator: raw garbage before and during the secret
// handshake, and well-framed but malformed messages on every channel after it. The node must drop
// the offender and keep committing blocks.

const CHANNELS = [0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x00];

/** A switch on `network` with a reactor that records peers on every channel the node serves. */
function attacker(network: string): { sw: Switch; r: RecordingReactor } {
  const nodeKey = testNodeKey();
  const r = new RecordingReactor("attacker", CHANNELS);
  const sw = createTestSwitch({
    nodeKey,
    nodeInfo: { ...testNodeInfo(nodeKey.id), network },
    handshakeTimeoutMs: 3000,
  });
  sw.addReactor(r);
  return { sw, r };
}

describe("p2p faults against a running validator", () => {
  let n: InProcessNode;
  let p2pPort = 0;

  beforeAll(async () => {
    n = await startInProcessNode({ "--p2p.handshake_timeout": "1s" });
    p2pPort = n.node.p2p.listenAddress().port;
  });
  afterAll(async () => {
    await n?.close();
  });

  test("error: raw garbage, truncated handshakes and idle sockets are dropped; blocks keep coming", async () => {
    const h0 = n.node.consensus.chainState().lastBlockHeight;
    const payloads = [
      randomBytes(1),
      randomBytes(31),
      randomBytes(33),
      randomBytes(4096),
      Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
      Buffer.alloc(70_000, 0xff),
    ];
    const closedByNode = await Promise.all(
      payloads.map(
        (p) =>
          new Promise<boolean>((resolve) => {
            const s = connect({ host: "127.0.0.1", port: p2pPort }, () => s.write(p));
            s.on("error", () => undefined);
            // Reading is what lets the socket see the node's FIN (a paused socket never closes).
            s.resume();
            s.on("close", () => resolve(true));
            // The node cuts bad or stalled handshakes itself (handshake_timeout 1s); this bound only
            // keeps the test finite if it does not.
            setTimeout(() => {
              s.destroy();
              resolve(false);
            }, 5000).unref();
          }),
      ),
    );
    expect(closedByNode).toEqual(payloads.map(() => true));
    await n.node.consensus.waitForHeight(h0 + 2);
    expect(n.node.p2p.peers()).toHaveLength(0);
  });

  test("error: a peer sending malformed messages on every channel is disconnected; the node keeps committing", async () => {
    const { sw, r } = attacker(n.node.genesis.chainId);
    await sw.start();
    try {
      for (const channel of CHANNELS) {
        const before = r.removed.length;
        const peer = await sw.dialPeerWithAddress(parseNetAddress(`${n.node.nodeKey.id}@127.0.0.1:${p2pPort}`));
        await peer.send(channel, Uint8Array.from([0xff, 0xff, 0xff, 0x01, 0x02]));
        await r.until(() => r.removed.length > before, `dropped after garbage on channel ${channel}`);
        expect(n.node.p2p.peers()).toHaveLength(0);
      }
      const h = n.node.consensus.chainState().lastBlockHeight;
      await n.node.consensus.waitForHeight(h + 2);
    } finally {
      await sw.stop();
    }
  }, 60_000);

  test("error: a peer on another network is refused during the handshake", async () => {
    const { sw } = attacker("some-other-chain");
    await sw.start();
    try {
      await expect(
        sw.dialPeerWithAddress(parseNetAddress(`${n.node.nodeKey.id}@127.0.0.1:${p2pPort}`)),
      ).rejects.toThrow(/different network/);
      expect(n.node.p2p.peers()).toHaveLength(0);
    } finally {
      await sw.stop();
    }
  });
});
