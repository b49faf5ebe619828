/**
 * npm run bench:dev [-- options]
 *
 * Dev-chain methods as a test suite uses them, against `cometh dev`, Anvil and Hardhat 3 (`hardhat node`),
 * started fresh on 127.0.0.1 and stopped by their PIDs (then their process groups) when their part ends. For
 * rows 1, 3 and 4 the nodes run side by side; each row 1 is interleaved: the nodes take turns of --slice-ms
 * (250) of timed cycles each (the first node first in even rounds, last in odd ones) until each has
 * --seconds timed, so that a change in the machine's load falls on all of them and the ratios of one run
 * are trustworthy on a shared machine; a node waits idle while another is measured.
 *   1. loadFixture cycles/s: evm_snapshot, then --fixture-txs (10) pre-signed EIP-1559 ETH transfers from dev
 *      account 0, each sent with eth_sendRawTransaction and awaited, its receipt fetched (polled until it
 *      exists: all three automine, Anvil mines just after answering), then evm_revert(id); repeated for
 *      --seconds (5) of timed cycles. Two rows: every cycle sends the same signed bytes (the revert makes the
 *      nonces reusable), and every cycle sends different txs (recipients differ, all signed in advance), so
 *      a cache (a seen-tx cache, a memoized answer) is not mistaken for speed. After every cycle, untimed: the
 *      sender's nonce and the block number must be back to the snapshot's, and (distinct row) the recipients'
 *      balances back to 0; the first mismatch ends the row and is reported with the exact request and answer.
 *      A third row sends each transfer with eth_sendTransaction from the unlocked account instead (the node
 *      fills the nonce and signs), as Hardhat's ethers signers and viem's test clients do; distinct recipients.
 *   2. hardhat_mine(--mine-blocks, 1000) wall time, median of --mine-reps (3), each rep on a fresh node at
 *      block 0 (one tool's cost per block may grow with the blocks it holds: Anvil's does), the nodes'
 *      reps alternating after the other rows; Anvil gets anvil_mine (it also answers hardhat_mine). The
 *      block number must grow by exactly --mine-blocks.
 *   3. evm_increaseTime(60) + evm_mine round trip, sequential, --time-pairs (200) pairs after 5 untimed:
 *      median and p99. The head's timestamp must have grown by at least 60 s per pair.
 *   4. Sends on a growing chain, no revert: --chain-sends (1000) eth_sendTransaction from the unlocked
 *      account, each awaited with its receipt, after row 3 on the same node; the median of a send plus
 *      its receipt over the second half. Row 1 reverts every --fixture-txs blocks; a suite that does not
 *      revert grows its chain, and a tool whose cost per block grows with its blocks shows it here. The
 *      sender's nonce must have grown by exactly N.
 * Options: --nodes cometh,anvil,hardhat  --seconds S  --slice-ms MS  --warmup-seconds S (1: untimed cycles on
 * each node before row 1; 0 leaves the 3 cycles of the first versions)  --fixture-txs N  --max-cycles N (distinct cycles at
 * most, default 5000: the distinct row signs 1.5 x the same-bytes row's rate x --seconds before it starts,
 * and another batch between two cycles, untimed, if that runs out; it ends early with a note at the cap)
 * --mine-blocks N  --mine-reps N  --time-pairs N  --chain-sends N  --startup-spawns N (5: the start-up row is the median
 * of N spawns, each measured from spawn to its first eth_chainId answer, then eth_blockNumber must answer
 * 0x0 at once; the last spawn runs the rest)  --floor-spawns N (9; 0 skips it: after the table, Node.js's own
 * floor for the start-up row, an empty node:http server answering fixed eth_chainId/eth_blockNumber bodies under
 * npm run dev's Node flags, spawned N times alternating with N more spawns of cometh dev; both medians)  --json. A short run:
 *   npm run bench:dev -- --nodes cometh,anvil --seconds 1 --mine-blocks 100 --mine-reps 1 --time-pairs 20 --chain-sends 100
 * Hardhat answers hardhat_mine in ~0 ms whatever the count: EDR reserves a range of empty blocks and builds
 * each only when it is read. All three start at block 0 and make no block unasked (the checks after each
 * revert would catch one).
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
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { HDNodeWallet, Transaction } from "ethers";
import { percentile } from "./load.js";
import {
  ANVIL,
  buildCometh,
  CHAIN_ID,
  COMETH_DEV,
  HARDHAT,
  MNEMONIC,
  type NodeSpec,
  npmScript,
  ROOT,
  type Running,
  runNodes,
  sleep,
  startNode,
  stopNode,
  waitForChainId,
} from "./nodes.js";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "cometh,anvil,hardhat" },
    seconds: { type: "string", default: "5" },
    "slice-ms": { type: "string", default: "250" },
    "warmup-seconds": { type: "string", default: "1" },
    "fixture-txs": { type: "string", default: "10" },
    "max-cycles": { type: "string", default: "5000" },
    "mine-blocks": { type: "string", default: "1000" },
    "mine-reps": { type: "string", default: "3" },
    "time-pairs": { type: "string", default: "200" },
    "chain-sends": { type: "string", default: "1000" },
    "startup-spawns": { type: "string", default: "5" },
    "floor-spawns": { type: "string", default: "9" },
    json: { type: "boolean", default: false },
  },
});

const GWEI = 1_000_000_000n;
const SENDER = HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/0");

const opts = {
  seconds: Number(values.seconds),
  sliceMs: Number(values["slice-ms"]),
  warmupSeconds: Number(values["warmup-seconds"]),
  fixtureTxs: Number(values["fixture-txs"]),
  maxCycles: Number(values["max-cycles"]),
  mineBlocks: Number(values["mine-blocks"]),
  mineReps: Number(values["mine-reps"]),
  timePairs: Number(values["time-pairs"]),
  chainSends: Number(values["chain-sends"]),
  startupSpawns: Number(values["startup-spawns"]),
  floorSpawns: Number(values["floor-spawns"]),
};
for (const [k, v] of Object.entries(opts)) {
  if (!Number.isFinite(v) || v < 0 || (v === 0 && k !== "warmupSeconds")) {
    throw new RangeError(`--${k} must be a positive number (got ${v})`);
  }
}
for (const k of [
  "fixtureTxs",
  "maxCycles",
  "mineBlocks",
  "mineReps",
  "timePairs",
  "chainSends",
  "startupSpawns",
] as const) {
  if (!Number.isInteger(opts[k])) throw new RangeError(`--${k} must be a whole number (got ${opts[k]})`);
}

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
    let text: string;
    try {
      text = await this.post(req, timeoutMs);
    } catch (e) {
      if (e instanceof RpcError) throw e;
      throw new RpcError(`request ${clip(req)} got no answer: ${(e as Error).message}`);
    }
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
  /** eth_sendRawTransaction's argument; undefined: sent by eth_sendTransaction as `request`. */
  raw?: string;
  /** The hash the send must answer (undefined: whatever eth_sendTransaction answers). */
  hash?: string;
  request?: Record<string, string>;
  to: string;
}

/** `count` cycles of --fixture-txs unlocked sends from account 0 (the node signs); cycle c pays recipient(c, i). */
function unlockedCycles(first: number, count: number, maxFee: bigint): Signed[][] {
  const out: Signed[][] = [];
  for (let c = first; c < first + count; c++) {
    const cycle: Signed[] = [];
    for (let i = 0; i < opts.fixtureTxs; i++) {
      const to = recipient(c, i);
      cycle.push({
        to,
        request: {
          from: SENDER.address,
          to,
          value: hex(GWEI),
          gas: hex(21_000),
          maxFeePerGas: hex(maxFee),
          maxPriorityFeePerGas: hex(GWEI),
        },
      });
    }
    out.push(cycle);
  }
  return out;
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
  /** One cycle's time: median, p99 and slowest, ms. */
  p50: number;
  p99: number;
  max: number;
}

interface NodeResult {
  name: string;
  client: string;
  startupMs?: number;
  /** Every spawn's time to its first eth_chainId answer, ms. */
  startupAll?: number[];
  fixtureSame?: FixtureResult;
  fixtureDistinct?: FixtureResult;
  fixtureUnlocked?: FixtureResult;
  mineMs?: number;
  mineAll?: number[];
  timeP50?: number;
  timeP99?: number;
  /** Row 4: one send with its receipt over the second half of --chain-sends, p50 ms. */
  chainP50?: number;
  /** Rows that failed (value shown as FAIL). */
  failed: Set<string>;
  /** Rows timed to the end whose answers were wrong (value shown with ✗). */
  wrong: Set<string>;
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
    const hash =
      tx.raw !== undefined
        ? await rpc.call<string>("eth_sendRawTransaction", [tx.raw])
        : await rpc.call<string>("eth_sendTransaction", [tx.request]);
    if (tx.hash !== undefined && hash.toLowerCase() !== tx.hash.toLowerCase()) {
      throw new Mismatch(`${label}: eth_sendRawTransaction answered ${hash} for a tx whose hash is ${tx.hash}`);
    }
    const r = await receipt(rpc, hash);
    if (r.status !== "0x1") throw new Mismatch(`${label}: receipt of ${hash} has status ${r.status}`);
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

/**
 * One fixture row on one node, run in slices: `slice(ms)` runs cycles until that much more time is timed
 * (or the row's --seconds are reached, or its pre-signed cycles or wall-time bound run out), so that the
 * nodes' slices can alternate (fixtureRows).
 */
class FixtureRun {
  cycles = 0;
  timed = 0;
  blocks = 0;
  readonly times: number[] = [];
  /** Ended early (out of cycles, wall-time bound) or by an error. */
  ended = false;
  readonly #wallDeadline = performance.now() + opts.seconds * 4000 + 60_000;

  readonly rpc: Rpc;
  readonly base: Base;
  readonly label: string;
  readonly txsOf: (c: number) => Signed[] | undefined;
  readonly checkRecipients: boolean;
  readonly notes: string[];

  constructor(
    rpc: Rpc,
    base: Base,
    label: string,
    txsOf: (c: number) => Signed[] | undefined,
    checkRecipients: boolean,
    notes: string[],
  ) {
    this.rpc = rpc;
    this.base = base;
    this.label = label;
    this.txsOf = txsOf;
    this.checkRecipients = checkRecipients;
    this.notes = notes;
  }

  get done(): boolean {
    return this.ended || this.timed >= opts.seconds * 1000;
  }

  async slice(ms: number): Promise<void> {
    const until = this.timed + ms;
    while (!this.done && this.timed < until) {
      const txs = this.txsOf(this.cycles);
      if (txs === undefined) {
        this.notes.push(
          `${this.label}: ran out of pre-signed cycles after ${this.cycles} (${(this.timed / 1000).toFixed(2)} s timed)`,
        );
        this.ended = true;
        return;
      }
      if (performance.now() > this.#wallDeadline) {
        this.notes.push(
          `${this.label}: wall-time bound reached after ${this.cycles} cycles (${(this.timed / 1000).toFixed(2)} s timed)`,
        );
        this.ended = true;
        return;
      }
      const r = await cycle(this.rpc, txs, this.base, `${this.label}, cycle ${this.cycles + 1}`, this.checkRecipients);
      this.timed += r.ms;
      this.times.push(r.ms);
      this.blocks += r.blocks;
      this.cycles++;
    }
  }

  result(): FixtureResult {
    const times = [...this.times].sort((a, b) => a - b);
    return {
      cycles: this.cycles,
      seconds: this.timed / 1000,
      cps: this.cycles / (this.timed / 1000),
      blocksPerCycle: this.blocks / this.cycles,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: times[times.length - 1] ?? Number.NaN,
    };
  }
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

/** A node started for the fixture and time rows, with what its rows need (untimed setup). */
interface Session {
  spec: DevSpec;
  node: Running;
  rpc: Rpc;
  r: NodeResult;
  base: Base;
  nonce: number;
  maxFee: bigint;
}

/** The fee cap, the sender's nonce and the head (untimed). */
async function setupOf(rpc: Rpc): Promise<{ base: Base; nonce: number; maxFee: bigint }> {
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
  const base: Base = { nonce: nonceHex, block: await rpc.call<string>("eth_blockNumber") };
  return { base, nonce: Number(nonceHex), maxFee };
}

/**
 * One fixture row on every node, interleaved: each node runs cycles for --slice-ms of timed time in
 * turn (the first node first in even rounds, last in odd ones), until each has --seconds timed, so a
 * change in the machine's load falls on every node alike and the ratios of one run compare like with
 * like. A node whose cycle fails (an error or a wrong answer) leaves the row; the others go on.
 */
async function fixtureRows(
  sessions: Session[],
  key: "same" | "distinct" | "unlocked",
  make: (s: Session) => FixtureRun | undefined,
  store: (s: Session, f: FixtureResult) => void,
): Promise<void> {
  const runs: { s: Session; run: FixtureRun }[] = [];
  for (const s of sessions) {
    try {
      const run = make(s);
      if (run !== undefined) runs.push({ s, run });
    } catch (e) {
      fail(s.r, key, e);
    }
  }
  for (let round = 0; runs.some((x) => !x.run.done && !x.s.r.failed.has(key)); round++) {
    const order = round % 2 === 0 ? runs : [...runs].reverse();
    for (const { s, run } of order) {
      if (run.done || s.r.failed.has(key)) continue;
      try {
        await run.slice(opts.sliceMs);
      } catch (e) {
        fail(s.r, key, e);
      }
    }
  }
  for (const { s, run } of runs) {
    if (s.r.failed.has(key) || run.cycles === 0) continue;
    const f = run.result();
    store(s, f);
    console.log(`  ${s.spec.name} ${run.label}: ${fmtFixture(f)}`);
  }
}

/** 1. The three fixture rows, each interleaved across the nodes (fixtureRows). */
async function measureFixtures(sessions: Session[]): Promise<void> {
  // 1a. The same signed bytes every cycle. Warm-up on each node, untimed: these cycles for
  // --warmup-seconds (at least 3 cycles, at most 60 s), so that the first row is not also the one that
  // pays for cometh's JIT warm-up (V8 optimizes the block path after a few hundred blocks; the start-up
  // row measures a cold node).
  const sameLabel = "loadFixture, same txs";
  const same = (s: Session) => signedFor("same", 0, 1, s.nonce, s.maxFee)[0] as Signed[];
  for (const s of sessions) {
    try {
      const t0 = performance.now();
      let n = 0;
      for (; n < 3 || performance.now() - t0 < Math.min(opts.warmupSeconds * 1000, 60_000); n++) {
        await cycle(s.rpc, same(s), s.base, `${sameLabel}, warm-up ${n + 1}`, true);
      }
      s.r.notes.push(`warm-up: ${n} untimed cycles in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      fail(s.r, "same", e);
    }
  }
  await fixtureRows(
    sessions.filter((s) => !s.r.failed.has("same")),
    "same",
    (s) => new FixtureRun(s.rpc, s.base, sameLabel, () => same(s), false, s.r.notes),
    (s, f) => {
      s.r.fixtureSame = f;
    },
  );

  // 1b. Different txs every cycle, signed before the row (untimed): enough for 1.5 x the same row's rate.
  const distinctLabel = "loadFixture, distinct txs";
  for (const s of sessions)
    if (s.r.failed.has("same")) s.r.notes.push(`${distinctLabel}: skipped, the same-txs row failed`);
  await fixtureRows(
    sessions.filter((s) => !s.r.failed.has("same")),
    "distinct",
    (s) => {
      const rate = s.r.fixtureSame?.cps ?? 200;
      const want = Math.min(opts.maxCycles, Math.ceil(rate * opts.seconds * 1.5) + 10);
      const t0 = performance.now();
      let distinct = signedFor("distinct", 1, want, s.nonce, s.maxFee);
      console.log(
        `  ${s.spec.name}: signed ${want} x ${opts.fixtureTxs} txs in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      // Runs out: sign another chunk between two cycles (outside the timed part), up to --max-cycles.
      const txsOf = (c: number) => {
        if (c >= distinct.length && c < opts.maxCycles) {
          distinct = signedFor("distinct", 1, Math.min(opts.maxCycles, distinct.length * 2), s.nonce, s.maxFee);
        }
        return distinct[c];
      };
      return new FixtureRun(s.rpc, s.base, distinctLabel, txsOf, true, s.r.notes);
    },
    (s, f) => {
      s.r.fixtureDistinct = f;
    },
  );

  // 1c. eth_sendTransaction from an unlocked dev account (the node signs; what Hardhat's and viem's
  // test clients send), different recipients every cycle.
  const unlockedLabel = "loadFixture, eth_sendTransaction";
  await fixtureRows(
    sessions,
    "unlocked",
    (s) => {
      let unlocked = unlockedCycles(1, Math.min(opts.maxCycles, 256), s.maxFee);
      const txsOf = (c: number) => {
        if (c >= unlocked.length && c < opts.maxCycles) {
          unlocked = unlocked.concat(
            unlockedCycles(
              1 + unlocked.length,
              Math.min(opts.maxCycles, unlocked.length * 2) - unlocked.length,
              s.maxFee,
            ),
          );
        }
        return unlocked[c];
      };
      return new FixtureRun(s.rpc, s.base, unlockedLabel, txsOf, true, s.r.notes);
    },
    (s, f) => {
      s.r.fixtureUnlocked = f;
    },
  );
}

// 2. hardhat_mine / anvil_mine: on fresh nodes after the sessions stop (mineRows).

/**
 * 3. evm_increaseTime(60) + evm_mine, sequential (5 untimed first), on one node. After each pair, untimed:
 * the new head's timestamp must be at least 60 s after the previous head's (Anvil and Hardhat keep that
 * even after a hardhat_mine/anvil_mine has moved the head past the clock). Pairs that do not are counted
 * and the first quoted; the timing stands, shown with a ✗.
 */
async function timeRow(rpc: Rpc, r: NodeResult): Promise<void> {
  try {
    const head = async () =>
      BigInt((await rpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false])).timestamp);
    for (let i = 0; i < 5; i++) {
      await rpc.call("evm_increaseTime", [60]);
      await rpc.call("evm_mine");
    }
    const ts0 = await head();
    let prev = ts0;
    let short = 0;
    let first = "";
    const times: number[] = [];
    const wallDeadline = performance.now() + 300_000;
    for (let i = 0; i < opts.timePairs && performance.now() < wallDeadline; i++) {
      const t0 = performance.now();
      const inc = await rpc.call<unknown>("evm_increaseTime", [60]);
      const mined = await rpc.call<unknown>("evm_mine");
      times.push(performance.now() - t0);
      const ts = await head();
      if (ts - prev < 60n) {
        short++;
        first ||= `pair ${i + 1}: evm_increaseTime([60]) answered ${JSON.stringify(inc)}, evm_mine([]) answered ${JSON.stringify(mined)}, and the head's timestamp went from ${prev} to ${ts} (+${ts - prev} s, expected at least +60)`;
      }
      prev = ts;
    }
    if (times.length < opts.timePairs) r.notes.push(`time pairs: only ${times.length} within 300 s`);
    times.sort((a, b) => a - b);
    r.timeP50 = percentile(times, 50);
    r.timeP99 = percentile(times, 99);
    console.log(
      `  evm_increaseTime(60)+evm_mine x${times.length}: p50 ${r.timeP50.toFixed(2)} ms, p99 ${r.timeP99.toFixed(2)} ms (head +${prev - ts0} s)`,
    );
    if (short > 0) {
      r.wrong.add("time");
      const msg = `${short} of ${times.length} pairs moved the head less than 60 s (head +${prev - ts0} s in all, expected at least +${60 * times.length}); first: ${first}`;
      r.notes.push(`${ROW_LABELS.time}: wrong answers: ${msg}`);
      console.log(`  time WRONG: ${msg}`);
    }
  } catch (e) {
    fail(r, "time", e);
  }
}

/**
 * 4. Sends on a growing chain, with no revert: --chain-sends (1000) eth_sendTransaction from the unlocked
 * account 0 to distinct recipients (as row 1's third kind), each awaited and its receipt fetched, on one
 * node after row 3; the median of a send plus its receipt over the second half, when the chain is
 * N/2..N blocks longer than at the row's start. A suite that does not revert between tests grows its
 * chain so, and a tool whose cost per block grows with its blocks shows it here (row 1 reverts every
 * --fixture-txs blocks, so it never does). After the row, untimed: the sender's nonce must have grown by
 * exactly N.
 */
async function chainRow(s: Session): Promise<void> {
  const { rpc, r } = s;
  try {
    const nonce0 = BigInt(await rpc.call<string>("eth_getTransactionCount", [SENDER.address, "latest"]));
    const times: number[] = [];
    const wallDeadline = performance.now() + 300_000;
    for (let i = 0; i < opts.chainSends && performance.now() < wallDeadline; i++) {
      const to = recipient(0xc0000 + i, 0);
      const t0 = performance.now();
      const hash = await rpc.call<string>("eth_sendTransaction", [
        {
          from: SENDER.address,
          to,
          value: hex(GWEI),
          gas: hex(21_000),
          maxFeePerGas: hex(s.maxFee),
          maxPriorityFeePerGas: hex(GWEI),
        },
      ]);
      const rc = await receipt(rpc, hash);
      times.push(performance.now() - t0);
      if (rc.status !== "0x1") throw new Mismatch(`send ${i + 1}: receipt of ${hash} has status ${rc.status}`);
    }
    const nonce = BigInt(await rpc.call<string>("eth_getTransactionCount", [SENDER.address, "latest"]));
    if (nonce - nonce0 !== BigInt(times.length)) {
      throw new Mismatch(`after ${times.length} sends the sender's nonce went from ${nonce0} to ${nonce}`);
    }
    if (times.length < opts.chainSends) r.notes.push(`chain sends: only ${times.length} within 300 s`);
    const half = times.slice(Math.floor(times.length / 2)).sort((a, b) => a - b);
    r.chainP50 = percentile(half, 50);
    console.log(
      `  ${times.length} sends with receipts, no revert: p50 ${r.chainP50.toFixed(2)} ms over the second half (first half ${percentile(
        times.slice(0, Math.floor(times.length / 2)).sort((a, b) => a - b),
        50,
      ).toFixed(2)} ms)`,
    );
  } catch (e) {
    fail(r, "chain", e);
  }
}

function fail(r: NodeResult, row: string, e: unknown): void {
  r.failed.add(row);
  const msg = (e as Error).message;
  r.notes.push(`${ROW_LABELS[row] ?? row}: ${(e as Error).name}: ${msg}`);
  console.log(`  ${r.name} ${row} FAILED: ${msg}`);
}

function fmtFixture(f: FixtureResult): string {
  return `${f.cycles} cycles in ${f.seconds.toFixed(2)} s = ${f.cps.toFixed(1)} cycles/s, ${f.blocksPerCycle.toFixed(1)} blocks per cycle, cycle p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms, max ${f.max.toFixed(1)} ms`;
}

// ---------------------------------------------------------------------------------------------------------
// The nodes (bench/nodes.ts), each with the method it mines a range of blocks with.

interface DevSpec extends NodeSpec {
  mineMethod: string;
}

const SPECS: DevSpec[] = [
  { ...COMETH_DEV, mineMethod: "hardhat_mine" },
  { ...ANVIL, mineMethod: "anvil_mine" },
  { ...HARDHAT, mineMethod: "hardhat_mine" },
];

/**
 * Node.js's own floor for the start-up row: the same `node` binary with `npm run dev`'s Node flags and
 * environment, running a script that only starts a node:http server answering eth_chainId (the benches'
 * chain id) and eth_blockNumber (0x0) with fixed bodies: no chain, no module of ours. Spawned and asked
 * exactly as the dev nodes are, alternating with cometh's spawns, so the two medians share the machine's load.
 */
const FLOOR_SCRIPT = `const h=require("node:http");h.createServer((q,s)=>{let b="";q.on("data",(c)=>{b+=c});q.on("end",()=>{const m=JSON.parse(b);s.writeHead(200,{"content-type":"application/json"});s.end(JSON.stringify({jsonrpc:"2.0",id:m.id,result:m.method==="eth_chainId"?"0x${CHAIN_ID.toString(16)}":"0x0"}))})}).listen(Number(process.argv[1]),"127.0.0.1")`;
const NODE_FLOOR: NodeSpec = {
  name: "node floor",
  pair: false,
  missing: () => undefined,
  async launch(port) {
    const npm = npmScript("dev");
    return {
      cmd: process.execPath,
      args: [...npm.nodeFlags, "-e", FLOOR_SCRIPT, String(port)],
      cwd: ROOT,
      env: { ...process.env, ...npm.env },
    };
  },
};

/** `spec` with NODE_EXTRA_CA_CERTS removed from the environment it is started with. */
function withoutExtraCaCerts(spec: NodeSpec): NodeSpec {
  return {
    ...spec,
    name: `${spec.name}, NODE_EXTRA_CA_CERTS unset`,
    async launch(port, extraPort) {
      const launch = await spec.launch(port, extraPort);
      const env = { ...(launch.env ?? process.env) };
      delete env.NODE_EXTRA_CA_CERTS;
      return { ...launch, env };
    },
  };
}

/** One start-up series: what was spawned, and its times to the first eth_chainId answer. */
interface FloorSeries {
  label: string;
  ms: number[];
}

/**
 * --floor-spawns spawns each of the Node.js floor and of `cometh dev`, alternating: both medians, so that the
 * start-up row can be read against what any Node.js server needs here before it runs a line of its own.
 * When the environment sets NODE_EXTRA_CA_CERTS, both are also spawned without it: Node.js 20 reads and
 * parses that file and its own root certificates when the process starts, before any script runs.
 */
async function floorRow(): Promise<FloorSeries[]> {
  const specs: [string, NodeSpec][] = [
    ["Node.js floor (an empty node:http server, npm run dev's Node flags, no chain)", NODE_FLOOR],
    ["cometh dev", COMETH_DEV],
  ];
  if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
    for (const [label, spec] of [...specs])
      specs.push([`${label}, NODE_EXTRA_CA_CERTS unset`, withoutExtraCaCerts(spec)]);
  }
  const series = specs.map(([label]) => ({ label, ms: [] as number[] }));
  for (let i = 0; i < opts.floorSpawns; i++) {
    for (const [k, [, spec]] of specs.entries()) {
      const node = await startNode(spec, { stdout: true, keepChars: 4000 });
      const rpc = new Rpc(node.port);
      try {
        series[k]?.ms.push((await firstAnswers(node, rpc))[0]);
      } finally {
        rpc.close();
        await stopNode(node, 10_000);
      }
    }
  }
  return series;
}

/**
 * The node answers eth_chainId, then at once eth_blockNumber from its chain at block 0 (a node that
 * answered eth_chainId before its chain runs would fail here or be slow): the time to the first
 * answer, and the second answer's own time.
 */
async function firstAnswers(node: Awaited<ReturnType<typeof startNode>>, rpc: Rpc): Promise<[number, number]> {
  const { startupMs, chainId } = await waitForChainId(node, rpc, 10);
  if (Number(chainId) !== CHAIN_ID) throw new Mismatch(`eth_chainId answered ${chainId}, expected ${hex(CHAIN_ID)}`);
  const t0 = performance.now();
  const head = await rpc.call<string>("eth_blockNumber");
  if (head !== "0x0") throw new Mismatch(`eth_blockNumber right after start-up answered ${head}, expected 0x0`);
  return [startupMs, performance.now() - t0];
}

/** --startup-spawns - 1 spawns measured to their first answers and stopped (the last spawn runs the rest). */
async function startupSpawns(spec: DevSpec): Promise<{ startup: number[]; next: number[] }> {
  const startup: number[] = [];
  const next: number[] = [];
  for (let i = 1; i < opts.startupSpawns; i++) {
    const node = await startNode(spec, { stdout: true, keepChars: 4000 });
    const rpc = new Rpc(node.port);
    try {
      const [s, n] = await firstAnswers(node, rpc);
      startup.push(s);
      next.push(n);
    } finally {
      rpc.close();
      await stopNode(node, 10_000);
    }
  }
  return { startup, next };
}

/**
 * Starts `spec`'s node for the fixture and time rows (after its --startup-spawns - 1 measured spawns),
 * measures its start-up, and reads what its rows need; it keeps running until closeSession.
 */
async function openSession(spec: DevSpec): Promise<Session> {
  const r: NodeResult = { name: spec.name, client: "", failed: new Set(), wrong: new Set(), notes: [] };
  const spawns = await startupSpawns(spec);
  // stdout and stderr together (nothing is expected from a silent, quiet node), the last 4000 characters.
  const node = await startNode(spec, { stdout: true, keepChars: 4000 });
  const rpc = new Rpc(node.port);
  try {
    const [startupMs, nextMs] = await firstAnswers(node, rpc);
    spawns.startup.push(startupMs);
    spawns.next.push(nextMs);
    r.startupAll = spawns.startup;
    const sorted = [...spawns.startup].sort((a, b) => a - b);
    r.startupMs = percentile(sorted, 50);
    r.notes.push(
      `start-up to eth_chainId over ${sorted.length} spawns: ${sorted.map((t) => t.toFixed(0)).join(", ")} ms; eth_blockNumber right after answered 0x0 in ${percentile(
        [...spawns.next].sort((a, b) => a - b),
        50,
      ).toFixed(1)} ms (median)`,
    );
    r.client = await rpc.call<string>("web3_clientVersion").catch((e: Error) => `(web3_clientVersion: ${e.message})`);
    console.log(
      `${spec.name}: pid ${node.pid}, http://127.0.0.1:${node.port}, eth_chainId after ${r.startupMs.toFixed(0)} ms, ${r.client}`,
    );
    await node.launch.ready?.(rpc);
    return { spec, node, rpc, r, ...(await setupOf(rpc)) };
  } catch (e) {
    rpc.close();
    await stopNode(node, 10_000);
    throw e;
  }
}

async function closeSession(s: Session): Promise<void> {
  const { node, r } = s;
  const exited = node.exited();
  if (exited !== undefined) r.notes.push(`exited during the run (${exited}): ${node.output().trim().slice(-500)}`);
  s.rpc.close();
  await stopNode(node, 10_000);
  const output = node.output().trim();
  if (output !== "" && (r.failed.size > 0 || r.wrong.size > 0 || node.child.exitCode !== null))
    r.notes.push(`its output (last 800 characters): ${output.slice(-800)}`);
}

/**
 * 2. hardhat_mine / anvil_mine of --mine-blocks blocks, each rep on a fresh node at block 0 (started,
 * asked once, stopped): a node's cost per block may grow with the blocks it already holds (Anvil's
 * anvil_mine(1000) took 1.7, 4.9 and 8.1 s in three reps on one node), so reps on one node would compare
 * the second and third thousand blocks of one tool with another's. The reps alternate between the
 * nodes (cometh's first, Anvil's first, cometh's second, ...), so that a change in the machine's load
 * falls on both. The block number must grow by exactly --mine-blocks.
 */
async function mineRows(runs: { spec: DevSpec; r: NodeResult }[]): Promise<void> {
  for (let i = 0; i < opts.mineReps; i++) {
    for (const { spec, r } of runs) {
      if (r.failed.has("mine")) continue;
      try {
        const ms = await mineOnce(spec);
        r.mineAll = [...(r.mineAll ?? []), ms];
      } catch (e) {
        fail(r, "mine", e);
      }
    }
  }
  for (const { spec, r } of runs) {
    if (r.failed.has("mine") || r.mineAll === undefined) continue;
    r.mineMs = percentile(
      [...r.mineAll].sort((a, b) => a - b),
      50,
    );
    console.log(
      `${spec.name} ${spec.mineMethod}(${opts.mineBlocks}), a fresh node each: ${r.mineAll.map((t) => t.toFixed(1)).join(", ")} ms`,
    );
  }
}

async function mineOnce(spec: DevSpec): Promise<number> {
  const node = await startNode(spec, { stdout: true, keepChars: 4000 });
  const rpc = new Rpc(node.port);
  try {
    await waitForChainId(node, rpc, 10);
    await node.launch.ready?.(rpc);
    const before = await rpc.call<string>("eth_blockNumber");
    const t0 = performance.now();
    await rpc.call(spec.mineMethod, [hex(opts.mineBlocks)], 600_000);
    const ms = performance.now() - t0;
    await expectEq(
      rpc,
      "eth_blockNumber",
      [],
      hex(BigInt(before) + BigInt(opts.mineBlocks)),
      `after ${spec.mineMethod}("${hex(opts.mineBlocks)}") from block ${before}`,
    );
    return ms;
  } finally {
    rpc.close();
    await stopNode(node, 10_000);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The table.

const ROW_LABELS: Record<string, string> = {
  same: "loadFixture cycles/s, same txs",
  distinct: "loadFixture cycles/s, distinct txs",
  unlocked: "loadFixture cycles/s, eth_sendTransaction",
  mine: `hardhat_mine(${opts.mineBlocks}) ms on a fresh node, median of ${opts.mineReps}`,
  time: "evm_increaseTime(60)+evm_mine ms",
  chain: "send + receipt ms on a growing chain",
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
    key: "unlocked",
    label: `loadFixture cycles/s (${opts.fixtureTxs} eth_sendTransaction, distinct every cycle)`,
    better: "high",
    digits: 1,
    get: (r) => r.fixtureUnlocked?.cps,
  },
  {
    key: "mine",
    label: `hardhat_mine(${opts.mineBlocks}) ms on a fresh node, median of ${opts.mineReps}`,
    better: "low",
    digits: 1,
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
  {
    key: "chain",
    label: `send + receipt p50 ms, no revert, sends ${Math.floor(opts.chainSends / 2) + 1}..${opts.chainSends} of a growing chain`,
    better: "low",
    digits: 2,
    get: (r) => r.chainP50,
  },
  {
    key: "startup",
    label: `start-up to eth_chainId ms, median of ${opts.startupSpawns} spawns`,
    better: "low",
    digits: 0,
    get: (r) => r.startupMs,
  },
];

function cell(r: NodeResult | undefined, row: Row): string {
  if (r === undefined) return "—";
  if (r.failed.has(row.key)) return "FAIL";
  const v = row.get(r);
  if (v === undefined || Number.isNaN(v)) return "n/a";
  return r.wrong.has(row.key) ? `${v.toFixed(row.digits)} ✗` : v.toFixed(row.digits);
}

function ratio(a: NodeResult | undefined, b: NodeResult | undefined, row: Row): string {
  if (a === undefined || b === undefined || a.failed.has(row.key) || b.failed.has(row.key)) return "—";
  const x = row.get(a);
  const y = row.get(b);
  if (x === undefined || y === undefined || Number.isNaN(x) || Number.isNaN(y) || y === 0) return "—";
  return `${(x / y).toFixed(2)}×${a.wrong.has(row.key) || b.wrong.has(row.key) ? " ✗" : ""}`;
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
  console.log(
    "FAIL: the row stopped on an error or a wrong answer; ✗: timed to the end, but some answers were wrong (notes below).",
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
    for (const f of [r.fixtureSame, r.fixtureDistinct, r.fixtureUnlocked]) {
      if (f !== undefined) {
        const which = f === r.fixtureSame ? "same" : f === r.fixtureDistinct ? "distinct" : "eth_sendTransaction";
        console.log(`${r.name} loadFixture (${which}): ${fmtFixture(f)}`);
      }
    }
    if (r.mineAll !== undefined) {
      console.log(
        `${r.name} ${r.name === "anvil" ? "anvil_mine" : "hardhat_mine"}, a fresh node each rep: ${r.mineAll.map((t) => t.toFixed(1)).join(", ")} ms`,
      );
    }
  }
  for (const r of results) for (const n of r.notes) console.log(`note: ${r.name}: ${n}`);
}

async function main(): Promise<void> {
  const command = `npm run bench:dev${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
  const date = new Date().toISOString();

  const wanted = values.nodes
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (wanted.includes("cometh")) buildCometh();
  // Every wanted node runs side by side for rows 1 and 3 (each idle while another is measured), then
  // stops; row 2 starts fresh nodes.
  const { results: sessions, skipped } = await runNodes(wanted, SPECS, openSession, 600);
  try {
    await measureFixtures(sessions);
    for (const s of sessions) {
      console.log(`${s.spec.name}:`);
      await timeRow(s.rpc, s.r);
      await chainRow(s);
    }
  } finally {
    for (const s of sessions) await closeSession(s);
  }
  const results = sessions.map((s) => s.r);
  await mineRows(
    results.flatMap((r) => {
      const spec = SPECS.find((s) => s.name === r.name);
      return spec === undefined ? [] : [{ spec, r }];
    }),
  );
  const floor = wanted.includes("cometh") && opts.floorSpawns > 0 ? await floorRow() : undefined;
  printTable(results, command, date);
  if (floor !== undefined) {
    const med = (xs: number[]) =>
      percentile(
        [...xs].sort((a, b) => a - b),
        50,
      );
    console.log(
      `start-up floor, ${opts.floorSpawns} spawns of each, alternating (ms to the first eth_chainId answer):`,
    );
    for (const f of floor) {
      console.log(`- ${f.label}: median ${med(f.ms).toFixed(0)} (${f.ms.map((t) => t.toFixed(0)).join(", ")})`);
    }
    const [nodeFloor, cometh] = floor;
    if (nodeFloor !== undefined && cometh !== undefined) {
      console.log(
        `cometh ÷ floor ${(med(cometh.ms) / med(nodeFloor.ms)).toFixed(2)}×, cometh − floor ${(med(cometh.ms) - med(nodeFloor.ms)).toFixed(0)} ms`,
      );
    }
  }
  for (const s of skipped) console.log(`skipped: ${s}`);
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          command,
          date,
          opts,
          results: results.map((r) => ({ ...r, failed: [...r.failed], wrong: [...r.wrong] })),
          startupFloor: floor,
          skipped,
        },
        null,
        2,
      ),
    );
  }
  process.exitCode =
    results.length > 0 && results.every((r) => r.failed.size === 0 && r.wrong.size === 0) && skipped.length === 0
      ? 0
      : 1;
}

await main();
