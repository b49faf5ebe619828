import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { generateEd25519PrivKey } from "../../types/index.js";
import type { ChannelDescriptor, NodeInfo } from "../reactor.js";
import { DEFAULT_MCONNECTION_CONFIG, type MConnectionConfig } from "./mConnection.js";
import { nodeIdFromEd25519, type PeerConnection, type UpgradeOptions, upgradeConnection } from "./upgradeConnection.js";

/** Test helpers for p2p/conn: loopback socket pairs, node identities, upgraded pairs. */

export interface TestNode {
  readonly privKey: Uint8Array;
  readonly id: string;
}

export function testNode(): TestNode {
  const privKey = generateEd25519PrivKey().bytes;
  return { privKey, id: nodeIdFromEd25519(privKey.slice(32)) };
}

export function testNodeInfo(node: TestNode, over: Partial<NodeInfo> = {}): NodeInfo {
  return {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id: node.id,
    listenAddr: "tcp://127.0.0.1:26656",
    network: "test-chain",
    version: "0.38.25",
    channels: Uint8Array.of(0x20, 0x21),
    moniker: "node",
    other: { txIndex: "on", rpcAddress: "tcp://127.0.0.1:26657" },
    ...over,
  };
}

export function channel(id: number, over: Partial<ChannelDescriptor> = {}): ChannelDescriptor {
  return { id, priority: 1, sendQueueCapacity: 10, recvMessageCapacity: 4 * 1024 * 1024, name: `ch${id}`, ...over };
}

/** Test config: fast flushing, keepalive out of the way unless a test sets it. */
export function testConfig(over: Partial<MConnectionConfig> = {}): MConnectionConfig {
  return {
    ...DEFAULT_MCONNECTION_CONFIG,
    sendRateBytesPerSec: 0,
    recvRateBytesPerSec: 0,
    flushThrottleMs: 10,
    ...over,
  };
}

/**
 * Two connected loopback sockets. With `transform`, bytes from `a` to `b` pass through a proxy
 * that may rewrite each chunk (given the stream offset of its first byte).
 */
export async function socketPair(
  transform?: (chunk: Buffer, offset: number) => Buffer,
): Promise<{ a: Socket; b: Socket; cleanup: () => void }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const accepted = once(server, "connection") as Promise<[Socket]>;
  const port = (server.address() as AddressInfo).port;
  const extra: Socket[] = [];
  let a: Socket;
  let aConnected: Promise<unknown>;
  if (transform) {
    const proxy = createServer();
    proxy.listen(0, "127.0.0.1");
    await once(proxy, "listening");
    const proxyAccepted = once(proxy, "connection") as Promise<[Socket]>;
    a = connect((proxy.address() as AddressInfo).port, "127.0.0.1");
    aConnected = once(a, "connect");
    const [inner] = await proxyAccepted;
    const upstream = connect(port, "127.0.0.1");
    await once(upstream, "connect");
    let offset = 0;
    inner.on("data", (chunk: Buffer) => {
      const out = transform(chunk, offset);
      offset += chunk.length;
      upstream.write(out);
    });
    upstream.on("data", (chunk: Buffer) => inner.write(chunk));
    const closeBoth = () => {
      inner.destroy();
      upstream.destroy();
    };
    for (const s of [inner, upstream]) {
      s.on("close", closeBoth);
      s.on("error", () => {});
    }
    extra.push(inner, upstream);
    proxy.close();
  } else {
    a = connect(port, "127.0.0.1");
    aConnected = once(a, "connect");
  }
  await aConnected;
  const [b] = await accepted;
  server.close();
  for (const s of [a, b]) s.on("error", () => {});
  return {
    a,
    b,
    cleanup: () => {
      for (const s of [a, b, ...extra]) s.destroy();
    },
  };
}

export interface Side {
  readonly node: TestNode;
  readonly nodeInfo?: NodeInfo;
  readonly channels?: readonly ChannelDescriptor[];
  readonly config?: MConnectionConfig;
  readonly expectedId?: string;
  readonly handshakeTimeoutMs?: number;
}

function options(side: Side): UpgradeOptions {
  const opts: UpgradeOptions = {
    privKey: side.node.privKey,
    nodeInfo: side.nodeInfo ?? testNodeInfo(side.node),
    channels: side.channels ?? [channel(0x20), channel(0x21)],
    handshakeTimeoutMs: side.handshakeTimeoutMs ?? 5_000,
    config: side.config ?? testConfig(),
  };
  return side.expectedId === undefined ? opts : { ...opts, expectedId: side.expectedId };
}

/** Upgrades both ends of a socket pair; `a` dials (may carry expectedId), `b` accepts. */
export async function upgradePair(
  a: Side,
  b: Side,
  transform?: (chunk: Buffer, offset: number) => Buffer,
): Promise<{
  a: PromiseSettledResult<PeerConnection>;
  b: PromiseSettledResult<PeerConnection>;
  cleanup: () => void;
}> {
  const pair = await socketPair(transform);
  const [ra, rb] = await Promise.allSettled([
    upgradeConnection(pair.a, options(a)),
    upgradeConnection(pair.b, options(b)),
  ]);
  return {
    a: ra,
    b: rb,
    cleanup: () => {
      if (ra.status === "fulfilled") ra.value.close();
      if (rb.status === "fulfilled") rb.value.close();
      pair.cleanup();
    },
  };
}

export function fulfilled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === "rejected") throw r.reason;
  return r.value;
}

export function rejected<T>(r: PromiseSettledResult<T>): unknown {
  if (r.status === "fulfilled") throw new TypeError("expected the upgrade to fail, but it succeeded");
  return r.reason;
}

/** Collects what a started connection delivers; `next(n)` resolves once n messages arrived. */
export class Inbox {
  readonly messages: { channelId: number; msg: Uint8Array }[] = [];
  readonly error: Promise<unknown>;
  errors = 0;
  #waiters: { n: number; resolve: () => void }[] = [];
  #fail!: (err: unknown) => void;

  constructor() {
    this.error = new Promise((resolve) => {
      this.#fail = resolve;
    });
  }

  start(conn: PeerConnection): this {
    conn.start(
      (channelId, msg) => {
        this.messages.push({ channelId, msg });
        this.#waiters = this.#waiters.filter((w) => {
          if (this.messages.length < w.n) return true;
          w.resolve();
          return false;
        });
      },
      (err) => {
        this.errors++;
        this.#fail(err);
      },
    );
    return this;
  }

  count(n: number): Promise<void> {
    if (this.messages.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}
