import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createTestnet, type TestnetNode } from "../../src/config/index.js";
import { makeTempHome, rpcGet, spawnNode, waitForHeight } from "./testNode.js";

/**
 * The ports tests hand to child processes come from below the kernel's ephemeral range
 * (32768–60999 on Linux). A port found by binding port 0 lies inside that range, and between
 * our release of it and the child's bind, any outgoing connection or `listen(0)` on the machine
 * (another vitest worker, a node dialling a peer) may take it: CI once saw a dev chain fail with
 * EADDRINUSE that way. Below the range only another caller of this function can collide, and it
 * picks at random; ports handed out by this process are not handed out again.
 */
const LOW_PORT = 20_000;
const HIGH_PORT = 32_000;
const handedOut = new Set<number>();

function tryBind(port: number): Promise<import("node:net").Server | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(undefined));
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
}

/** Free loopback ports outside the ephemeral range, held together while picked (so distinct), then released. */
export async function freePorts(n: number): Promise<number[]> {
  const held: import("node:net").Server[] = [];
  const ports: number[] = [];
  for (let attempt = 0; ports.length < n; attempt++) {
    if (attempt > n * 50 + 200) throw new Error(`freePorts: no ${n} free ports in ${LOW_PORT}-${HIGH_PORT}`);
    const port = LOW_PORT + Math.floor(Math.random() * (HIGH_PORT - LOW_PORT));
    if (handedOut.has(port)) continue;
    const s = await tryBind(port);
    if (s === undefined) continue;
    held.push(s);
    ports.push(port);
    handedOut.add(port);
  }
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** One node of a loopback testnet, run as a child process (`cometh start --home`). */
export class TestnetProcess {
  readonly node: TestnetNode;
  readonly rpcUrl: string;
  /** `http://127.0.0.1:PORT` of the Ethereum JSON-RPC (served only with `jsonRpc`). */
  readonly evmUrl: string;
  readonly #jsonRpc: boolean;
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> | undefined;
  #output: () => string = () => "";

  constructor(node: TestnetNode, jsonRpc = false) {
    this.node = node;
    this.rpcUrl = `http://127.0.0.1:${node.rpcPort}`;
    this.evmUrl = `http://127.0.0.1:${node.jsonRpcPort}`;
    this.#jsonRpc = jsonRpc;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Output of the current (or last) run. */
  output(): string {
    return this.#output();
  }

  /** Starts `cometh start`; `flags` are added to its command line (e.g. `--statesync.enable=true`). */
  async start(flags: readonly string[] = []): Promise<void> {
    if (this.#child !== undefined) return;
    const node = spawnNode(["start", "--home", this.node.home, `--json-rpc.enable=${this.#jsonRpc}`, ...flags]);
    this.#child = node.child;
    this.#exited = node.exited;
    this.#output = node.output;
    // A node that exits (at start or later) is no longer running: start() may run it again.
    void node.exited.then(() => {
      if (this.#child === node.child) this.#child = undefined;
    });
    await node.ready;
  }

  /** SIGKILL (a crash). */
  async kill(): Promise<void> {
    if (this.#child === undefined) return;
    this.#child.kill("SIGKILL");
    await this.#exited;
    this.#child = undefined;
  }

  /** SIGTERM and wait for the exit. */
  async stop(): Promise<void> {
    if (this.#child === undefined) return;
    this.#child.kill("SIGTERM");
    await this.#exited;
    this.#child = undefined;
  }

  async height(): Promise<number> {
    const s = await rpcGet<{ sync_info: { latest_block_height: string } }>(this.rpcUrl, "status");
    return Number(s.sync_info.latest_block_height);
  }

  async blockHash(height: number): Promise<string> {
    const b = await rpcGet<{ block_id: { hash: string } }>(this.rpcUrl, "block", { height: String(height) });
    return b.block_id.hash;
  }

  /** Polls status until `height` (bounded); the error carries the end of the node's output. */
  async waitForHeight(height: number, timeoutMs = 60_000): Promise<number> {
    try {
      return await waitForHeight(this.rpcUrl, height, timeoutMs);
    } catch (err) {
      throw new Error(`${this.node.name}: ${(err as Error).message}\n${this.#output().slice(-4000)}`);
    }
  }
}

export interface Testnet {
  chainId: string;
  nodes: TestnetProcess[];
  dir: string;
  close(): Promise<void>;
}

/** Writes a loopback testnet on free ports (kvstore app, short timeouts) without starting it. */
export async function makeTestnet(
  validators: number,
  config: Record<string, string | boolean | number> = {},
  opts: { proxyApp?: "kvstore" | "evm"; nonValidators?: number } = {},
): Promise<Testnet> {
  const { home: dir, cleanup } = await makeTempHome("cometh-testnet-");
  const ports = await freePorts((validators + (opts.nonValidators ?? 0)) * 4);
  const result = await createTestnet({
    outputDir: dir,
    validators,
    nonValidators: opts.nonValidators ?? 0,
    chainId: "cometh-testnet",
    proxyApp: opts.proxyApp ?? "kvstore",
    ports: (i) => ({
      p2p: ports[i * 4] as number,
      rpc: ports[i * 4 + 1] as number,
      jsonRpc: ports[i * 4 + 2] as number,
      jsonRpcWs: ports[i * 4 + 3] as number,
    }),
    config: {
      log_level: "info",
      "consensus.timeout_propose": "600ms",
      "consensus.timeout_commit": "100ms",
      "rpc.unsafe": true,
      ...config,
    },
  });
  const nodes = result.nodes.map((n) => new TestnetProcess(n, opts.proxyApp === "evm"));
  return {
    chainId: result.chainId,
    nodes,
    dir,
    close: async () => {
      await Promise.all(nodes.map((n) => n.kill()));
      await cleanup();
    },
  };
}
