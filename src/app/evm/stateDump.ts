import { gunzipSync, gzipSync } from "node:zlib";
import { bytesToHex, compareBytes, hexToBytes, utf8ToBytes } from "../../util/bytes.js";
import { EvmAppError } from "./errors.js";

/**
 * Foundry Anvil's state dump (`SerializableState`, crates/anvil/src/eth/backend/db.rs), so that
 * `anvil_dumpState`/`anvil_loadState` and `anvil --dump-state`/`--load-state`/`--state` files move between
 * Anvil and this node. The file is JSON; the RPC form is `0x` + hex of the gzipped JSON. Anvil writes:
 *
 * ```json
 * {"block":{"number":"0x2","beneficiary":"0x…","timestamp":"0x…","gas_limit":30000000,"basefee":875000000,
 *   "difficulty":"0x0","prevrandao":"0x…","blob_excess_gas_and_price":{"excess_blob_gas":0,"blob_gasprice":1},
 *   "slot_num":0},
 *  "accounts":{"0x…":{"nonce":1,"balance":"0x…","code":"0x…","storage":{"0x<32 bytes>":"0x<32 bytes>"}}},
 *  "best_block_number":2,"blocks":[…],"transactions":[…],"historical_states":null}
 * ```
 *
 * `blocks`, `transactions` and `historical_states` hold Anvil's own chain (headers, signed txs, receipts,
 * traces, revm snapshots): reading checks that they are arrays and skips them; writing gives one header-only
 * head block and no transactions or history. The format carries no chain id.
 */

/** One account of a dump. Storage slots and values are 32 bytes (shorter ones are left-padded when encoding). */
export interface DumpAccount {
  address: Uint8Array;
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  storage: { slot: Uint8Array; value: Uint8Array }[];
}

/**
 * What a dump carries that a loader can use. The block fields come from Anvil's `block` (revm's BlockEnv of
 * the head block); each is undefined when the dump does not carry it (`block` is null, absent in dumps
 * before Anvil 2024-01, or a pre-1.3 `block` that leaves a field out).
 */
export interface StateDump {
  /** Sorted by address, as Anvil writes and reads them (a BTreeMap). */
  accounts: DumpAccount[];
  /** `block.number`. */
  blockNumber?: bigint;
  /** `best_block_number`, the head Anvil resumes from; Anvil falls back to `block.number`. */
  bestBlockNumber?: bigint;
  /** `block.timestamp`, seconds. */
  timestamp?: bigint;
  /** `block.beneficiary` (`coinbase` before Anvil 1.3). */
  coinbase?: Uint8Array;
  gasLimit?: bigint;
  /** `block.basefee`, wei. */
  baseFee?: bigint;
  difficulty?: bigint;
  prevRandao?: Uint8Array;
  excessBlobGas?: bigint;
  blobGasPrice?: bigint;
}

/** A state dump that cannot be read or written; the message names the field. */
export class StateDumpError extends EvmAppError {}

const U64_MAX = (1n << 64n) - 1n;
const U128_MAX = (1n << 128n) - 1n;
const U256_MAX = (1n << 256n) - 1n;
const ZERO_ADDRESS = new Uint8Array(20);
const ZERO_HASH = new Uint8Array(32);
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const DUMP_HINT = "Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState";

// ---------------------------------------------------------------------------------------------------------
// Encoding

/**
 * The JSON text Anvil writes: its field names and order, and serde's encodings (compact, lowercase hex).
 * With a block, `blocks` holds one header-only block at the head: Anvil 1.7.1 refuses a dump whose head is
 * not among its blocks ("Best hash not found for best number"); Anvil's main branch since foundry#15944
 * (2026-07) makes the same checkpoint itself when `blocks` is empty (mem/mod.rs load_state).
 */
export function encodeAnvilStateJson(d: StateDump): string {
  const best = d.bestBlockNumber ?? d.blockNumber;
  if (best !== undefined) {
    checkRange(best, U64_MAX, d.bestBlockNumber !== undefined ? "bestBlockNumber" : "blockNumber");
  }
  const env = blockEnvOf(d);
  const blocks = env === undefined ? "[]" : `[${encodeHeadBlock(env, best ?? 0n)}]`;
  return (
    `{"block":${env === undefined ? "null" : encodeBlockEnv(env)},"accounts":${encodeAccounts(d.accounts)},` +
    `"best_block_number":${best ?? "null"},"blocks":${blocks},"transactions":[],"historical_states":null}`
  );
}

/** `0x` + hex(gzip(JSON)), the answer of anvil_dumpState. */
export function encodeAnvilStateHex(d: StateDump): string {
  return `0x${bytesToHex(gzipSync(utf8ToBytes(encodeAnvilStateJson(d))))}`;
}

type BlockEnv = Required<Omit<StateDump, "accounts" | "bestBlockNumber">>;

/** The dump's block fields, the missing ones at revm's BlockEnv::default() (Anvil needs them all). */
function blockEnvOf(d: StateDump): BlockEnv | undefined {
  const has =
    d.blockNumber !== undefined ||
    d.timestamp !== undefined ||
    d.coinbase !== undefined ||
    d.gasLimit !== undefined ||
    d.baseFee !== undefined ||
    d.difficulty !== undefined ||
    d.prevRandao !== undefined ||
    d.excessBlobGas !== undefined ||
    d.blobGasPrice !== undefined;
  if (!has) return undefined;
  const env: BlockEnv = {
    blockNumber: d.blockNumber ?? d.bestBlockNumber ?? 0n,
    timestamp: d.timestamp ?? 1n,
    coinbase: d.coinbase ?? ZERO_ADDRESS,
    gasLimit: d.gasLimit ?? U64_MAX,
    baseFee: d.baseFee ?? 0n,
    difficulty: d.difficulty ?? 0n,
    prevRandao: d.prevRandao ?? ZERO_HASH,
    excessBlobGas: d.excessBlobGas ?? 0n,
    blobGasPrice: d.blobGasPrice ?? 1n,
  };
  checkRange(env.blockNumber, U256_MAX, "blockNumber");
  // revm keeps the timestamp as a U256, but block headers (and this node) as a u64.
  checkRange(env.timestamp, U64_MAX, "timestamp");
  checkRange(env.gasLimit, U64_MAX, "gasLimit");
  checkRange(env.baseFee, U64_MAX, "baseFee");
  checkRange(env.difficulty, U256_MAX, "difficulty");
  checkRange(env.excessBlobGas, U64_MAX, "excessBlobGas");
  checkRange(env.blobGasPrice, U128_MAX, "blobGasPrice");
  checkLength(env.coinbase, 20, "coinbase");
  checkLength(env.prevRandao, 32, "prevRandao");
  return env;
}

function encodeBlockEnv(e: BlockEnv): string {
  return (
    `{"number":"${quantity(e.blockNumber)}","beneficiary":"0x${bytesToHex(e.coinbase)}",` +
    `"timestamp":"${quantity(e.timestamp)}","gas_limit":${e.gasLimit},"basefee":${e.baseFee},` +
    `"difficulty":"${quantity(e.difficulty)}","prevrandao":"0x${bytesToHex(e.prevRandao)}",` +
    `"blob_excess_gas_and_price":{"excess_blob_gas":${e.excessBlobGas},"blob_gasprice":${e.blobGasPrice}},"slot_num":0}`
  );
}

const EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
const EMPTY_OMMERS_HASH = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
/** EIP-7685's requests hash of no requests: sha256 of nothing. */
const EMPTY_REQUESTS_HASH = "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ZERO_HASH_HEX = `0x${"00".repeat(32)}`;

/**
 * A header-only block at the head, in alloy's header JSON (the fields and order of a Prague header Anvil
 * writes), as Anvil's own checkpoint: the env's coinbase, time, gas limit, base fee and randomness, no
 * parent, empty roots.
 */
function encodeHeadBlock(e: BlockEnv, number: bigint): string {
  return (
    `{"header":{"parentHash":"${ZERO_HASH_HEX}","sha3Uncles":"${EMPTY_OMMERS_HASH}",` +
    `"miner":"0x${bytesToHex(e.coinbase)}","stateRoot":"${EMPTY_ROOT}","transactionsRoot":"${EMPTY_ROOT}",` +
    `"receiptsRoot":"${EMPTY_ROOT}","logsBloom":"0x${"00".repeat(256)}","difficulty":"${quantity(e.difficulty)}",` +
    `"number":"${quantity(number)}","gasLimit":"${quantity(e.gasLimit)}","gasUsed":"0x0",` +
    `"timestamp":"${quantity(e.timestamp)}","extraData":"0x","mixHash":"0x${bytesToHex(e.prevRandao)}",` +
    `"nonce":"0x0000000000000000","baseFeePerGas":"${quantity(e.baseFee)}","withdrawalsRoot":"${EMPTY_ROOT}",` +
    `"blobGasUsed":"0x0","excessBlobGas":"${quantity(e.excessBlobGas)}","parentBeaconBlockRoot":"${ZERO_HASH_HEX}",` +
    `"requestsHash":"${EMPTY_REQUESTS_HASH}"},"transactions":[],"ommers":[],"withdrawals":null}`
  );
}

function encodeAccounts(accounts: DumpAccount[]): string {
  const sorted = accounts.map((a, i) => ({ a, i }));
  for (const { a, i } of sorted) {
    if (!(a.address instanceof Uint8Array) || a.address.length !== 20) {
      throw new StateDumpError(`accounts[${i}].address is not 20 bytes. Give each account a 20-byte address`);
    }
  }
  sorted.sort((x, y) => compareBytes(x.a.address, y.a.address));
  const parts: string[] = [];
  for (let k = 0; k < sorted.length; k++) {
    const { a } = sorted[k] as { a: DumpAccount };
    const key = `0x${bytesToHex(a.address)}`;
    const prev = sorted[k - 1];
    if (prev !== undefined && compareBytes(prev.a.address, a.address) === 0) {
      throw new StateDumpError(`account ${key} appears twice. Merge the two entries into one`);
    }
    parts.push(`"${key}":${encodeAccount(a, key)}`);
  }
  return `{${parts.join(",")}}`;
}

function encodeAccount(a: DumpAccount, key: string): string {
  checkRange(a.nonce, U64_MAX, `account ${key} nonce`);
  checkRange(a.balance, U256_MAX, `account ${key} balance`);
  if (!(a.code instanceof Uint8Array)) throw new StateDumpError(`account ${key} code is not bytes`);
  const slots = a.storage.map(({ slot, value }) => {
    const s = leftPad32(slot, `account ${key} storage slot`);
    return { s, hex: bytesToHex(s), value: leftPad32(value, `account ${key} storage value`) };
  });
  slots.sort((x, y) => compareBytes(x.s, y.s));
  const storage: string[] = [];
  for (let k = 0; k < slots.length; k++) {
    const e = slots[k] as (typeof slots)[number];
    if (k > 0 && slots[k - 1]?.hex === e.hex) {
      throw new StateDumpError(`account ${key} storage slot 0x${e.hex} appears twice. Keep one value per slot`);
    }
    storage.push(`"0x${e.hex}":"0x${bytesToHex(e.value)}"`);
  }
  return `{"nonce":${a.nonce},"balance":"${quantity(a.balance)}","code":"0x${bytesToHex(a.code)}","storage":{${storage.join(",")}}}`;
}

function quantity(n: bigint): string {
  return `0x${n.toString(16)}`;
}

function checkRange(n: bigint, max: bigint, what: string): void {
  if (typeof n !== "bigint") throw new StateDumpError(`${what} is a ${typeof n}, not a bigint. Give it as a bigint`);
  if (n < 0n || n > max) {
    throw new StateDumpError(`${what} ${String(n)} is out of range. Give a bigint from 0 to ${maxText(max)}`);
  }
}

function maxText(max: bigint): string {
  return `2^${max.toString(2).length}-1`;
}

function checkLength(b: Uint8Array, length: number, what: string): void {
  if (!(b instanceof Uint8Array) || b.length !== length) {
    throw new StateDumpError(`${what} is not ${length} bytes. Give exactly ${length} bytes`);
  }
}

function leftPad32(b: Uint8Array, what: string): Uint8Array {
  if (!(b instanceof Uint8Array) || b.length > 32) {
    throw new StateDumpError(`${what} is longer than 32 bytes. Storage slots and values are 32-byte words`);
  }
  if (b.length === 32) return b;
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Decoding

/**
 * Reads a dump as `anvil_loadState` does: `0x`-hex (the prefix is optional, as for any Anvil bytes param) of
 * gzipped JSON, or of the plain JSON when the bytes do not start with gzip's magic (mem/mod.rs
 * load_state_bytes).
 */
export function decodeAnvilStateHex(hex: string): StateDump {
  if (typeof hex !== "string") throw new StateDumpError(`the state dump is a ${typeof hex}, not a hex string`);
  const bytes = hexToBytes(hex);
  if (bytes === undefined) {
    throw new StateDumpError(
      "the state dump is not hex. Pass the answer of anvil_dumpState: 0x and an even number of hex digits",
    );
  }
  let json = bytes;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      json = new Uint8Array(gunzipSync(bytes));
    } catch (cause) {
      throw new StateDumpError(`the state dump starts like gzip but does not decompress. ${DUMP_HINT}`, { cause });
    }
  }
  let text: string;
  try {
    text = UTF8.decode(json);
  } catch (cause) {
    const problem = cause instanceof RangeError ? "is too large to read" : "is neither gzip nor UTF-8 text";
    throw new StateDumpError(`the state dump ${problem}. ${DUMP_HINT}`, { cause });
  }
  return decodeAnvilStateJson(text);
}

/**
 * Reads the JSON Anvil writes (`--dump-state`, or gunzipped anvil_dumpState), current and older shapes:
 * `block` as revm's BlockEnv (U256 fields as hex strings, with `slot_num`), as Anvil 1.3's (plain numbers,
 * no `slot_num`) or as Anvil 1.2's (hex strings, `coinbase`), or null; `best_block_number` as a number or a
 * hex/decimal string, or null. Dumps from before 2024-01 have only `accounts`: the other fields may be
 * absent here, although Anvil itself now refuses a dump without `block` and `best_block_number` (their
 * `deserialize_with` has no serde default).
 */
export function decodeAnvilStateJson(text: string): StateDump {
  if (typeof text !== "string") throw new StateDumpError(`the state dump is a ${typeof text}, not JSON text`);
  const top = new JsonReader(text).document();
  const d: StateDump = { accounts: decodeAccounts(top.get("accounts")) };
  const block = top.get("block");
  if (block !== undefined && block !== null) decodeBlockEnv(block, d);
  const best = top.get("best_block_number");
  if (best !== undefined && best !== null) {
    if (!(best instanceof JsonNumber) && typeof best !== "string") {
      throw fieldError("best_block_number", best, "a block number such as 2");
    }
    d.bestBlockNumber = uint(best, "best_block_number", U64_MAX);
  }
  for (const key of ["blocks", "transactions"] as const) {
    const kind = top.get(key);
    if (kind !== undefined && !(kind instanceof Skipped && kind.kind === "array")) {
      throw fieldError(key, kind, "an array (or leave the field out)");
    }
  }
  const history = top.get("historical_states");
  if (history !== undefined && !(history instanceof Skipped && (history.kind === "array" || history.kind === "null"))) {
    throw fieldError("historical_states", history, "an array or null");
  }
  return d;
}

function decodeAccounts(v: TopValue | undefined): DumpAccount[] {
  if (v === undefined) throw new StateDumpError(`the state dump has no "accounts". ${DUMP_HINT}`);
  if (!(v instanceof JsonObject)) throw fieldError("accounts", v, "an object of address → account");
  // A BTreeMap: a later entry for the same address replaces an earlier one, and the result is sorted.
  const byAddress = new Map<string, DumpAccount>();
  for (const [key, value] of v.entries) {
    const path = `accounts[${JSON.stringify(key)}]`;
    const address = hexToBytes(key);
    if (address === undefined || address.length !== 20) {
      throw new StateDumpError(`${path}: the key is not a 20-byte hex address. Write it as 0x and 40 hex digits`);
    }
    byAddress.set(bytesToHex(address), decodeAccount(address, value, path));
  }
  return [...byAddress.values()].sort((a, b) => compareBytes(a.address, b.address));
}

function decodeAccount(address: Uint8Array, v: JsonValue, path: string): DumpAccount {
  const f = structFields(v, path, "an account object with nonce, balance, code and storage");
  const nonce = required(f, "nonce", path);
  if (!(nonce instanceof JsonNumber)) throw fieldError(`${path}.nonce`, nonce, "a JSON integer such as 1");
  const code = required(f, "code", path);
  const codeBytes = typeof code === "string" ? hexToBytes(code) : undefined;
  if (codeBytes === undefined) throw fieldError(`${path}.code`, code, 'hex bytes such as "0x6080" or "0x"');
  const storage = required(f, "storage", path);
  if (!(storage instanceof JsonObject)) throw fieldError(`${path}.storage`, storage, "an object of slot → value");
  const slots = new Map<string, { slot: Uint8Array; value: Uint8Array }>();
  for (const [key, value] of storage.entries) {
    const at = `${path}.storage[${JSON.stringify(key)}]`;
    const slot = word(uint(key, `${at} (the slot)`, U256_MAX));
    slots.set(bytesToHex(slot), { slot, value: word(quantityValue(value, at, U256_MAX)) });
  }
  return {
    address,
    nonce: uint(nonce, `${path}.nonce`, U64_MAX),
    balance: quantityValue(required(f, "balance", path), `${path}.balance`, U256_MAX),
    code: codeBytes,
    storage: [...slots.values()].sort((a, b) => compareBytes(a.slot, b.slot)),
  };
}

/**
 * revm's BlockEnv as Anvil writes it now, or LegacyBlockEnv (db.rs) from before Anvil 1.3: every field
 * optional there, `coinbase` for `beneficiary`, hex strings for numbers. Anvil fills what a legacy block
 * leaves out (number 0, timestamp 1, gas limit 2^64-1, …); here it stays undefined.
 */
function decodeBlockEnv(v: TopValue, d: StateDump): void {
  const f = structFields(v, "block", "an object (revm's BlockEnv) or null");
  if (f.has("beneficiary") && f.has("coinbase")) {
    throw new StateDumpError('block has both "beneficiary" and "coinbase". Keep one');
  }
  const number = f.get("number");
  if (number !== undefined) d.blockNumber = quantityValue(number, "block.number", U256_MAX);
  const coinbase = f.get("beneficiary") ?? f.get("coinbase");
  if (coinbase !== undefined) {
    const name = f.has("beneficiary") ? "beneficiary" : "coinbase";
    const b = typeof coinbase === "string" ? hexToBytes(coinbase) : undefined;
    if (b === undefined || b.length !== 20) throw fieldError(`block.${name}`, coinbase, "a 20-byte hex address");
    d.coinbase = b;
  }
  const timestamp = f.get("timestamp");
  if (timestamp !== undefined) d.timestamp = quantityValue(timestamp, "block.timestamp", U256_MAX);
  const gasLimit = f.get("gas_limit");
  if (gasLimit !== undefined) d.gasLimit = quantityValue(gasLimit, "block.gas_limit", U64_MAX);
  const baseFee = f.get("basefee");
  if (baseFee !== undefined) d.baseFee = quantityValue(baseFee, "block.basefee", U64_MAX);
  const difficulty = f.get("difficulty");
  if (difficulty !== undefined) d.difficulty = quantityValue(difficulty, "block.difficulty", U256_MAX);
  const prevRandao = f.get("prevrandao");
  if (prevRandao !== undefined && prevRandao !== null) {
    const b = typeof prevRandao === "string" ? hexToBytes(prevRandao) : undefined;
    if (b === undefined || b.length !== 32) throw fieldError("block.prevrandao", prevRandao, "a 32-byte hex hash");
    d.prevRandao = b;
  }
  const blob = f.get("blob_excess_gas_and_price");
  if (blob !== undefined && blob !== null) {
    const path = "block.blob_excess_gas_and_price";
    const b = structFields(blob, path, "an object with excess_blob_gas and blob_gasprice, or null");
    const excess = required(b, "excess_blob_gas", path);
    const price = required(b, "blob_gasprice", path);
    if (!(excess instanceof JsonNumber)) throw fieldError(`${path}.excess_blob_gas`, excess, "a JSON integer");
    if (!(price instanceof JsonNumber)) throw fieldError(`${path}.blob_gasprice`, price, "a JSON integer");
    d.excessBlobGas = uint(excess, `${path}.excess_blob_gas`, U64_MAX);
    d.blobGasPrice = uint(price, `${path}.blob_gasprice`, U128_MAX);
  }
  const slotNum = f.get("slot_num");
  if (slotNum !== undefined) {
    // EIP-7843's slot number: zero before Amsterdam and of no use here, but checked like the rest.
    if (!(slotNum instanceof JsonNumber)) throw fieldError("block.slot_num", slotNum, "a JSON integer");
    uint(slotNum, "block.slot_num", U64_MAX);
  }
}

/** A number Anvil accepts as a JSON integer or a string (0x hex, 0o, 0b or decimal, as ruint parses). */
function quantityValue(v: JsonValue, path: string, max: bigint): bigint {
  if (!(v instanceof JsonNumber) && typeof v !== "string") {
    throw fieldError(path, v, 'a hex quantity such as "0x1f" or a JSON integer');
  }
  return uint(v, path, max);
}

const INTEGER_STRING = /^(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/;

function uint(v: JsonNumber | string, path: string, max: bigint): bigint {
  const text = v instanceof JsonNumber ? v.text : v;
  if (text.startsWith("-")) throw fieldError(path, v, "a number that is not negative");
  if (v instanceof JsonNumber ? !/^[0-9]+$/.test(text) : !INTEGER_STRING.test(text)) {
    throw fieldError(path, v, v instanceof JsonNumber ? "an integer" : 'a hex quantity such as "0x1f"');
  }
  // BigInt() reads the 0x/0o/0b prefixes itself; the regexes above keep out what it would also take
  // (whitespace, an empty string).
  const n = BigInt(text);
  if (n > max) throw fieldError(path, v, `a number no larger than ${maxText(max)}`);
  return n;
}

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  const hex = n.toString(16).padStart(64, "0");
  out.set(Buffer.from(hex, "hex"));
  return out;
}

function structFields(v: TopValue, path: string, expected: string): Map<string, JsonValue> {
  if (!(v instanceof JsonObject)) throw fieldError(path, v, expected);
  const fields = new Map<string, JsonValue>();
  for (const [key, value] of v.entries) {
    // serde refuses a struct field given twice.
    if (fields.has(key)) throw new StateDumpError(`${path} has "${key}" twice. Keep one`);
    fields.set(key, value);
  }
  return fields;
}

function required(f: Map<string, JsonValue>, key: string, path: string): JsonValue {
  const v = f.get(key);
  if (v === undefined) throw new StateDumpError(`${path} has no "${key}". Anvil always writes it`);
  return v;
}

function fieldError(path: string, v: TopValue, expected: string): StateDumpError {
  return new StateDumpError(`${path} is ${describe(v)}. Expected ${expected}`);
}

function describe(v: TopValue): string {
  if (v === null) return "null";
  if (v instanceof Skipped) return describeKind(v.kind);
  if (v instanceof JsonNumber) return `the number ${clip(v.text)}`;
  if (v instanceof JsonObject) return "an object";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${clip(JSON.stringify(v))}`;
  return String(v);
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

// ---------------------------------------------------------------------------------------------------------
// A JSON reader that keeps numbers as their text: Anvil writes u64 and u128 fields (gas limits up to
// 2^64-1, blob gas prices) as JSON numbers, which JSON.parse would round. It checks but does not build the
// top-level fields that are not read (blocks, transactions and historical states can be most of a file).

class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
class JsonObject {
  readonly entries: [string, JsonValue][];
  constructor(entries: [string, JsonValue][]) {
    this.entries = entries;
  }
}
type JsonValue = null | boolean | string | JsonNumber | JsonObject | JsonValue[];
type JsonKind = "object" | "array" | "string" | "number" | "true" | "false" | "null";
/** A top-level value whose syntax was checked but that was not built. */
class Skipped {
  readonly kind: JsonKind;
  constructor(kind: JsonKind) {
    this.kind = kind;
  }
}
type TopValue = JsonValue | Skipped;

/** The top-level fields read into values; the others are skipped. */
const READ_FIELDS = new Set(["accounts", "block", "best_block_number"]);
const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

class JsonReader {
  readonly #text: string;
  #pos = 0;
  constructor(text: string) {
    this.#text = text;
  }

  /** The whole text as one object; a top-level field given twice is refused, as serde does. */
  document(): Map<string, TopValue> {
    this.#ws();
    if (this.#pos >= this.#text.length) throw new StateDumpError(`the state dump is empty. ${DUMP_HINT}`);
    if (this.#peek() !== 0x7b) {
      const kind = this.#skip(0);
      this.#end();
      throw new StateDumpError(`the state dump is ${describeKind(kind)}, not a JSON object. ${DUMP_HINT}`);
    }
    const out = new Map<string, TopValue>();
    this.#pos++;
    this.#ws();
    if (this.#peek() === CLOSE_OBJECT) this.#pos++;
    else {
      do {
        const key = this.#key();
        if (out.has(key)) throw new StateDumpError(`the state dump has "${key}" twice. Keep one`);
        out.set(key, READ_FIELDS.has(key) ? this.#value(1) : new Skipped(this.#skip(1)));
      } while (!this.#listNext(CLOSE_OBJECT));
    }
    this.#end();
    return out;
  }

  #end(): void {
    this.#ws();
    if (this.#pos < this.#text.length) this.#fail("unexpected text after the JSON value");
  }

  #value(depth: number): JsonValue {
    this.#ws();
    const c = this.#peek();
    if (c === 0x22) return this.#string();
    if (c === 0x7b) {
      this.#open(depth);
      const entries: [string, JsonValue][] = [];
      if (this.#peek() === CLOSE_OBJECT) this.#pos++;
      else {
        do entries.push([this.#key(), this.#value(depth + 1)]);
        while (!this.#listNext(CLOSE_OBJECT));
      }
      return new JsonObject(entries);
    }
    if (c === 0x5b) {
      this.#open(depth);
      const items: JsonValue[] = [];
      if (this.#peek() === CLOSE_ARRAY) this.#pos++;
      else {
        do items.push(this.#value(depth + 1));
        while (!this.#listNext(CLOSE_ARRAY));
      }
      return items;
    }
    const start = this.#pos;
    const kind = this.#scalar();
    if (kind === "number") return new JsonNumber(this.#text.slice(start, this.#pos));
    return kind === "null" ? null : kind === "true";
  }

  /** Checks one value's syntax without building it. */
  #skip(depth: number): JsonKind {
    this.#ws();
    const c = this.#peek();
    if (c === 0x22) {
      this.#stringEnd();
      return "string";
    }
    if (c === 0x7b) {
      this.#open(depth);
      if (this.#peek() === CLOSE_OBJECT) this.#pos++;
      else {
        do {
          this.#key();
          this.#skip(depth + 1);
        } while (!this.#listNext(CLOSE_OBJECT));
      }
      return "object";
    }
    if (c === 0x5b) {
      this.#open(depth);
      if (this.#peek() === CLOSE_ARRAY) this.#pos++;
      else {
        do this.#skip(depth + 1);
        while (!this.#listNext(CLOSE_ARRAY));
      }
      return "array";
    }
    return this.#scalar();
  }

  /** Steps into an object or array, leaving the reader at its first non-blank character. */
  #open(depth: number): void {
    if (depth >= MAX_DEPTH) this.#fail(`nesting deeper than ${MAX_DEPTH} levels`);
    this.#pos++;
    this.#ws();
  }

  #scalar(): JsonKind {
    const t = this.#text;
    for (const literal of ["true", "false", "null"] as const) {
      if (t.startsWith(literal, this.#pos)) {
        this.#pos += literal.length;
        return literal;
      }
    }
    NUMBER.lastIndex = this.#pos;
    if (NUMBER.test(t)) {
      this.#pos = NUMBER.lastIndex;
      return "number";
    }
    return this.#fail(this.#pos >= t.length ? "the text ends where a value should be" : "expected a JSON value");
  }

  /** A `"key":` of an object, leaving the reader before its value. */
  #key(): string {
    this.#ws();
    if (this.#peek() !== 0x22) this.#fail("expected a quoted field name");
    const key = this.#string();
    this.#ws();
    if (this.#peek() !== 0x3a) this.#fail('expected ":" after a field name');
    this.#pos++;
    return key;
  }

  /** After an item: true at the closing bracket, false at a comma (both consumed). */
  #listNext(close: number): boolean {
    this.#ws();
    const c = this.#peek();
    if (c !== close && c !== 0x2c) this.#fail(`expected "," or "${String.fromCharCode(close)}"`);
    this.#pos++;
    return c === close;
  }

  #string(): string {
    const start = this.#pos;
    if (!this.#stringEnd()) return this.#text.slice(start + 1, this.#pos - 1);
    try {
      return JSON.parse(this.#text.slice(start, this.#pos)) as string;
    } catch (cause) {
      this.#pos = start;
      return this.#fail("a string has a bad escape", cause);
    }
  }

  /** Moves past the string whose opening quote is at the reader; says whether it holds escapes. */
  #stringEnd(): boolean {
    const t = this.#text;
    let escaped = false;
    for (let i = this.#pos + 1; ; ) {
      if (i >= t.length) {
        this.#pos = t.length;
        return this.#fail("the text ends inside a string");
      }
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.#pos = i + 1;
        return escaped;
      }
      if (c < 0x20) {
        this.#pos = i;
        return this.#fail("a string holds a raw control character");
      }
      if (c === 0x5c) {
        escaped = true;
        i += 2;
      } else i++;
    }
  }

  #ws(): void {
    const t = this.#text;
    let i = this.#pos;
    for (let c = t.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = t.charCodeAt(++i));
    this.#pos = i;
  }

  #peek(): number {
    return this.#text.charCodeAt(this.#pos);
  }

  #fail(problem: string, cause?: unknown): never {
    let line = 1;
    let lineStart = 0;
    for (let i = this.#text.indexOf("\n"); i !== -1 && i < this.#pos; i = this.#text.indexOf("\n", i + 1)) {
      line++;
      lineStart = i + 1;
    }
    throw new StateDumpError(
      `the state dump is not valid JSON: ${problem} at line ${line} column ${this.#pos - lineStart + 1}. ${DUMP_HINT}`,
      cause === undefined ? {} : { cause },
    );
  }
}

function describeKind(kind: JsonKind): string {
  return kind === "object" || kind === "array"
    ? `an ${kind}`
    : kind === "string" || kind === "number"
      ? `a ${kind}`
      : kind;
}
