import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createTestnet, type TestnetNode } from "../../src/config/index.js";
import { makeTempHome, rpcGet, spawnNode, waitForHeight } from "./testNode.js";

/** Free loopback ports, found by binding port 0 (held together so they are distinct, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const s = createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as import("node:net").AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
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
