/**
 * npm run bench:engine [-- --iterations N] [--reps N]
 *
 * The EVM engine in process, without RPC, state store or worker threads: what one opcode costs on the
 * storage, log, hash and memory paths, in nanoseconds of CPU per operation. Each row runs a loop of
 * --iterations (default 100 000) iterations whose body holds the operation, on an OverlayStateManager
 * over an in-memory base (every slot reads as 0, as a fresh slot reads from LMDB once per block), and
 * subtracts the same loop with an empty body. CPU time (process.cpuUsage) of --reps runs (default 7),
 * median reported, so another process on the machine costs less than wall time would.
 *
 * The rows: SLOAD of one warm slot; SLOAD of a new (cold) slot each iteration; SSTORE of a new slot each
 * iteration (cold, 0 → non-zero); SSTORE of one warm dirty slot; LOG3 with 32 bytes of data; KECCAK256
 * of 64 bytes of memory; MSTORE + MLOAD of a word. Last, the analysis of code seen once (µs per analysis of
 * a fresh copy of each workload contract and of 24 576 pseudo-random bytes).
 *
 * Then bench:evm's five workloads (bench/workloads/), each call with its own seed as bench:evm sends
 * them, run through executeCall on a fresh overlay per call: ms of CPU per call (median of --reps) and
 * Mgas/s. This is the engine's share of what bench:evm times through the JSON-RPC.
 */
import { parseArgs } from "node:util";
import { keccak256 } from "../src/app/evm/crypto.js";
import { KECCAK256_NULL, type StoredAccount } from "../src/app/evm/records.js";
import { OverlayStateManager } from "../src/app/evm/stateManager.js";
import { analysisOf } from "../src/evm/analysis.js";
import { executeCall } from "../src/evm/index.js";
import { WORKLOADS, workloadCalldata } from "./workloads/workloads.js";
import compiled from "./workloads/workloads.json" with { type: "json" };

const { values } = parseArgs({
  options: { iterations: { type: "string", default: "100000" }, reps: { type: "string", default: "7" } },
});
const N = Number(values.iterations);
const REPS = Number(values.reps);

const CONTRACT = new Uint8Array(20).fill(0xc0);
const SENDER = new Uint8Array(20).fill(0xf3);

/** PUSH3 N; loop: body; counter − 1; JUMPI loop while non-zero; STOP. The counter stays on top. */
function loop(body: string): Uint8Array {
  const n = N.toString(16).padStart(6, "0");
  const hex = `62${n}5b${body}600190038060045700`;
  return new Uint8Array(Buffer.from(hex, "hex"));
}

const BODIES: [string, string][] = [
  ["SLOAD, one warm slot", "600054" + "50"],
  ["SLOAD, a new cold slot each time", "8054" + "50"],
  ["SSTORE, a new slot each time (0 → x)", "808055"],
  ["SSTORE, one warm dirty slot", "80600055"],
  ["LOG3, 32 bytes of data", "808080602060 00a3".replace(" ", "")],
  ["KECCAK256 of 64 bytes", "604060002050"],
  ["MSTORE + MLOAD of a word", "806000526000 5150".replace(" ", "")],
];

const block = {
  number: 2n,
  timestamp: 1_700_000_000n,
  coinbase: new Uint8Array(20),
  gasLimit: 1n << 62n,
  baseFee: 0n,
  prevRandao: new Uint8Array(32),
  blobBaseFee: 1n,
  chainId: 262144n,
  blockHash: () => new Uint8Array(32),
};

/** Median CPU ms of --reps calls of `code` (calldata per rep), and the gas the last call used. */
function cpuMsOf(
  code: Uint8Array,
  calldata: (rep: number) => Uint8Array = () => new Uint8Array(0),
): { ms: number; gas: bigint } {
  const codeHash = keccak256(code);
  const base = {
    height: 1,
    account(addr: Uint8Array): StoredAccount {
      const isContract = Buffer.compare(addr, CONTRACT) === 0;
      return {
        exists: isContract || Buffer.compare(addr, SENDER) === 0,
        nonce: isContract ? 1n : 0n,
        balance: 10n ** 24n,
        codeHash: isContract ? codeHash : KECCAK256_NULL,
        incarnation: 0,
      };
    },
    storage: () => new Uint8Array(0),
    code: () => code,
  };
  const times: number[] = [];
  let gas = 0n;
  for (let r = 0; r < REPS; r++) {
    const state = new OverlayStateManager(base);
    const before = process.cpuUsage();
    const res = executeCall(
      state,
      { from: SENDER, to: CONTRACT, value: 0n, data: calldata(r), gasLimit: 1n << 40n, gasPrice: 0n },
      block,
      "prague",
    );
    const used = process.cpuUsage(before);
    if (!res.success) throw new RangeError(`bench program failed: ${res.error}`);
    times.push((used.user + used.system) / 1000);
    gas = res.gasUsed;
  }
  times.sort((a, b) => a - b);
  return { ms: times[times.length >> 1] as number, gas };
}

const empty = cpuMsOf(loop("")).ms;
console.log(
  `${N} iterations, median of ${REPS} runs (CPU time); the empty loop: ${((empty * 1e6) / N).toFixed(0)} ns per iteration`,
);
console.log(`${"operation".padEnd(40)} ${"ns/op".padStart(8)}`);
for (const [name, body] of BODIES) {
  const { ms } = cpuMsOf(loop(body));
  console.log(`${name.padEnd(40)} ${(((ms - empty) * 1e6) / N).toFixed(0).padStart(8)}`);
}

console.log(
  `\n${"workload (one eth_call, seed per call)".padEnd(40)} ${"ms/call".padStart(8)} ${"Mgas/s".padStart(8)}`,
);
for (const w of WORKLOADS) {
  const code = new Uint8Array(Buffer.from(compiled.contracts[w.contract].deployedBytecode.slice(2), "hex"));
  const { ms, gas } = cpuMsOf(
    code,
    (rep) => new Uint8Array(Buffer.from(workloadCalldata(w, BigInt(1000 + rep)).slice(2), "hex")),
  );
  console.log(`${w.label.padEnd(40)} ${ms.toFixed(1).padStart(8)} ${(Number(gas) / ms / 1000).toFixed(0).padStart(8)}`);
}

// Code seen once (a creation's init code, an eth_call without `to`, a contract called for the first
// time): its analysis (analysis.ts: JUMPDESTs, PUSH values, basic blocks) is paid in full. Each rep
// analyses a fresh copy, so no cache answers it.
console.log(`\n${"analysis of code seen once".padEnd(40)} ${"µs".padStart(8)} ${"ns/byte".padStart(8)}`);
const codes: [string, Uint8Array][] = Object.entries(compiled.contracts).map(([name, c]) => [
  `${name} (${(c.deployedBytecode.length - 2) / 2} bytes)`,
  new Uint8Array(Buffer.from(c.deployedBytecode.slice(2), "hex")),
]);
const big = new Uint8Array(24_576);
for (let i = 0; i < big.length; i++) big[i] = (i * 7919 + 13) & 0xff;
codes.push([`24 576 pseudo-random bytes`, big]);
for (const [name, code] of codes) {
  const per: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const copies = Array.from({ length: 200 }, () => code.slice());
    const before = process.cpuUsage();
    for (const c of copies) analysisOf(c);
    const used = process.cpuUsage(before);
    per.push((used.user + used.system) / copies.length);
  }
  per.sort((a, b) => a - b);
  const us = per[per.length >> 1] as number;
  console.log(`${name.padEnd(40)} ${us.toFixed(1).padStart(8)} ${((us * 1000) / code.length).toFixed(1).padStart(8)}`);
}
