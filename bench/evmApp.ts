/**
 * EVM app throughput: 10 000 pre-signed ETH transfers and 10 000 ERC-20 transfers pushed through the
 * real mempool (CheckTx, recheck after each block) and blocks (PrepareProposal, ProcessProposal,
 * FinalizeBlock, Commit) on the app directly, with LMDB on disk. Prints committed tx/s, peak RSS, and
 * the pure-JS vs native ecrecover rates.
 *
 * Then, in the same run, mined transfers/s over JSON-RPC next to Hardhat 3: each node of --peers (default
 * cometh,hardhat; none to skip) is started as bench:evm starts it (bench/nodes.ts: cometh as `npm start`
 * runs it with --consensus.timeout_commit 0s; Hardhat 3's `hardhat node` with automine, from bench/peers),
 * takes --warmup-txs (1000) untimed ETH transfers, then --rpc-txs (2000) pre-signed ETH transfers and as many
 * ERC-20 transfers from 10 dev accounts in --lanes (10) lanes through eth_sendRawTransaction (bench/evm.ts
 * minedTransfers; the warm-up keeps the load generator's own warm-up out of the first node's figures), and is
 * stopped by its PID.
 * One table gives the app's committed tx/s and each node's mined tx/s, and their ratios to Hardhat 3's, and
 * each node's CPU time (all its threads, from /proc) per mined tx over both phases.
 *
 *   node --import tsx bench/evmApp.ts [--txs 10000] [--senders 200] [--max-gas 30000000]
 *                                     [--peers cometh,hardhat] [--rpc-txs 2000] [--warmup-txs 1000] [--lanes 10]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Interface, Transaction, Wallet } from "ethers";
import {
  createEvmApp,
  type EvmApplication,
  ecrecoverBackend,
  ecrecoverNative,
  ecrecoverNoble,
} from "../src/app/evm/index.js";
import { Mempool } from "../src/mempool/index.js";
import { defaultConsensusParams } from "../src/types/index.js";
import { silentLogger } from "../src/util/logger.js";
import erc20 from "../test/data/erc20.json" with { type: "json" };
import { minedTransfers, Rpc, setupContracts, type Transfers } from "./evm.js";
import {
  ACCOUNTS,
  buildCometh,
  comethStart,
  HARDHAT,
  processCpuMs,
  runNodes,
  startNode,
  stopNode,
  waitForChainId,
} from "./nodes.js";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const N = arg("txs", 10_000);
const PEERS = stringArg("peers", "cometh,hardhat");
const RPC_TXS = arg("rpc-txs", 2000);
const WARMUP_TXS = arg("warmup-txs", 1000);
const LANES = arg("lanes", 10);
const SENDERS = arg("senders", 200);
const MAX_GAS = BigInt(arg("max-gas", 30_000_000));
const CHAIN_ID = 262144n;
const GWEI = 1_000_000_000n;
const TOKEN = "0x00000000000000000000000000000000000c0de1";
const log = silentLogger();
const hex = (s: string) => new Uint8Array(Buffer.from(s.slice(2), "hex"));
const toHex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

function balanceSlot(address: string): string {
  const buf = new Uint8Array(64);
  buf.set(hex(address), 12);
  return toHex(keccak_256(buf));
}

function rssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Signs N txs round-robin over `wallets`; `nonces` (one per wallet) advance as txs are signed. */
async function signAll(wallets: Wallet[], nonces: number[], build: (i: number) => object): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (let i = 0; i < N; i++) {
    const s = i % wallets.length;
    const w = wallets[s] as Wallet;
    const tx = Transaction.from({ ...build(i), chainId: CHAIN_ID, nonce: nonces[s] as number });
    nonces[s] = (nonces[s] as number) + 1;
    tx.signature = w.signingKey.sign(tx.unsignedHash);
    out.push(hex(tx.serialized));
  }
  return out;
}

interface PhaseResult {
  name: string;
  txs: number;
  blocks: number;
  checkMs: number;
  blockMs: number;
  failed: number;
  /** Time split of the block loop: prepare+process, finalize, commit, mempool update (recheck). */
  split: { propose: number; finalize: number; commit: number; recheck: number };
}

async function runPhase(
  name: string,
  app: EvmApplication,
  txs: Uint8Array[],
  startHeight: number,
): Promise<PhaseResult & { height: number }> {
  const mempool = new Mempool(
    {
      size: 50_000,
      maxTxsBytes: 1 << 30,
      maxTxBytes: 1 << 20,
      cacheSize: 50_000,
      keepInvalidTxsInCache: false,
      recheck: true,
    },
    { app, log },
  );
  const t0 = performance.now();
  let rejected = 0;
  for (const tx of txs) {
    const res = await mempool.checkTx(tx);
    if (res.code !== 0) rejected++;
  }
  const checkMs = performance.now() - t0;
  if (rejected > 0) throw new RangeError(`${name}: CheckTx rejected ${rejected} txs`);

  const t1 = performance.now();
  let height = startHeight;
  let blocks = 0;
  let failed = 0;
  let committed = 0;
  const proposer = new Uint8Array(20).fill(0xaa);
  const split = { propose: 0, finalize: 0, commit: 0, recheck: 0 };
  const maxTxBytes = 22_020_096 - 1024;
  while (mempool.size() > 0) {
    height++;
    const time = BigInt(1_700_000_000 + height) * 1_000_000_000n;
    const hash = keccak_256(new TextEncoder().encode(`block ${height}`));
    const reaped = mempool.reapMaxBytesMaxGas(maxTxBytes, MAX_GAS);
    const common = { misbehavior: [], height, time, nextValidatorsHash: new Uint8Array(32), proposerAddress: proposer };
    let t = performance.now();
    const { txs: blockTxs } = await app.prepareProposal({
      ...common,
      maxTxBytes,
      txs: reaped,
      localLastCommit: { round: 0, votes: [] },
    });
    if (
      (await app.processProposal({ ...common, txs: blockTxs, proposedLastCommit: { round: 0, votes: [] }, hash })) !==
      "accept"
    ) {
      throw new RangeError("proposal rejected");
    }
    split.propose += performance.now() - t;
    t = performance.now();
    const resp = await app.finalizeBlock({
      ...common,
      txs: blockTxs,
      decidedLastCommit: { round: 0, votes: [] },
      hash,
      block: {} as never,
    });
    split.finalize += performance.now() - t;
    const unlock = await mempool.lock();
    try {
      t = performance.now();
      await app.commit();
      split.commit += performance.now() - t;
      t = performance.now();
      await mempool.update(height, blockTxs, resp.txResults);
      split.recheck += performance.now() - t;
    } finally {
      unlock();
    }
    failed += resp.txResults.filter((r) => r.code !== 0).length;
    committed += blockTxs.length;
    blocks++;
    if (blockTxs.length === 0)
      throw new RangeError(`${name}: empty block at height ${height} with ${mempool.size()} txs waiting`);
  }
  const blockMs = performance.now() - t1;
  return { name, txs: committed, blocks, checkMs, blockMs, failed, height, split };
}

/** End-to-end committed tx/s of an app phase: CheckTx of every tx, then the block loop. */
function committedPerSecond(r: PhaseResult): number {
  return (r.txs / (r.checkMs + r.blockMs)) * 1000;
}

function report(r: PhaseResult): void {
  const total = r.checkMs + r.blockMs;
  console.log(
    `${r.name.padEnd(16)} ${r.txs} txs in ${r.blocks} blocks: CheckTx ${(r.checkMs / 1000).toFixed(2)}s (${Math.round((r.txs / r.checkMs) * 1000)}/s), ` +
      `blocks ${(r.blockMs / 1000).toFixed(2)}s (${Math.round((r.txs / r.blockMs) * 1000)}/s), ` +
      `end to end ${Math.round((r.txs / total) * 1000)} committed tx/s${r.failed > 0 ? `, ${r.failed} failed` : ""}`,
  );
  const s = r.split;
  const f = (ms: number) => `${(ms / 1000).toFixed(2)}s`;
  console.log(
    `${"".padEnd(16)} block loop: prepare+process ${f(s.propose)}, finalize ${f(s.finalize)}, commit ${f(s.commit)}, mempool update+recheck ${f(s.recheck)}`,
  );
}

function benchEcrecover(): void {
  const w = Wallet.createRandom();
  const sigs: { hash: Uint8Array; r: Uint8Array; s: Uint8Array; v: bigint }[] = [];
  for (let i = 0; i < 500; i++) {
    const hash = keccak_256(new TextEncoder().encode(`m${i}`));
    const sig = w.signingKey.sign(hash);
    sigs.push({ hash, r: hex(sig.r), s: hex(sig.s), v: BigInt(sig.v) });
  }
  const rate = (fn: typeof ecrecoverNative, rounds: number) => {
    const t = performance.now();
    for (let k = 0; k < rounds; k++) for (const s of sigs) fn(s.hash, s.v, s.r, s.s);
    return Math.round((rounds * sigs.length) / ((performance.now() - t) / 1000));
  };
  rate(ecrecoverNoble, 1);
  rate(ecrecoverNative, 1);
  const noble = rate(ecrecoverNoble, 2);
  const native = rate(ecrecoverNative, 20);
  console.log(
    `ecrecover: @noble/curves ${noble}/s, secp256k1 (${ecrecoverBackend()}) ${native}/s, ${(native / noble).toFixed(1)}x; the app uses ${ecrecoverBackend()}`,
  );
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${N} txs per phase, ${SENDERS} senders, block max_gas ${MAX_GAS}`);
  benchEcrecover();

  const senders = Array.from(
    { length: SENDERS },
    (_, i) => new Wallet(toHex(keccak_256(new TextEncoder().encode(`sender ${i}`)))),
  );
  const recipients = Array.from({ length: 50 }, (_, i) =>
    toHex(keccak_256(new TextEncoder().encode(`to ${i}`)).slice(12)),
  );
  const storage: Record<string, string> = { "0x02": toHex(new Uint8Array(32).fill(0x11)) };
  for (const s of senders) storage[balanceSlot(s.address)] = "0x0de0b6b3a7640000";
  const appState = {
    evm: {
      accounts: [
        ...senders.map((s) => ({ address: s.address, balance: (10n ** 22n).toString() })),
        { address: TOKEN, code: erc20.deployedBytecode, storage },
      ],
    },
  };

  const iface = new Interface(erc20.abi);
  const fees = { maxFeePerGas: 1000n * GWEI, maxPriorityFeePerGas: GWEI };
  const tSign = performance.now();
  const nonces = new Array<number>(senders.length).fill(0);
  const transfers = await signAll(senders, nonces, (i) => ({
    type: 2,
    to: recipients[i % recipients.length],
    value: 1n,
    gasLimit: 21000n,
    ...fees,
  }));
  const tokenTxs = await signAll(senders, nonces, (i) => ({
    type: 2,
    to: TOKEN,
    data: iface.encodeFunctionData("transfer", [recipients[i % recipients.length], 1n]),
    gasLimit: 60_000n,
    ...fees,
  }));
  console.log(`pre-signed ${2 * N} txs in ${((performance.now() - tSign) / 1000).toFixed(1)}s`);

  let appRates: { eth: number; erc20: number } | undefined;
  const dir = await mkdtemp(join(tmpdir(), "cometh-bench-evm-"));
  const app = await createEvmApp({ dbDir: dir, log });
  try {
    const params = defaultConsensusParams();
    params.block.maxGas = MAX_GAS;
    await app.initChain({
      time: 0n,
      chainId: "bench",
      consensusParams: params,
      validators: [],
      appStateBytes: new TextEncoder().encode(JSON.stringify(appState)),
      initialHeight: 1,
    });
    const a = await runPhase("ETH transfers", app, transfers, 0);
    report(a);
    const b = await runPhase("ERC-20 transfers", app, tokenTxs, a.height);
    report(b);
    const receipts = app.reader.receipts(b.height);
    if (receipts.some((r) => r.status !== 1)) throw new RangeError("an ERC-20 transfer failed");
    console.log(`peak RSS ${rssMb().toFixed(0)} MB; final base fee ${app.reader.nextBaseFee()} wei`);
    appRates = { eth: committedPerSecond(a), erc20: committedPerSecond(b) };
  } finally {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  }
  await peers(appRates);
}

/**
 * Mined transfers/s over JSON-RPC on each node of --peers, then one table with the app's committed tx/s
 * (appRates, when the app phases ran).
 */
async function peers(appRates: { eth: number; erc20: number } | undefined): Promise<void> {
  const wanted = PEERS.split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "" && x !== "none");
  if (wanted.length === 0) return;
  if (!Number.isInteger(RPC_TXS) || RPC_TXS <= 0) throw new RangeError("--rpc-txs must be a positive integer");
  if (!Number.isInteger(WARMUP_TXS) || WARMUP_TXS < 0) {
    throw new RangeError("--warmup-txs must be a whole number (0: no warm-up)");
  }
  if (!Number.isInteger(LANES) || LANES < 1 || LANES > ACCOUNTS) {
    throw new RangeError(`--lanes must be an integer from 1 to ${ACCOUNTS}`);
  }
  if (wanted.includes("cometh")) buildCometh();
  console.log("");
  console.log(
    `mined transfers over JSON-RPC: ${WARMUP_TXS} untimed ETH transfers, then ${RPC_TXS} ETH + ${RPC_TXS} ERC-20 transfers timed, ${LANES} lanes`,
  );
  const { results, skipped } = await runNodes(
    wanted,
    [comethStart("0s"), HARDHAT],
    async (spec): Promise<{ name: string; t: Transfers; cpuMs: number }> => {
      const node = await startNode(spec, { stdout: false, keepChars: 2000 });
      const rpc = new Rpc({ host: "127.0.0.1", port: node.port, path: "/" });
      try {
        await waitForChainId(node, rpc, 5);
        await node.launch.ready?.(rpc);
        console.log(`${spec.name}: pid ${node.pid}, http://127.0.0.1:${node.port}`);
        const setup = await setupContracts(rpc);
        let cpu0 = processCpuMs(node.pid);
        const t = await minedTransfers(rpc, setup, {
          txs: RPC_TXS,
          warmupTxs: WARMUP_TXS,
          afterWarmup: () => {
            cpu0 = processCpuMs(node.pid);
          },
          lanes: LANES,
          txTimeoutMs: 180_000,
          stallMs: 15_000,
        });
        const cpuMs = processCpuMs(node.pid) - cpu0;
        const txs = t.eth.mined + (t.erc20?.mined ?? 0);
        console.log(
          `  ${spec.name}'s process: ${(cpuMs / 1000).toFixed(2)} s of CPU for the ${txs} mined transfers (${((cpuMs / txs) * 1000).toFixed(0)} µs a tx, all its threads)`,
        );
        return { name: spec.name, t, cpuMs };
      } finally {
        rpc.close();
        await stopNode(node, 5000);
      }
    },
    300,
  );
  const hardhat = results.find((r) => r.name === "hardhat");
  const cols = [
    ...(appRates === undefined ? [] : [{ name: "cometh app", eth: appRates.eth, erc20: appRates.erc20 }]),
    ...results.map((r) => ({ name: r.name, eth: r.t.eth.tps, erc20: r.t.erc20?.tps ?? Number.NaN })),
  ];
  const w = 14;
  const cell = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : "n/a").padStart(w);
  console.log("");
  console.log(
    `cometh app: the app alone, ${N} txs of each kind (mempool + blocks in-process, no consensus, no RPC); the others: the node over JSON-RPC, ${RPC_TXS} of each`,
  );
  console.log(`${"tx/s".padEnd(24)}${cols.map((c) => c.name.padStart(w)).join("")}`);
  for (const kind of ["eth", "erc20"] as const) {
    const label = kind === "eth" ? "ETH transfers" : "ERC-20 transfers";
    console.log(`${label.padEnd(24)}${cols.map((c) => cell(c[kind], 0)).join("")}`);
    if (hardhat !== undefined) {
      const ref = kind === "eth" ? hardhat.t.eth.tps : (hardhat.t.erc20?.tps ?? Number.NaN);
      console.log(`${"  / Hardhat 3's".padEnd(24)}${cols.map((c) => cell(c[kind] / ref, 2)).join("")}`);
    }
  }
  // The node's CPU (all its threads) per tx of both phases; the app alone has no column here.
  const cpuPerTx = (name: string) => {
    const r = results.find((x) => x.name === name);
    return r === undefined ? Number.NaN : (r.cpuMs / (r.t.eth.mined + (r.t.erc20?.mined ?? 0))) * 1000;
  };
  console.log(`${"node CPU µs / mined tx".padEnd(24)}${cols.map((c) => cell(cpuPerTx(c.name), 0)).join("")}`);
  for (const r of results) for (const n of r.t.notes) console.log(`note: ${r.name}: ${n}`);
  for (const s of skipped) console.log(`skipped: ${s}`);
}

await main();
