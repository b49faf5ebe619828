/**
 * The Go binaries the interop tests run (built by `npm run interop:install` into test/interop/bin/ at
 * the versions pinned in test/interop/versions.json), and helpers to run them: `cometbft` homes and
 * nodes, `abci-cli kvstore` socket servers. Every process listens on 127.0.0.1 and is stopped by PID.
 */

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { waitForHeight as waitForHeightOf } from "../integration/testNode.js";

const execFileAsync = promisify(execFile);

export const INTEROP_DIR = fileURLToPath(new URL(".", import.meta.url));
/** Where `npm run interop:install` puts the binaries: test/interop/bin/, or `COMETH_INTEROP_BIN` when set (both read it). */
export const INTEROP_BIN_DIR = process.env.COMETH_INTEROP_BIN || join(INTEROP_DIR, "bin");

interface PinnedModule {
  module: string;
  version: string;
  packages: Record<string, string>;
}
/** The pinned Go modules (test/interop/versions.json, the one place the versions are written). */
export const PINNED: { cometbft: PinnedModule; geth: PinnedModule; tendermint: PinnedModule } = JSON.parse(
  readFileSync(join(INTEROP_DIR, "versions.json"), "utf8"),
);

export type InteropBinary = "cometbft" | "abci-cli" | "geth" | "tm-signer-harness" | "cometbft-signer";

/** The path of a built binary (whether or not it exists). */
export function binaryPath(name: InteropBinary): string {
  return join(INTEROP_BIN_DIR, name);
}

/**
 * Why a test needing `names` cannot run (a binary is not built), or undefined when all are there.
 * The message says how to build them.
 */
export function missingBinaries(...names: InteropBinary[]): string | undefined {
  const missing = names.filter((n) => !existsSync(binaryPath(n)));
  if (missing.length === 0) return undefined;
  const groups = new Set(
    missing.map((n) => (n === "geth" ? "geth" : n === "tm-signer-harness" ? "tendermint" : "cometbft")),
  );
  const only = groups.size === 1 ? ` -- --only ${[...groups][0]}` : "";
  return (
    `skipped: ${missing.map((n) => binaryPath(n)).join(", ")} not built ` +
    `(run \`npm run interop:install${only}\`; it needs Go, and without Go it builds nothing)`
  );
}

/** Runs a binary to completion; rejects with its output when it exits non-zero. */
export async function runBinary(
  name: InteropBinary,
  args: readonly string[],
  opts: { timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(binaryPath(name), [...args], { timeout: opts.timeoutMs ?? 60_000, encoding: "utf8" });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${name} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

/** A long-running child process (a Go node or app), its output so far, and its exit. */
export interface GoProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  output(): string;
  /** Resolves with the first match of `re` in the output (checked as output arrives); rejects on exit. */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

export function spawnBinary(name: InteropBinary, args: readonly string[]): GoProcess {
  const child = spawn(binaryPath(name), [...args], { stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  const pid = child.pid;
  let out = "";
  let exitCode: number | null | undefined;
  const waiters = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      exitCode = code ?? (signal === null ? null : -1);
      resolve(code);
      for (const w of waiters) w();
    }),
  );
  const onData = (d: Buffer) => {
    out += d.toString();
    if (out.length > 4_000_000) out = out.slice(-2_000_000);
    for (const w of waiters) w();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  return {
    child,
    pid,
    exited,
    output: () => out,
    waitForOutput(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(out);
          if (m !== null) return done(() => resolve(m));
          if (exitCode !== undefined) {
            return done(() => reject(new Error(`${name} exited (${exitCode}) before printing ${re}:\n${out}`)));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`${name} did not print ${re} within ${timeoutMs} ms:\n${out}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    async stop(graceMs = 10_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (exitCode === undefined) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * The TCP ports `pid` listens on, read from /proc (Linux): the Go binaries take port 0 but do not all
 * print the port they were given.
 */
export function listeningTcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1] !== undefined) inodes.add(m[1]);
    } catch {
      // The fd closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const file of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is column 9.
      const [local, st, inode] = [cols[1], cols[3], cols[9]];
      if (local === undefined || st !== "0A" || inode === undefined || !inodes.has(inode)) continue;
      ports.push(Number.parseInt(local.slice(local.indexOf(":") + 1), 16));
    }
  }
  return ports;
}

/** `cometbft version` (e.g. "0.38.26"). */
export async function cometbftVersion(): Promise<string> {
  return (await runBinary("cometbft", ["version"])).stdout.trim();
}

/**
 * Sets `key = value` in `[section]` ("" for the top level) of a TOML file as CometBFT writes it
 * (`value` is TOML: quote strings). Fails when the key is not there, so a typo cannot pass unnoticed.
 */
export async function setTomlKeys(
  file: string,
  edits: Readonly<Record<string, Readonly<Record<string, string>>>>,
): Promise<void> {
  const lines = (await readFile(file, "utf8")).split("\n");
  for (const [section, keys] of Object.entries(edits)) {
    for (const [key, value] of Object.entries(keys)) {
      let current = "";
      let done = false;
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] as string;
        const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
        if (header?.[1] !== undefined) current = header[1];
        else if (current === section && new RegExp(`^\\s*${key.replace(/[.]/g, "\\.")}\\s*=`).test(line)) {
          lines[i] = `${key} = ${value}`;
          done = true;
          break;
        }
      }
      if (!done) throw new Error(`${file} has no key ${key} in [${section}]`);
    }
  }
  await writeFile(file, lines.join("\n"));
}

/** A `cometbft` node running on a home, with its node RPC address once it has started. */
export interface CometbftNode extends GoProcess {
  readonly home: string;
  /** `http://127.0.0.1:PORT` */
  readonly rpcUrl: string;
}

/** `cometbft init --home HOME` (a single-validator home with a fresh genesis). */
export async function initCometbftHome(home: string): Promise<void> {
  await runBinary("cometbft", ["init", "--home", home]);
}

/**
 * Starts `cometbft start --home HOME` with its RPC and p2p on 127.0.0.1 port 0 (plus `flags`) and
 * waits until its RPC server says where it listens.
 */
export async function startCometbft(home: string, flags: readonly string[] = []): Promise<CometbftNode> {
  const proc = spawnBinary("cometbft", [
    "start",
    "--home",
    home,
    "--rpc.laddr",
    "tcp://127.0.0.1:0",
    "--p2p.laddr",
    "tcp://127.0.0.1:0",
    ...flags,
  ]);
  try {
    const m = await proc.waitForOutput(/Starting RPC HTTP server on (\d+\.\d+\.\d+\.\d+:\d+)/);
    return Object.assign(proc, { home, rpcUrl: `http://${m[1]}` });
  } catch (err) {
    await proc.kill();
    throw err;
  }
}

/** A running `abci-cli kvstore` socket server and the address to give `proxy_app`. */
export interface AbciKvstore extends GoProcess {
  /** `tcp://127.0.0.1:PORT` or `unix:///path` */
  readonly address: string;
}

/**
 * Starts Go's example app, `abci-cli kvstore` (persisted in `persistDir`), as a socket (or gRPC) server on
 * `tcp://127.0.0.1:0` (the bound port is read from /proc) or on the unix socket `unixPath`.
 */
export async function startAbciKvstore(opts: {
  persistDir: string;
  unixPath?: string;
  /** `--abci`: the socket protocol (default) or gRPC. */
  abci?: "socket" | "grpc";
}): Promise<AbciKvstore> {
  const address = opts.unixPath === undefined ? "tcp://127.0.0.1:0" : `unix://${opts.unixPath}`;
  const abci = opts.abci ?? "socket";
  const proc = spawnBinary("abci-cli", ["kvstore", "--address", address, "--abci", abci, "--persist", opts.persistDir]);
  try {
    // Printed once the listener is open: by the socket server's accept loop, or the gRPC server.
    await proc.waitForOutput(abci === "grpc" ? /Listening/ : /Waiting for new connection/);
    if (opts.unixPath !== undefined) return Object.assign(proc, { address });
    const ports = listeningTcpPorts(proc.pid);
    if (ports.length !== 1) throw new Error(`abci-cli listens on ${ports.length} TCP ports, expected 1`);
    return Object.assign(proc, { address: `tcp://127.0.0.1:${ports[0]}` });
  } catch (err) {
    await proc.kill();
    throw err;
  }
}

/** The node RPC's URI GET helper the integration tests use (result, or a thrown error answer). */
export { rpcGet as rpcCall } from "../integration/testNode.js";

/** Polls `status` until the node's latest height reaches `height`: a Go node starts slower, so 60 s. */
export function waitForHeight(rpcUrl: string, height: number, timeoutMs = 60_000): Promise<number> {
  return waitForHeightOf(rpcUrl, height, timeoutMs);
}

/** A running `cometbft light` proxy and the address it serves the verified node RPC on. */
export interface LightProxy extends GoProcess {
  /** `http://127.0.0.1:PORT` */
  readonly rpcUrl: string;
}

/**
 * Starts Go's light client proxy, `cometbft light CHAIN_ID`, on `tcp://127.0.0.1:0`: it trusts the
 * header of `height` with hash `hash`, fetches from `primary`, cross-checks with `witnesses`, keeps its
 * trusted store in `homeDir`, and serves verified answers once it says where it listens.
 */
export async function startLightProxy(opts: {
  chainId: string;
  primary: string;
  witnesses: readonly string[];
  height: number;
  hash: string;
  homeDir: string;
  /** `--sequential`: verify every header in turn instead of skipping. */
  sequential?: boolean;
}): Promise<LightProxy> {
  const proc = spawnBinary("cometbft", [
    "light",
    opts.chainId,
    "--primary",
    opts.primary,
    "--witnesses",
    opts.witnesses.join(","),
    "--height",
    String(opts.height),
    "--hash",
    opts.hash,
    "--laddr",
    "tcp://127.0.0.1:0",
    "--home-dir",
    opts.homeDir,
    ...(opts.sequential === true ? ["--sequential"] : []),
  ]);
  try {
    const m = await proc.waitForOutput(/Starting RPC HTTP server on (\d+\.\d+\.\d+\.\d+:\d+)/, 30_000);
    return Object.assign(proc, { rpcUrl: `http://${m[1]}` });
  } catch (err) {
    await proc.kill();
    throw err;
  }
}
