import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/**
 * The CLI as the `cometh` binary runs it: bin/cometh.js runs the bundled build in dist/ while it is
 * at least as new as every source file, else the sources through tsx, so tests see edits without a
 * build. A node from the build starts in about a fifth of the CPU time tsx's loader takes (it
 * compiles every module of src/ in each child), which most of the integration tests' time was.
 */
const CLI = ["bin/cometh.js"];
/**
 * How `npm start` runs cometh, read from package.json's start script
 * (`[NAME=value ...] node <flags> bin/cometh.js start`): the environment it sets and its Node flags.
 */
export const NPM_START: { readonly env: Readonly<Record<string, string>>; readonly nodeFlags: readonly string[] } =
  (() => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
    const m = /^((?:[A-Z_]+=[^ ]+ )*)node((?: --[^ ]+)*) bin\/cometh\.js start$/.exec(pkg.scripts.start);
    if (m === null) throw new Error(`cannot read how npm start runs node from "${pkg.scripts.start}"`);
    const env = Object.fromEntries(
      (m[1] as string)
        .split(" ")
        .filter(Boolean)
        .map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]),
    );
    return { env, nodeFlags: (m[2] as string).split(" ").filter(Boolean) };
  })();
/** The launcher as `npm start` runs it (its Node flags; the bundled build when fresh), for benchmarks. */
const LAUNCHER = [...NPM_START.nodeFlags, "bin/cometh.js"];

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
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT });
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

/** A `cometh` child process: its output so far, its exit, and the bound node RPC address once announced. */
export interface SpawnedNode {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  /** `host:port` of the node RPC; rejects if the process exits before announcing it. */
  ready: Promise<string>;
}

/**
 * Runs `bin/cometh.js <args>` from the checkout (`launcher`: with the Node flags and environment
 * `npm start` adds; `env`: more variables); output is kept (the last 1 MB at most).
 */
export function spawnNode(
  args: readonly string[],
  opts: { launcher?: boolean; env?: Readonly<Record<string, string>> } = {},
): SpawnedNode {
  const child = spawn(process.execPath, [...(opts.launcher === true ? LAUNCHER : CLI), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...(opts.launcher === true ? NPM_START.env : {}), ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let announced = false;
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.length > 2_000_000) out = out.slice(-1_000_000);
      if (announced) return;
      const m = /node RPC listening on (?:tcp:\/\/|http:\/\/)?([^\s]+:\d+)/.exec(out);
      if (m?.[1] !== undefined) {
        announced = true;
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => reject(new Error(`node exited with ${code} before its RPC started:\n${out}`)));
  });
  return { child, exited, output: () => out, ready };
}

/**
 * Starts `cometh start --home HOME` with RPC on port 0 and waits for the line announcing the bound
 * RPC address (`launcher`: with `npm start`'s Node flags and environment).
 */
export async function startNodeProcess(
  home: string,
  extraFlags: string[] = [],
  opts: { launcher?: boolean } = {},
): Promise<TestNodeProcess> {
  const node = spawnNode(
    [
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
    opts,
  );
  const rpcUrl = `http://${await node.ready}`;
  return {
    home,
    rpcUrl,
    child: node.child,
    output: node.output,
    async kill() {
      node.child.kill("SIGKILL");
      await node.exited;
    },
    async stop() {
      node.child.kill("SIGTERM");
      return node.exited;
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
    let h = -1;
    try {
      const status = await rpcGet<{ sync_info: { latest_block_height: string } }>(rpcUrl, "status");
      h = Number(status.sync_info.latest_block_height);
    } catch {
      // Not answering yet (starting up, or restarting).
    }
    if (h >= height) return h;
    if (Date.now() > deadline) throw new Error(`height ${height} not reached in ${timeoutMs} ms (at ${h})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
