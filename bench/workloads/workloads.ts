/**
 * The eth_call workloads of `npm run bench:evm` (bench/workloads/Workloads.sol, compiled into workloads.json
 * by build.ts): what each calls, deploying their contracts on a node, and timing them one call at a time.
 *
 * Every call carries a seed of its own (the warm-up's from 10^9, the measured ones 1, 2, 3, ...), so its
 * calldata differs from every other request's and no per-height call memo can answer it; the same seed gives
 * the same answer on every node, so comparing answers seed by seed proves that the nodes did the same work.
 */
import { Interface } from "ethers";
import compiled from "./workloads.json" with { type: "json" };

/** What this module needs of a JSON-RPC client (bench/evm.ts's Rpc). */
export interface WorkloadRpc {
  call<T = unknown>(method: string, params?: unknown[], timeoutMs?: number): Promise<T>;
}

type ContractName = keyof typeof compiled.contracts;

export interface Workload {
  /** Short key (the --workloads option names these). */
  key: string;
  /** The table's label. */
  label: string;
  contract: ContractName;
  fn: string;
  /** The call's arguments for a seed. */
  args: (seed: bigint) => unknown[];
  /** About the gas of one call (measured once), to skip what a slow node could not finish in time. */
  gas: number;
}

/**
 * The ray tracer's default image: 48 x 48 pixels, about 100M gas a call (72 x 72: about 227M). Hardhat 3
 * runs this program at ~10 Mgas/s on a busy 2-core machine, so 227M takes it over a minute a call.
 */
export const RAY_SIZE = 48;

/** The workloads, the ray tracer rendering raySize x raySize pixels. */
export function workloads(raySize = RAY_SIZE): Workload[] {
  if (!Number.isInteger(raySize) || raySize < 1 || raySize > 512) {
    throw new RangeError(`the ray tracer's image size must be an integer from 1 to 512, got ${raySize}`);
  }
  return [
    { key: "mint", label: "token mint x5000", contract: "TokenLoops", fn: "mintLoop", args: (s) => [s], gas: 12.7e6 },
    {
      key: "transfer",
      label: "token transfer x5000",
      contract: "TokenLoops",
      fn: "transferLoop",
      args: (s) => [s],
      gas: 13e6,
    },
    {
      key: "approve",
      label: "approve+transferFrom x5000",
      contract: "TokenLoops",
      fn: "approveTransferFromLoop",
      args: (s) => [s],
      gas: 30.2e6,
    },
    { key: "keccak", label: "keccak256 x10000", contract: "KeccakLoop", fn: "hashLoop", args: (s) => [s], gas: 3.9e6 },
    // Last: a node that cannot cancel a call it has timed out (Ganache) goes on computing it, which would slow
    // whatever is timed after it.
    {
      key: "raytrace",
      label: `ray tracer ${raySize}x${raySize}`,
      contract: "RayTracer",
      fn: "render",
      args: (s) => [s, raySize, raySize],
      gas: 43_600 * raySize * raySize,
    },
  ];
}

export const WORKLOADS: readonly Workload[] = workloads();

/**
 * The gas of every workload call: above the largest workload, and at or below the eth_call gas
 * cap each node gets from bench/nodes.ts (cometh --json-rpc.gas-cap, anvil --disable-block-gas-limit,
 * Hardhat's blockGasLimit, ganache --miner.callGasLimit), whose defaults (25M-60M) are below the ray tracer.
 */
export const CALL_GAS = 1_000_000_000n;

/** The seeds of the warm-up calls start here; the measured calls use 1, 2, 3, ... */
const WARM_SEED = 1_000_000_000n;

export interface WorkloadOptions {
  /** The most measured calls of a workload. */
  calls: number;
  /** No new call starts after this many seconds of a workload's measured calls (at least one is made). */
  seconds: number;
  /** Timeout of one call. */
  callTimeoutMs: number;
  /** The `from` of every call (a funded dev account: the token loops mint to it and spend from it). */
  from: string;
}

export interface WorkloadResult {
  key: string;
  /** Wall times of the measured calls, in ms, in call order. */
  times: number[];
  /** The gas each measured call's body used (the last word of its answer), in call order. */
  gas: bigint[];
  /** The measured calls' answers (the call with seed i + 1 at i). */
  answers: string[];
  /** Why it has no figures, or was cut short. */
  note?: string;
}

const interfaces = new Map<ContractName, Interface>();
function iface(name: ContractName): Interface {
  let i = interfaces.get(name);
  if (i === undefined) {
    i = new Interface(compiled.contracts[name].abi);
    interfaces.set(name, i);
  }
  return i;
}

/** The calldata of workload `w` for `seed`. */
export function workloadCalldata(w: Workload, seed: bigint): string {
  return iface(w.contract).encodeFunctionData(w.fn, w.args(seed));
}

export type WorkloadAddresses = Record<ContractName, string>;

/**
 * Deploys each workload contract through `deploy` (init code in, contract address out: the caller signs,
 * sends and waits for the receipt).
 */
export async function deployWorkloads(deploy: (initCode: string) => Promise<string>): Promise<WorkloadAddresses> {
  const out = {} as WorkloadAddresses;
  for (const name of Object.keys(compiled.contracts) as ContractName[]) {
    out[name] = await deploy(compiled.contracts[name].bytecode);
  }
  return out;
}

/** The workloads named in a comma-separated list ("all" for every one). */
export function selectWorkloads(list: string, raySize = RAY_SIZE): Workload[] {
  const all = workloads(raySize);
  if (list.trim() === "all") return all;
  const keys = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = keys.filter((k) => !WORKLOADS.some((w) => w.key === k));
  if (unknown.length > 0) {
    throw new RangeError(
      `--workloads: unknown ${unknown.join(", ")}; choose from all, none, ${WORKLOADS.map((w) => w.key).join(", ")}`,
    );
  }
  return all.filter((w) => keys.includes(w.key));
}

/**
 * Times `w` on a node: a warm-up call, then measured calls one at a time (one in flight) until opts.calls
 * are done or opts.seconds have passed.
 */
export async function timeWorkload(
  rpc: WorkloadRpc,
  addrs: WorkloadAddresses,
  w: Workload,
  opts: WorkloadOptions,
): Promise<WorkloadResult> {
  const [result] = await timeWorkloadInterleaved([{ rpc, addrs }], w, opts);
  return result as WorkloadResult;
}

/**
 * Times `w` on several nodes at once, seed by seed: each node gets its warm-up call, then seed 1 goes to
 * every node in turn, then seed 2, and so on (the order rotates by one node per seed), one call in flight
 * in all. A host whose speed drifts between minutes (a shared virtual machine) then slows every node's
 * calls of a seed alike, where timing one node after the other charges the drift to whichever ran later.
 * Stops after opts.calls seeds, or once opts.seconds × the number of nodes have passed; a node whose call
 * fails gets a note and no more calls.
 */
export async function timeWorkloadInterleaved(
  nodes: readonly { rpc: WorkloadRpc; addrs: WorkloadAddresses }[],
  w: Workload,
  opts: WorkloadOptions,
): Promise<WorkloadResult[]> {
  const results: WorkloadResult[] = nodes.map(() => ({ key: w.key, times: [], gas: [], answers: [] }));
  const tx = (addrs: WorkloadAddresses, seed: bigint) => ({
    from: opts.from,
    to: addrs[w.contract],
    gas: `0x${CALL_GAS.toString(16)}`,
    data: workloadCalldata(w, seed),
  });
  const live = new Set<number>();
  for (const [k, n] of nodes.entries()) {
    try {
      await n.rpc.call<string>("eth_call", [tx(n.addrs, WARM_SEED), "latest"], opts.callTimeoutMs);
      live.add(k);
    } catch (e) {
      (results[k] as WorkloadResult).note = `warm-up call failed: ${(e as Error).message.slice(0, 160)}`;
    }
  }
  const t0 = performance.now();
  for (let i = 0; i < opts.calls && live.size > 0; i++) {
    if (i > 0 && performance.now() - t0 > opts.seconds * 1000 * nodes.length) break;
    for (let j = 0; j < nodes.length; j++) {
      const k = (i + j) % nodes.length;
      if (!live.has(k)) continue;
      const { rpc, addrs } = nodes[k] as { rpc: WorkloadRpc; addrs: WorkloadAddresses };
      const result = results[k] as WorkloadResult;
      const s = performance.now();
      let answer: string;
      try {
        answer = await rpc.call<string>("eth_call", [tx(addrs, BigInt(i + 1)), "latest"], opts.callTimeoutMs);
      } catch (e) {
        result.note = `call ${i + 1} failed: ${(e as Error).message.slice(0, 160)}`;
        live.delete(k);
        continue;
      }
      result.times.push(performance.now() - s);
      result.answers.push(answer);
      result.gas.push(gasOfAnswer(answer));
    }
  }
  return results;
}

/** The gas a workload's body used: every workload returns it as the last word of its answer. */
export function gasOfAnswer(answer: string): bigint {
  if (!/^0x([0-9a-fA-F]{64})+$/.test(answer)) throw new RangeError(`not an ABI-encoded answer: ${answer.slice(0, 80)}`);
  return BigInt(`0x${answer.slice(-64)}`);
}

export interface WorkloadStats {
  median: number;
  min: number;
  max: number;
  /** The median gas of a call's body. */
  gas: bigint;
  /** Million gas per second: the median gas over the median time. */
  mgasPerSec: number;
}

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function workloadStats(r: WorkloadResult): WorkloadStats | undefined {
  if (r.times.length === 0) return undefined;
  const sorted = [...r.times].sort((a, b) => a - b);
  const t = median(sorted);
  const gas = BigInt(Math.round(median(r.gas.map(Number).sort((a, b) => a - b))));
  return {
    median: t,
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
    gas,
    mgasPerSec: Number(gas) / 1e6 / (t / 1000),
  };
}

/** The decoded answer of `w`, for humans: e.g. "supply=12502500, balance=12502500". */
export function describeAnswer(w: Workload, answer: string): string {
  const fn = iface(w.contract).getFunction(w.fn);
  if (fn === null) return answer;
  const values = iface(w.contract).decodeFunctionResult(fn, answer);
  return fn.outputs.map((o, i) => `${o.name}=${String(values[i])}`).join(", ");
}

/**
 * Whether every node gave the same answer to the same seed, over the seeds all of them ran: a line per
 * workload ("same answers on N nodes for seeds 1..k" or where they differ), and whether all agreed.
 */
export function compareAnswers(
  nodes: { name: string; results: WorkloadResult[] }[],
  list: readonly Workload[] = WORKLOADS,
): {
  lines: string[];
  same: boolean;
} {
  const lines: string[] = [];
  let same = true;
  for (const w of list) {
    const ran = nodes
      .map((n) => ({ name: n.name, r: n.results.find((r) => r.key === w.key) }))
      .filter((x): x is { name: string; r: WorkloadResult } => x.r !== undefined && x.r.answers.length > 0);
    if (ran.length === 0) continue;
    // Seed by seed, among the nodes that ran it (a slow node runs fewer).
    const most = Math.max(...ran.map((x) => x.r.answers.length));
    const differ: string[] = [];
    for (let i = 0; i < most; i++) {
      const had = ran.filter((x) => x.r.answers[i] !== undefined);
      const ref = had[0];
      const odd = had.filter((x) => x.r.answers[i] !== ref?.r.answers[i]).map((x) => x.name);
      if (odd.length > 0) differ.push(`seed ${i + 1}: ${odd.join(", ")} differ from ${ref?.name}`);
    }
    const first = ran[0]?.r.answers[0];
    const sample = first === undefined ? "" : ` (seed 1: ${describeAnswer(w, first)})`;
    if (differ.length > 0) same = false;
    lines.push(
      differ.length === 0
        ? `${w.label}: same answers on ${ran.map((x) => `${x.name} (seeds 1..${x.r.answers.length})`).join(", ")}${sample}`
        : `${w.label}: ANSWERS DIFFER: ${differ.slice(0, 3).join("; ")}`,
    );
  }
  return { lines, same };
}
