import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { createMPT } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { keccak256, publicKeyOf, publicKeyToAddress } from "../../src/app/evm/crypto.js";
import {
  bigintToBytes,
  EMPTY_TRIE_ROOT,
  KECCAK256_NULL,
  MISSING_ACCOUNT,
  type StoredAccount,
  stripZeros,
} from "../../src/app/evm/records.js";
import type { StateReader } from "../../src/app/evm/stateDb.js";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import {
  type AccessListItem,
  type BlockEnv,
  type EngineLog,
  type EngineState,
  type EngineTx,
  EngineTxError,
  type Fork,
  type TxResult,
} from "../../src/evm/types.js";
import { bytesToHex } from "../../src/util/bytes.js";

/**
 * The GeneralStateTests runner (docs/evm-engine.md, `npm run test:state`): ethereum/tests fixtures
 * expanded into their Cancun post entries, each run through an Executor on an OverlayStateManager over
 * the test's pre-state, then judged by the standard Merkle-Patricia state root of pre + overlay (built
 * here for the test only; the chain's app hash does not use it) and the hash of the logs.
 */

/**
 * Runs one transaction. cometh's engine (engine/transaction.ts `executeTx`) is synchronous; the
 * ethereumjs reference (referenceExecutor.ts) answers with a promise. Throws EngineTxError for a
 * transaction that cannot be included (the state must then be unchanged).
 */
export type Executor = (state: EngineState, tx: EngineTx, block: BlockEnv, fork: Fork) => TxResult | Promise<TxResult>;

/** Fixtures folder: $ETHEREUM_TESTS_DIR, else `../shared/ethereum-tests` beside the repository. */
export function fixturesDir(env: NodeJS.ProcessEnv = process.env): string {
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const dir = env.ETHEREUM_TESTS_DIR;
  return dir !== undefined && dir !== "" ? resolve(repoRoot, dir) : resolve(repoRoot, "../shared/ethereum-tests");
}

/** The GeneralStateTests folder under the fixtures dir; undefined when absent. */
export function generalStateTestsDir(dir = fixturesDir()): string | undefined {
  const gst = join(dir, "GeneralStateTests");
  return existsSync(gst) ? gst : undefined;
}

// ---- fixture JSON ---------------------------------------------------------------------------------

interface AccountJson {
  balance: string;
  code: string;
  nonce: string;
  storage: Record<string, string>;
}

interface PostJson {
  hash: string;
  logs: string;
  txbytes: string;
  indexes: { data: number; gas: number; value: number };
  expectException?: string;
}

interface TxJson {
  data: string[];
  gasLimit: string[];
  value: string[];
  nonce: string;
  secretKey: string;
  sender?: string;
  to: string;
  gasPrice?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  accessLists?: ({ address: string; storageKeys: string[] }[] | null)[];
  blobVersionedHashes?: string[];
  maxFeePerBlobGas?: string;
}

interface EnvJson {
  currentCoinbase: string;
  currentGasLimit: string;
  currentNumber: string;
  currentTimestamp: string;
  currentDifficulty?: string;
  currentRandom?: string;
  currentBaseFee?: string;
  currentExcessBlobGas?: string;
}

export interface StateTestJson {
  env: EnvJson;
  pre: Record<string, AccountJson>;
  transaction: TxJson;
  post: Record<string, PostJson[]>;
}

/** One test of a fixture file with its pre-state and block, shared by its post entries. */
export interface StateTest {
  /** Path relative to GeneralStateTests. */
  file: string;
  /** Directory relative to GeneralStateTests (the per-folder tallies). */
  folder: string;
  name: string;
  json: StateTestJson;
}

/** One post entry of a test under a fork: a (data, gas, value) combination and its expectation. */
export interface StateTestCase {
  test: StateTest;
  /** Position among the test's entries for the fork. */
  index: number;
  post: PostJson;
}

/** Fixture files (.json) under `root`, sorted, as paths relative to it. */
export function listFixtureFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".json")) out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

/** The tests of one fixture file. */
export function loadFixtureFile(root: string, file: string): StateTest[] {
  const json = JSON.parse(readFileSync(join(root, file), "utf8")) as Record<string, StateTestJson>;
  const folder = dirname(file).split(sep).join("/");
  return Object.entries(json).map(([name, t]) => ({ file: file.split(sep).join("/"), folder, name, json: t }));
}

/** The post entries of `test` under fixture fork `forkName` ("Cancun"). */
export function expandTest(test: StateTest, forkName = "Cancun"): StateTestCase[] {
  return (test.json.post[forkName] ?? []).map((post, index) => ({ test, index, post }));
}

/** A readable id: `folder/file.json:name[d=0,g=1,v=0]`. */
export function caseId(c: StateTestCase): string {
  const i = c.post.indexes;
  return `${c.test.file}:${c.test.name}[d=${i.data},g=${i.gas},v=${i.value}]`;
}

// ---- values -----------------------------------------------------------------------------------------

function hexBytes(h: string): Uint8Array {
  const s = h.startsWith("0x") ? h.slice(2) : h;
  return new Uint8Array(Buffer.from(s.length % 2 === 1 ? `0${s}` : s, "hex"));
}

/** A fixture number; retesteth writes values past 2^256 as `0x:bigint 0x…` (they make the tx invalid). */
function hexBig(h: string | undefined): bigint {
  if (h === undefined || h === "" || h === "0x") return 0n;
  return BigInt(h.startsWith("0x:bigint ") ? h.slice(10) : h);
}

function word(h: string): Uint8Array {
  const out = new Uint8Array(32);
  const b = stripZeros(hexBytes(h));
  out.set(b.subarray(Math.max(0, b.length - 32)), 32 - Math.min(32, b.length));
  return out;
}

// ---- pre-state --------------------------------------------------------------------------------------

/**
 * A test's pre-state as a StateReader (height 0, every account at incarnation 0). `hasStorage` lets the
 * reference executor see EIP-7610's "non-empty storage" for accounts the overlay reports without a root.
 */
export class MemoryStateReader implements StateReader {
  readonly height = 0;
  readonly #accounts = new Map<string, { addr: Uint8Array; account: StoredAccount }>();
  readonly #storage = new Map<string, Map<string, { slot: Uint8Array; value: Uint8Array }>>();
  readonly #codes = new Map<string, Uint8Array>();

  /** Adds an account with its code and storage (slot → value, zero values ignored). */
  put(addr: Uint8Array, a: { nonce: bigint; balance: bigint; code: Uint8Array; storage?: Map<string, Uint8Array> }) {
    const key = bytesToHex(addr);
    const codeHash = a.code.length === 0 ? KECCAK256_NULL : keccak256(a.code);
    if (a.code.length > 0) this.#codes.set(bytesToHex(codeHash), a.code);
    this.#accounts.set(key, {
      addr,
      account: { exists: true, nonce: a.nonce, balance: a.balance, codeHash, incarnation: 0 },
    });
    const slots = new Map<string, { slot: Uint8Array; value: Uint8Array }>();
    for (const [slotHex, value] of a.storage ?? []) {
      const v = stripZeros(value);
      if (v.length > 0) slots.set(slotHex, { slot: word(slotHex), value: v });
    }
    this.#storage.set(key, slots);
  }

  account(addr: Uint8Array): StoredAccount {
    return this.#accounts.get(bytesToHex(addr))?.account ?? MISSING_ACCOUNT;
  }

  storage(addr: Uint8Array, incarnation: number, slot: Uint8Array): Uint8Array {
    if (incarnation !== 0) return new Uint8Array(0);
    return this.#storage.get(bytesToHex(addr))?.get(bytesToHex(slot))?.value ?? new Uint8Array(0);
  }

  code(codeHash: Uint8Array): Uint8Array {
    return this.#codes.get(bytesToHex(codeHash)) ?? new Uint8Array(0);
  }

  hasStorage(addr: Uint8Array, incarnation: number): boolean {
    return incarnation === 0 && (this.#storage.get(bytesToHex(addr))?.size ?? 0) > 0;
  }

  /** Every pre-state address. */
  addresses(): Uint8Array[] {
    return [...this.#accounts.values()].map((e) => e.addr);
  }

  /** The non-zero slots of an account in the pre-state. */
  slots(addr: Uint8Array): Uint8Array[] {
    return [...(this.#storage.get(bytesToHex(addr))?.values() ?? [])].map((e) => e.slot);
  }
}

/** The pre-state of a test. */
export function preStateOf(test: StateTestJson): MemoryStateReader {
  const r = new MemoryStateReader();
  for (const [addr, a] of Object.entries(test.pre)) {
    const storage = new Map<string, Uint8Array>();
    for (const [k, v] of Object.entries(a.storage)) storage.set(bytesToHex(word(k)), hexBytes(v));
    r.put(word(addr).subarray(12), {
      nonce: hexBig(a.nonce),
      balance: hexBig(a.balance),
      code: hexBytes(a.code),
      storage,
    });
  }
  return r;
}

// ---- block and transaction --------------------------------------------------------------------------

/** EIP-4844 fake_exponential(factor, numerator, denominator). */
export function fakeExponential(factor: bigint, numerator: bigint, denominator: bigint): bigint {
  let i = 1n;
  let output = 0n;
  let acc = factor * denominator;
  while (acc > 0n) {
    output += acc;
    acc = (acc * numerator) / (denominator * i);
    i++;
  }
  return output / denominator;
}

/** Cancun's MIN_BASE_FEE_PER_BLOB_GAS and BLOB_BASE_FEE_UPDATE_FRACTION (EIP-4844). */
export function blobBaseFeeOf(excessBlobGas: bigint): bigint {
  return fakeExponential(1n, excessBlobGas, 3338477n);
}

/** BLOCKHASH in state tests (geth's vmTestBlockHash): keccak256 of the decimal block number. */
export function testBlockHash(n: bigint): Uint8Array {
  return keccak256(new TextEncoder().encode(n.toString()));
}

/** The block of a test's env. Without currentBaseFee, retesteth's 10; without currentRandom, the difficulty. */
export function blockEnvOf(env: EnvJson): BlockEnv {
  return {
    number: hexBig(env.currentNumber),
    timestamp: hexBig(env.currentTimestamp),
    coinbase: word(env.currentCoinbase).subarray(12),
    gasLimit: hexBig(env.currentGasLimit),
    baseFee: env.currentBaseFee === undefined ? 10n : hexBig(env.currentBaseFee),
    prevRandao: word(env.currentRandom ?? env.currentDifficulty ?? "0x"),
    blobBaseFee: blobBaseFeeOf(hexBig(env.currentExcessBlobGas)),
    chainId: 1n,
    blockHash: testBlockHash,
  };
}

const senders = new Map<string, Uint8Array>();

function senderOf(secretKey: string): Uint8Array {
  let s = senders.get(secretKey);
  if (s === undefined) {
    s = publicKeyToAddress(publicKeyOf(word(secretKey)));
    senders.set(secretKey, s);
  }
  return s;
}

/** The transaction of a post entry (its data/gas/value indexes); the type is the signed txbytes' type. */
export function engineTxOf(t: TxJson, post: PostJson): EngineTx {
  const { data: d, gas: g, value: v } = post.indexes;
  const txbytes = hexBytes(post.txbytes);
  const first = txbytes[0];
  let type: number;
  if (first !== undefined && first < 0x7f) type = first;
  else if (t.blobVersionedHashes !== undefined) type = 3;
  else if (t.maxFeePerGas !== undefined) type = 2;
  else if (t.accessLists?.[d] != null) type = 1;
  else type = 0;
  const accessList: AccessListItem[] = (t.accessLists?.[d] ?? []).map((e) => ({
    address: word(e.address).subarray(12),
    storageKeys: e.storageKeys.map(word),
  }));
  const maxFee = t.maxFeePerGas !== undefined ? hexBig(t.maxFeePerGas) : hexBig(t.gasPrice);
  const tip = t.maxPriorityFeePerGas !== undefined ? hexBig(t.maxPriorityFeePerGas) : hexBig(t.gasPrice);
  return {
    type,
    from: senderOf(t.secretKey),
    to: t.to === "" ? undefined : word(t.to).subarray(12),
    nonce: hexBig(t.nonce),
    gasLimit: hexBig(t.gasLimit[g]),
    value: hexBig(t.value[v]),
    data: hexBytes(t.data[d] ?? "0x"),
    maxFeePerGas: maxFee,
    maxPriorityFeePerGas: tip,
    accessList,
    blobVersionedHashes: (t.blobVersionedHashes ?? []).map(hexBytes),
    maxFeePerBlobGas: hexBig(t.maxFeePerBlobGas),
    authorizationList: [],
  };
}

// ---- post-state ---------------------------------------------------------------------------------------

async function storageRoot(state: OverlayStateManager, addr: Uint8Array, slots: Iterable<Uint8Array>) {
  const trie = await createMPT({ useKeyHashing: false });
  let any = false;
  for (const slot of slots) {
    const v = state.storage(addr, slot);
    if (v.length === 0) continue;
    any = true;
    await trie.put(keccak256(slot), RLP.encode(v));
  }
  return any ? trie.root() : EMPTY_TRIE_ROOT;
}

/**
 * The secure Merkle-Patricia state root of pre + overlay: every account that exists (pre-state
 * addresses and those the overlay wrote), with its storage at its current incarnation (a wiped
 * account's older slots no longer count).
 */
export async function postStateRoot(pre: MemoryStateReader, state: OverlayStateManager): Promise<Uint8Array> {
  const diff = state.diff();
  const addrs = new Map<string, Uint8Array>();
  const slots = new Map<string, Map<string, Uint8Array>>();
  const addSlot = (addr: Uint8Array, slot: Uint8Array) => {
    const k = bytesToHex(addr);
    let m = slots.get(k);
    if (m === undefined) {
      m = new Map();
      slots.set(k, m);
    }
    m.set(bytesToHex(slot), slot);
  };
  for (const addr of pre.addresses()) {
    addrs.set(bytesToHex(addr), addr);
    for (const slot of pre.slots(addr)) addSlot(addr, slot);
  }
  for (const a of diff.accounts) addrs.set(bytesToHex(a.addr), a.addr);
  for (const s of diff.storage) {
    addrs.set(bytesToHex(s.addr), s.addr);
    addSlot(s.addr, s.slot);
  }
  const trie = await createMPT({ useKeyHashing: false });
  for (const [k, addr] of addrs) {
    const a = state.account(addr);
    if (!a.exists) continue;
    const root = await storageRoot(state, addr, slots.get(k)?.values() ?? []);
    await trie.put(keccak256(addr), RLP.encode([bigintToBytes(a.nonce), bigintToBytes(a.balance), root, a.codeHash]));
  }
  return trie.root();
}

/** keccak256(rlp([[address, topics, data], ...])), the `logs` of a post entry. */
export function logsHash(logs: readonly EngineLog[]): Uint8Array {
  return keccak256(RLP.encode(logs.map((l) => [l.address, l.topics, l.data])));
}

// ---- running ------------------------------------------------------------------------------------------

export type CaseStatus = "pass" | "fail" | "skip";

export interface CaseResult {
  id: string;
  folder: string;
  status: CaseStatus;
  /** Why it failed or was skipped. */
  reason: string;
  expectedRoot: string;
  gotRoot: string;
  expectedLogs: string;
  gotLogs: string;
  /** The executor's outcome: "ok", "reverted: <error>", "invalid: <message>", "threw: <message>". */
  outcome: string;
}

/** A rule that skips cases, with the reason printed for each skip. */
export interface SkipRule {
  match: (c: StateTestCase) => boolean;
  reason: string;
}

/**
 * Cases not run, each with its reason. Kept empty unless a case cannot be expressed through the
 * engine contract (types.ts); a case an engine gets wrong is a failure, not a skip.
 */
export const SKIPS: readonly SkipRule[] = [
  {
    match: (c) => c.test.name === "CALLBlake2f_MaxRounds",
    reason:
      "2^32-1 blake2f rounds (10^10 gas): about 26 minutes at cometh's 2.7 M rounds/s in JavaScript, longer in ethereumjs",
  },
];

/**
 * Cases the ethereumjs reference does not finish in useful time (a limitation of its JS precompiles,
 * not of the harness); cometh's engine runs them.
 */
export const REFERENCE_SKIPS: readonly SkipRule[] = [];

/** Per-test values shared by its post entries (pre-state, block). */
const prepared = new WeakMap<StateTest, { pre: MemoryStateReader; block: BlockEnv }>();

function prepare(test: StateTest): { pre: MemoryStateReader; block: BlockEnv } {
  let p = prepared.get(test);
  if (p === undefined) {
    p = { pre: preStateOf(test.json), block: blockEnvOf(test.json.env) };
    prepared.set(test, p);
  }
  return p;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs one post entry through `executor` and judges it. */
export async function runStateTestCase(
  c: StateTestCase,
  executor: Executor,
  fork: Fork = "cancun",
  skips: readonly SkipRule[] = SKIPS,
): Promise<CaseResult> {
  const result: CaseResult = {
    id: caseId(c),
    folder: c.test.folder,
    status: "pass",
    reason: "",
    expectedRoot: c.post.hash,
    gotRoot: "",
    expectedLogs: c.post.logs,
    gotLogs: "",
    outcome: "",
  };
  const skip = skips.find((s) => s.match(c));
  if (skip !== undefined) return { ...result, status: "skip", reason: skip.reason };
  const { pre, block } = prepare(c.test);
  const state = new OverlayStateManager(pre);
  let logs: EngineLog[] = [];
  let invalid: string | undefined;
  try {
    const tx = engineTxOf(c.test.json.transaction, c.post);
    const r = executor(state, tx, block, fork);
    const res = r instanceof Promise ? await r : r;
    logs = res.logs;
    result.outcome = res.success ? "ok" : `reverted: ${res.error}`;
  } catch (err) {
    if (!(err instanceof EngineTxError)) {
      return { ...result, status: "fail", reason: `executor threw ${messageOf(err)}`, outcome: "threw" };
    }
    invalid = err.message;
    result.outcome = `invalid: ${err.message}`;
  }
  result.gotRoot = `0x${bytesToHex(await postStateRoot(pre, state))}`;
  result.gotLogs = `0x${bytesToHex(logsHash(logs))}`;
  const expected = c.post.expectException;
  const fails: string[] = [];
  if (expected !== undefined && invalid === undefined) fails.push(`expected exception ${expected}, tx was valid`);
  if (expected === undefined && invalid !== undefined) fails.push(`unexpected invalid tx: ${invalid}`);
  if (invalid !== undefined) {
    const diff = state.diff();
    if (diff.accounts.length + diff.storage.length > 0) fails.push("an invalid tx changed the state");
  }
  if (result.gotRoot !== result.expectedRoot) fails.push("state root differs");
  if (result.gotLogs !== result.expectedLogs) fails.push("logs hash differs");
  if (fails.length > 0) return { ...result, status: "fail", reason: fails.join("; ") };
  return result;
}

/** Every case of the fixtures under `root` (GeneralStateTests), in file order, optionally filtered. */
export function loadCases(root: string, filter?: string): StateTestCase[] {
  const out: StateTestCase[] = [];
  for (const file of listFixtureFiles(root)) {
    for (const test of loadFixtureFile(root, file)) {
      const cases = expandTest(test);
      for (const c of cases) if (filter === undefined || caseId(c).includes(filter)) out.push(c);
    }
  }
  return out;
}

/**
 * A fixed sample covering every folder: up to `perFolder` cases of each folder, spread evenly over its
 * cases in file order (the same cases on every run).
 */
export function sampleCases(cases: readonly StateTestCase[], perFolder: number): StateTestCase[] {
  const byFolder = new Map<string, StateTestCase[]>();
  for (const c of cases) {
    let list = byFolder.get(c.test.folder);
    if (list === undefined) {
      list = [];
      byFolder.set(c.test.folder, list);
    }
    list.push(c);
  }
  const out: StateTestCase[] = [];
  for (const list of byFolder.values()) {
    if (list.length <= perFolder) {
      out.push(...list);
      continue;
    }
    for (let i = 0; i < perFolder; i++) out.push(list[Math.floor((i * list.length) / perFolder)] as StateTestCase);
  }
  return out;
}
