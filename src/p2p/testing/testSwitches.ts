import { EventEmitter } from "node:events";
import { generateEd25519PrivKey } from "../../types/index.js";
import { silentLogger } from "../../util/logger.js";
import { DEFAULT_MCONNECTION_CONFIG, nodeIdFromEd25519 } from "../conn/index.js";
import { P2PError } from "../errors.js";
import type { ChannelDescriptor, NodeInfo, Peer, Reactor } from "../reactor.js";
import { Switch, type SwitchOptions } from "../switch.js";

/** Test-only helpers: switches on 127.0.0.1:0 with short timeouts, and a reactor that records what it sees. */

export const TEST_CHANNEL = 0x40;

export interface TestNodeKey {
  id: string;
  privKey: Uint8Array;
}

export function testNodeKey(): TestNodeKey {
  const pk = generateEd25519PrivKey();
  return { id: nodeIdFromEd25519(pk.bytes.slice(32)), privKey: pk.bytes };
}

export function testNodeInfo(id: string): Omit<NodeInfo, "channels"> {
  return {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id,
    listenAddr: "tcp://127.0.0.1:0",
    network: "test-chain",
    version: "0.38.25",
    moniker: `node-${id.slice(0, 6)}`,
    other: { txIndex: "on", rpcAddress: "tcp://127.0.0.1:0" },
  };
}

export function createTestSwitch(overrides: Partial<SwitchOptions> = {}): Switch {
  const nodeKey = overrides.nodeKey ?? testNodeKey();
  return new Switch({
    nodeKey,
    nodeInfo: testNodeInfo(nodeKey.id),
    laddr: "tcp://127.0.0.1:0",
    maxNumInboundPeers: 40,
    maxNumOutboundPeers: 10,
    allowDuplicateIp: true,
    handshakeTimeoutMs: 2000,
    dialTimeoutMs: 1000,
    mconfig: { ...DEFAULT_MCONNECTION_CONFIG, flushThrottleMs: 5 },
    log: silentLogger(),
    reconnectBackoff: { intervalMs: 20, intervalAttempts: 100, backoffBase: 2, backoffAttempts: 0, jitterMs: 10 },
    dialRandomizerMs: 0,
    ...overrides,
  });
}

/** `id@127.0.0.1:port` of a started switch. */
export function dialAddress(sw: Switch): string {
  const a = sw.listenAddress();
  return `${a.id}@127.0.0.1:${a.port}`;
}

export interface Received {
  channelId: number;
  from: string;
  msg: Uint8Array;
}

/** Records peers and messages; `until(cond)` resolves once cond holds (checked after every event). */
export class RecordingReactor implements Reactor {
  readonly name: string;
  readonly added: Peer[] = [];
  readonly removed: { peer: Peer; reason: unknown }[] = [];
  readonly received: Received[] = [];
  readonly #events = new EventEmitter();
  readonly #channels: ChannelDescriptor[];
  /** Throw from receive when a message has this first byte. */
  poisonByte: number | undefined;

  constructor(name = "test", channelIds: readonly number[] = [TEST_CHANNEL]) {
    this.name = name;
    this.#channels = channelIds.map((id) => ({
      id,
      priority: 1,
      sendQueueCapacity: 10,
      recvMessageCapacity: 1 << 20,
      name: `${name}-${id}`,
    }));
  }

  channels(): readonly ChannelDescriptor[] {
    return this.#channels;
  }

  addPeer(peer: Peer): void {
    this.added.push(peer);
    this.#events.emit("change");
  }

  removePeer(peer: Peer, reason: unknown): void {
    this.removed.push({ peer, reason });
    this.#events.emit("change");
  }

  receive(channelId: number, peer: Peer, msg: Uint8Array): void {
    this.received.push({ channelId, from: peer.id, msg });
    this.#events.emit("change");
    if (this.poisonByte !== undefined && msg[0] === this.poisonByte) throw new P2PError("poisoned message");
  }

  until(cond: () => boolean, what = "condition", timeoutMs = 5000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onChange = () => {
        if (!cond()) return;
        clearTimeout(timer);
        this.#events.off("change", onChange);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#events.off("change", onChange);
        reject(new P2PError(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.#events.on("change", onChange);
    });
  }
}
