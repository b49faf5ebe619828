import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A node running as a child process on 127.0.0.1 ephemeral ports, on its own temp home. */
export interface TestNodeProcess {
  home: string;
  rpcUrl: string;
  child: ChildProcess;
  output(): string;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<number | null>;
}

export async function makeTempHome(prefix = "cometh-it-"): Promise<{ home: string; cleanup(): Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

/** Runs a CLI subcommand to completion and returns its stdout. */
export async function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: ROOT });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { code, stdout, stderr };
}

/**
 * Starts `cometh start --home HOME` with RPC on port 0 and waits for the line announcing the bound
 * RPC address.
 */
export async function startNodeProcess(home: string, extraFlags: string[] = []): Promise<TestNodeProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli/main.ts",
      "start",
      "--home",
      home,
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      "--json-rpc.enable=false",
      "--p2p.laddr",
      "tcp://127.0.0.1:0",
      ...extraFlags,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  const rpcUrl = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /node RPC listening on (tcp:\/\/|http:\/\/)?(127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(`http://${m[2]}`);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => reject(new Error(`node exited with ${code} before its RPC started:\n${out}`)));
  });
  return {
    home,
    rpcUrl,
    child,
    output: () => out,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Calls a CometBFT RPC route over URI GET and returns `result` (throws on an error envelope). */
export async function rpcGet<T = unknown>(
  rpcUrl: string,
  route: string,
  params: Record<string, string> = {},
): Promise<T> {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${rpcUrl}/${route}${qs ? `?${qs}` : ""}`);
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${route}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

/** Polls `status` until the latest height reaches `height` (bounded by `timeoutMs`). */
export async function waitForHeight(rpcUrl: string, height: number, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await rpcGet<{ sync_info: { latest_block_height: string } }>(rpcUrl, "status");
    const h = Number(status.sync_info.latest_block_height);
    if (h >= height) return h;
    if (Date.now() > deadline) throw new Error(`height ${height} not reached in ${timeoutMs} ms (at ${h})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
