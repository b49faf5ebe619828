import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type ChannelDescriptor,
  DEFAULT_MCONNECTION_CONFIG,
  nodeIdFromEd25519,
  type Peer,
  parseNetAddress,
  type Reactor,
  Switch,
} from "../../src/p2p/index.js";
import { generateEd25519PrivKey } from "../../src/types/index.js";
import { createLogger } from "../../src/util/logger.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

// Hostile input on the p2p port of a running validator: raw garbage before and during the secret
// handshake, and well-framed but malformed messages on every channel after it. The node must drop
// the offender and keep committing blocks.

class Sender implements Reactor {
  readonly name = "sender";
  peer: Peer | undefined;
  removed = 0;
  channels(): readonly ChannelDescriptor[] {
    return [0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x00].map((id) => ({
      id,
      priority: 1,
      sendQueueCapacity: 10,
      recvMessageCapacity: 22_020_096,
      name: `ch-${id}`,
    }));
  }
  addPeer(peer: Peer): void {
    this.peer = peer;
  }
  removePeer(): void {
    this.peer = undefined;
    this.removed++;
  }
  receive(): void {}
}

function makeSwitch(network: string, reactor: Reactor): Switch {
  const key = generateEd25519PrivKey();
  const id = nodeIdFromEd25519(key.bytes.slice(32));
  const sw = new Switch({
    nodeKey: { id, privKey: key.bytes },
    nodeInfo: {
      protocolVersion: { p2p: 8n, block: 11n, app: 0n },
      id,
      listenAddr: "tcp://127.0.0.1:0",
      network,
      version: "0.38.25",
      moniker: "attacker",
      other: { txIndex: "off", rpcAddress: "" },
    },
    laddr: "tcp://127.0.0.1:0",
    maxNumInboundPeers: 1,
    maxNumOutboundPeers: 1,
    allowDuplicateIp: true,
    handshakeTimeoutMs: 3000,
    dialTimeoutMs: 2000,
    mconfig: DEFAULT_MCONNECTION_CONFIG,
    log: createLogger({ level: "silent", format: "plain" }),
    dialRandomizerMs: 0,
  });
  sw.addReactor(reactor);
  return sw;
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
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
    const sender = new Sender();
    const sw = makeSwitch(n.node.genesis.chainId, sender);
    await sw.start();
    try {
      for (const channel of [0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x00]) {
        const before = sender.removed;
        await sw.dialPeerWithAddress(parseNetAddress(`${n.node.nodeKey.id}@127.0.0.1:${p2pPort}`));
        await until(() => sender.peer !== undefined);
        await sender.peer?.send(channel, Uint8Array.from([0xff, 0xff, 0xff, 0x01, 0x02]));
        await until(() => sender.removed > before);
        expect(n.node.p2p.peers()).toHaveLength(0);
      }
      const h = n.node.consensus.chainState().lastBlockHeight;
      await n.node.consensus.waitForHeight(h + 2);
    } finally {
      await sw.stop();
    }
  }, 60_000);

  test("error: a peer on another network is refused during the handshake", async () => {
    const sender = new Sender();
    const sw = makeSwitch("some-other-chain", sender);
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
