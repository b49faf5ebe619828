import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestnet, type TestnetNode } from "../../src/config/index.js";
import { rpcGet } from "./testNode.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

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
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private out = "";

  constructor(node: TestnetNode, jsonRpc = false) {
    this.node = node;
    this.rpcUrl = `http://127.0.0.1:${node.rpcPort}`;
    this.evmUrl = `http://127.0.0.1:${node.jsonRpcPort}`;
    this.#jsonRpc = jsonRpc;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Output of the current (or last) run. */
  output(): string {
    return this.out;
  }

  async start(): Promise<void> {
    if (this.child !== undefined) return;
    this.out = "";
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", "start", "--home", this.node.home, `--json-rpc.enable=${this.#jsonRpc}`],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.on("exit", (c) => resolve(c)));
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        this.out += d.toString();
        if (this.out.length > 2_000_000) this.out = this.out.slice(-1_000_000);
        if (/node RPC listening on/.test(this.out)) resolve();
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      void this.exited?.then((code) => reject(new Error(`${this.node.name} exited with ${code}:\n${this.out}`)));
    });
  }

  /** SIGKILL (a crash). */
  async kill(): Promise<void> {
    if (this.child === undefined) return;
    this.child.kill("SIGKILL");
    await this.exited;
    this.child = undefined;
  }

  /** SIGTERM and wait for the exit. */
  async stop(): Promise<void> {
    if (this.child === undefined) return;
    this.child.kill("SIGTERM");
    await this.exited;
    this.child = undefined;
  }

  async height(): Promise<number> {
    const s = await rpcGet<{ sync_info: { latest_block_height: string } }>(this.rpcUrl, "status");
    return Number(s.sync_info.latest_block_height);
  }

  async blockHash(height: number): Promise<string> {
    const b = await rpcGet<{ block_id: { hash: string } }>(this.rpcUrl, "block", { height: String(height) });
    return b.block_id.hash;
  }

  /** Polls status until `height` (bounded). */
  async waitForHeight(height: number, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let h = -1;
      try {
        h = await this.height();
      } catch {
        // Starting up.
      }
      if (h >= height) return h;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.node.name}: height ${height} not reached in ${timeoutMs} ms (at ${h})\n${this.out.slice(-4000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
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
  opts: { proxyApp?: "kvstore" | "evm" } = {},
): Promise<Testnet> {
  const dir = await mkdtemp(join(tmpdir(), "cometh-testnet-"));
  const ports = await freePorts(validators * 4);
  const result = await createTestnet({
    outputDir: dir,
    validators,
    nonValidators: 0,
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
      await rm(dir, { recursive: true, force: true });
    },
  };
}
