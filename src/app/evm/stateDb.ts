import { type KvStore, type KvTable, prefixEnd } from "../../store/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { SnapshotFormatError } from "../snapshots/index.js";
import { keccak256 } from "./crypto.js";
import { StateUnavailableError } from "./errors.js";
import type { ForkSource } from "./fork/index.js";
import { HISTORY_STORAGE_ADDRESS } from "./genesis.js";
import {
  type AppMeta,
  type ChainSettings,
  decodeAccount,
  decodeBlock,
  decodeMeta,
  decodeReceipt,
  decodeReceiptLogs,
  decodeSettings,
  type EvmBlock,
  type EvmLogRecord,
  type EvmReceipt,
  encodeAccount,
  encodeBlock,
  encodeMeta,
  encodeReceipt,
  encodeSettings,
  equalBytes,
  KECCAK256_NULL,
  MISSING_ACCOUNT,
  readU64be,
  type StoredAccount,
  u32be,
  u64be,
} from "./records.js";
import { rlpDecode } from "./rlpReader.js";
import { rlpEncode } from "./rlpWriter.js";
import { encodeReceiptForTrie, orderedTrieRoot } from "./trieRoot.js";

/**
 * The EVM app's LMDB layout. State is kept twice: "latest" tables (one entry per account / slot, what
 * CheckTx and execution read) and "history" tables keyed by `key ‖ ^height` (bitwise-not big-endian,
 * so a forward seek from `key ‖ ^h` finds the newest version at or below h). A changelog per height
 * lists the history keys written then; pruning height p deletes the versions those keys superseded.
 *
 *   acct   addr(20)                          → account        acct_h  addr ‖ ^h               → account
 *   stor   addr ‖ inc(4) ‖ slot(32)          → value (trimmed) stor_h  addr ‖ inc ‖ slot ‖ ^h → value ("" = 0)
 *   code   codeHash(32) → code               chg     h(8) → rlp([[table, key]...])
 *   blk    h(8) → block   rcpt h(8) ‖ i(4) → receipt   txh ethHash → h ‖ i   bhash cometHash → h
 *   meta   "app" → AppMeta, "settings" → ChainSettings
 */

const T_ACCT = 0;
const T_STOR = 1;
const MAX_U64 = (1n << 64n) - 1n;

function inverted(height: number): Uint8Array {
  return u64be(MAX_U64 - BigInt(height));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export function storageKey(addr: Uint8Array, incarnation: number, slot: Uint8Array): Uint8Array {
  const out = new Uint8Array(56);
  out.set(addr, 0);
  out[20] = incarnation >>> 24;
  out[21] = (incarnation >>> 16) & 0xff;
  out[22] = (incarnation >>> 8) & 0xff;
  out[23] = incarnation & 0xff;
  out.set(slot, 24);
  return out;
}

/** Read access to the state as of one height. */
export interface StateReader {
  readonly height: number;
  /** `key`: the address's lowercase hex (no 0x) when the caller has it. */
  account(addr: Uint8Array, key?: string): StoredAccount;
  storage(addr: Uint8Array, incarnation: number, slot: Uint8Array): Uint8Array;
  code(codeHash: Uint8Array): Uint8Array;
  /** Whether the account holds any non-zero slot at this incarnation (EIP-7610's collision rule). */
  hasStorage?(addr: Uint8Array, incarnation: number): boolean;
}

/** One block's state writes, as the overlay collected them (only values that changed). */
export interface StateDiff {
  accounts: { addr: Uint8Array; account: StoredAccount }[];
  storage: { addr: Uint8Array; incarnation: number; slot: Uint8Array; value: Uint8Array }[];
  codes: { hash: Uint8Array; code: Uint8Array }[];
}

/**
 * Deterministic hash of a diff: entries in key order, each length-prefixed; undefined when the diff
 * commits nothing. The app hash chains these: appHash(h) = keccak(appHash(h-1) ‖ h ‖ diffHash(h)),
 * so it commits to the whole state history.
 *
 * Storage of `derived` (the EIP-2935 history contract) is left out: every block writes its own hash
 * there, a value every node derives from the block headers it already agrees on. Committing it would
 * change the app hash at every height, and CometBFT's proof-block rule would then never let a chain
 * with `create_empty_blocks = false` go idle (a block that changes the app hash needs a next block).
 * Without it, a block that changes no other state keeps the previous app hash: after the block with
 * txs and its proof block, an idle chain stops until txs arrive, as CometBFT documents.
 */
export function diffHash(diff: StateDiff, derived?: Uint8Array): Uint8Array | undefined {
  // Each entry is tag ‖ u32(key length) ‖ key ‖ u32(value length) ‖ value; the whole diff is laid out
  // in one buffer and hashed once with the engine's Keccak (WebAssembly): a block's hash was mostly
  // the per-field calls of a streaming JavaScript Keccak before.
  const entries: { tag: number; key: Uint8Array; value: Uint8Array }[] = [];
  const accts = [...diff.accounts].sort((a, b) => Buffer.compare(a.addr, b.addr));
  for (const a of accts) entries.push({ tag: 1, key: a.addr, value: encodeAccount(a.account) });
  const slots = diff.storage
    .filter((s) => derived === undefined || Buffer.compare(s.addr, derived) !== 0)
    .map((s) => ({ key: storageKey(s.addr, s.incarnation, s.slot), value: s.value }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  for (const s of slots) entries.push({ tag: 2, key: s.key, value: s.value });
  const codes = [...diff.codes].sort((a, b) => Buffer.compare(a.hash, b.hash));
  for (const c of codes) entries.push({ tag: 3, key: c.hash, value: c.code });
  if (entries.length === 0) return undefined;
  let size = 0;
  for (const e of entries) size += 9 + e.key.length + e.value.length;
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (const e of entries) {
    buf[at] = e.tag;
    buf.writeUInt32BE(e.key.length, at + 1);
    buf.set(e.key, at + 5);
    at += 5 + e.key.length;
    buf.writeUInt32BE(e.value.length, at);
    buf.set(e.value, at + 4);
    at += 4 + e.value.length;
  }
  return keccak256(buf);
}

/** The next app hash; the previous one when the block committed no state (diff undefined). */
export function chainAppHash(prev: Uint8Array, height: number, diff: Uint8Array | undefined): Uint8Array {
  if (diff === undefined) return prev;
  const buf = new Uint8Array(prev.length + 8 + diff.length);
  buf.set(prev, 0);
  buf.set(u64be(height), prev.length);
  buf.set(diff, prev.length + 8);
  return keccak256(buf);
}

const META_APP = new TextEncoder().encode("app");

/** The table tag in front of each snapshot entry's key (format 1 of the EVM app's snapshots). */
const SNAPSHOT_TAGS = { meta: 0, acct: 1, stor: 2, code: 3, blk: 4 } as const;

function tagged(tag: number, key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length + 1);
  out[0] = tag;
  out.set(key, 1);
  return out;
}
const META_SETTINGS = new TextEncoder().encode("settings");
const EMPTY = new Uint8Array(0);

/** A stored receipt as eth_getLogs reads it. */
export interface ReceiptLogs {
  readonly txIndex: number;
  readonly txHash: Uint8Array;
  readonly logs: readonly EvmLogRecord[];
}

/** Decoded receipt logs kept for at most this many heights and this many logs + receipts in all. */
const LOGS_CACHE_HEIGHTS = 1024;
const LOGS_CACHE_ENTRIES = 100_000;

export class EvmStateDb {
  readonly kv: KvStore;
  readonly #acct: KvTable;
  readonly #acctH: KvTable;
  readonly #stor: KvTable;
  readonly #storH: KvTable;
  readonly #code: KvTable;
  readonly #chg: KvTable;
  readonly #blk: KvTable;
  readonly #rcpt: KvTable;
  readonly #txh: KvTable;
  readonly #bhash: KvTable;
  readonly #meta: KvTable;
  /** Dev chains: h → rlp([meta, settings]) after each height, what a rollback restores. */
  readonly #devH: KvTable;
  #latest: AppMeta | undefined;
  readonly #publishListeners: ((height: number) => void)[] = [];
  /** The pointer's stored bytes as followCommitted last read them. */
  #latestRaw: Uint8Array | undefined;
  /** True while a block's writes are being committed: readers of the previous height use history. */
  #committing = false;
  /** Small cache of latest accounts (hex address → account), refreshed by each commit. */
  readonly #acctCache = new Map<string, StoredAccount>();
  readonly #codeCache = new Map<string, Uint8Array>();
  readonly #blockCache = new Map<number, EvmBlock>();
  readonly #rootlessCache = new Map<number, EvmBlock>();
  /** Decoded receipt logs per height with their entry count (logs + receipts), least recently read first. */
  readonly #logsCache = new Map<number, { receipts: readonly ReceiptLogs[]; entries: number }>();
  #logsCacheEntries = 0;
  /**
   * A forked chain's source (app/evm/fork/): a key local state has never written is read from it.
   * Local writes then keep tombstones (a zeroed slot, an emptied account) so a key once written
   * never falls back to the source.
   */
  #fork: ForkSource | undefined;
  /** The height of the snapshot being restored, once its pointer entry was written. */
  #restoreHeight: number | undefined;
  /**
   * The settings object a dev record last encoded, with its bytes: a dev chain writes its settings with
   * every height, and they change only with a cheat or a rollback, each of which makes a new object
   * (the app never changes a settings object in place).
   */
  #lastDevSettings: { settings: ChainSettings; bytes: Uint8Array } | undefined;

  constructor(kv: KvStore, fork?: ForkSource) {
    this.kv = kv;
    this.#fork = fork;
    this.#acct = kv.table("evm_acct");
    this.#acctH = kv.table("evm_acct_h");
    this.#stor = kv.table("evm_stor");
    this.#storH = kv.table("evm_stor_h");
    this.#code = kv.table("evm_code");
    this.#chg = kv.table("evm_chg");
    this.#blk = kv.table("evm_blk");
    this.#rcpt = kv.table("evm_rcpt");
    this.#txh = kv.table("evm_txh");
    this.#bhash = kv.table("evm_bhash");
    this.#meta = kv.table("evm_meta");
    this.#devH = kv.table("evm_dev_h");
    const m = this.#meta.get(META_APP);
    this.#latest = m === undefined ? undefined : decodeMeta(m);
  }

  /** The fork's source, when this chain is a fork. */
  get fork(): ForkSource | undefined {
    return this.#fork;
  }

  /**
   * Dev chains (anvil_reset with `forking`): reads fall back to another source from now on. Call
   * with the chain rolled back to its genesis, before any local write of the new fork.
   */
  setFork(fork: ForkSource | undefined): void {
    this.#fork = fork;
    this.#acctCache.clear();
    this.#codeCache.clear();
  }

  /**
   * The source's account at the fork block as a stored record (MISSING_ACCOUNT when it has none).
   * The EIP-2935 history contract is the fork's own (its genesis installs it, each block writes its
   * hash): reading it from the source would make every block wait on the source.
   */
  forkAccount(addr: Uint8Array): StoredAccount {
    if (equalBytes(addr, HISTORY_STORAGE_ADDRESS)) return MISSING_ACCOUNT;
    const remote = this.#fork?.account(addr);
    if (remote === undefined) return MISSING_ACCOUNT;
    return { exists: true, nonce: remote.nonce, balance: remote.balance, codeHash: remote.codeHash, incarnation: 0 };
  }

  /** Committed pointer, undefined before InitChain. */
  meta(): AppMeta | undefined {
    return this.#latest;
  }

  /**
   * For a database another thread writes (a read worker, readPool.ts): takes the committed pointer
   * as the store reads it now (its pinned snapshot), instead of the one the writer's commits publish.
   * The latest-account cache describes one height and is dropped when the pointer moved; the other
   * caches hold what a committed height never changes.
   */
  followCommitted(): AppMeta | undefined {
    const raw = this.#meta.get(META_APP);
    const kept = this.#latestRaw;
    if (raw !== undefined && kept !== undefined && equalBytes(raw, kept)) return this.#latest;
    this.#latestRaw = raw === undefined ? undefined : raw.slice();
    this.#latest = raw === undefined ? undefined : decodeMeta(raw);
    this.#acctCache.clear();
    return this.#latest;
  }

  settings(): ChainSettings | undefined {
    const s = this.#meta.get(META_SETTINGS);
    return s === undefined ? undefined : decodeSettings(s);
  }

  latestHeight(): number {
    return this.#latest?.height ?? -1;
  }

  /** A reader of the state after `height` (0 = genesis). Throws StateUnavailableError outside the kept window. */
  reader(height: number): StateReader {
    this.assertStateAvailable(height);
    return new VersionedReader(this, height);
  }

  /** Throws StateUnavailableError unless the state after `height` is kept (the pruning window). */
  assertStateAvailable(height: number): void {
    const m = this.#latest;
    if (m === undefined || height > m.height || height < m.earliestStateHeight) {
      throw new StateUnavailableError(height, m?.earliestStateHeight ?? 0, m?.height ?? 0);
    }
  }

  latestReader(): StateReader {
    return this.reader(this.latestHeight());
  }

  /** Reads through the latest tables only while they still describe `height`. */
  useLatest(height: number): boolean {
    return !this.#committing && this.#latest !== undefined && this.#latest.height === height;
  }

  readAccount(addr: Uint8Array, height: number, key = bytesToHex(addr)): StoredAccount {
    if (this.useLatest(height)) {
      const cached = this.#acctCache.get(key);
      if (cached !== undefined) return cached;
      const v = this.#acct.get(addr);
      const a =
        v !== undefined ? decodeAccount(v) : this.#fork === undefined ? MISSING_ACCOUNT : this.forkAccount(addr);
      if (this.#acctCache.size >= 200_000) this.#acctCache.clear();
      this.#acctCache.set(key, a);
      return a;
    }
    const v = this.#seek(this.#acctH, addr, height);
    if (v !== undefined) return decodeAccount(v);
    return this.#fork === undefined ? MISSING_ACCOUNT : this.forkAccount(addr);
  }

  readStorage(addr: Uint8Array, incarnation: number, slot: Uint8Array, height: number): Uint8Array {
    const key = storageKey(addr, incarnation, slot);
    const v = this.useLatest(height) ? this.#stor.get(key) : this.#seek(this.#storH, key, height);
    if (v !== undefined) return v;
    // The source's slots belong to the account as it was at the fork block (incarnation 0); a wipe
    // since (creation, self-destruct) bumped the incarnation and hides them.
    if (this.#fork === undefined || incarnation !== 0 || equalBytes(addr, HISTORY_STORAGE_ADDRESS)) return EMPTY;
    return this.#fork.storage(addr, slot);
  }

  /**
   * Every account that exists after `height`, in address order (eth_getProof builds its state trie from
   * them). At the latest height a scan of the latest table; otherwise one history seek per address.
   * Throws StateUnavailableError outside the kept window.
   */
  *accountsAt(height: number): Iterable<{ addr: Uint8Array; account: StoredAccount }> {
    this.assertStateAvailable(height);
    if (this.useLatest(height)) {
      for (const { key, value } of this.#acct.range()) {
        const account = decodeAccount(value);
        if (account.exists) yield { addr: key.slice(), account };
      }
      return;
    }
    for (const addr of this.#distinctPrefixes(this.#acctH, new Uint8Array(0), 20)) {
      const v = this.#seek(this.#acctH, addr, height);
      if (v === undefined) continue;
      const account = decodeAccount(v);
      if (account.exists) yield { addr, account };
    }
  }

  /** The non-zero storage slots of an account incarnation after `height`, in slot order. */
  *storageSlotsAt(
    addr: Uint8Array,
    incarnation: number,
    height: number,
  ): Iterable<{ slot: Uint8Array; value: Uint8Array }> {
    this.assertStateAvailable(height);
    const prefix = storageKey(addr, incarnation, new Uint8Array(0)).subarray(0, 24);
    const end = prefixEnd(prefix);
    if (this.useLatest(height)) {
      for (const { key, value } of this.#stor.range(end === undefined ? { gte: prefix } : { gte: prefix, lt: end })) {
        if (value.length > 0) yield { slot: key.slice(24, 56), value };
      }
      return;
    }
    for (const key of this.#distinctPrefixes(this.#storH, prefix, 56)) {
      const v = this.#seek(this.#storH, key, height);
      if (v !== undefined && v.length > 0) yield { slot: key.slice(24, 56), value: v };
    }
  }

  /** The distinct `length`-byte key prefixes under `prefix` of a history table (each one seek). */
  *#distinctPrefixes(table: KvTable, prefix: Uint8Array, length: number): Iterable<Uint8Array> {
    const end = prefixEnd(prefix);
    let from = prefix;
    for (;;) {
      let next: Uint8Array | undefined;
      for (const e of table.range(end === undefined ? { gte: from, limit: 1 } : { gte: from, lt: end, limit: 1 })) {
        next = e.key.slice(0, length);
      }
      if (next === undefined || next.length !== length) return;
      yield next;
      const after = prefixEnd(next);
      if (after === undefined) return;
      from = after;
    }
  }

  readCode(codeHash: Uint8Array): Uint8Array {
    if (equalBytes(codeHash, KECCAK256_NULL)) return EMPTY;
    const key = bytesToHex(codeHash);
    const cached = this.#codeCache.get(key);
    if (cached !== undefined) return cached;
    const code = this.#code.get(codeHash) ?? this.#fork?.code(codeHash) ?? EMPTY;
    if (this.#codeCache.size >= 1000) this.#codeCache.clear();
    this.#codeCache.set(key, code);
    return code;
  }

  #seek(table: KvTable, key: Uint8Array, height: number): Uint8Array | undefined {
    const end = prefixEnd(key);
    const range =
      end === undefined ? { gte: concat(key, inverted(height)) } : { gte: concat(key, inverted(height)), lt: end };
    for (const e of table.range({ ...range, limit: 1 })) {
      if (e.key.length !== key.length + 8) return undefined;
      return e.value;
    }
    return undefined;
  }

  // ---- blocks and receipts ----------------------------------------------------------------------

  /** The block record; its tx/receipt roots are computed on first read and cached. */
  block(height: number): EvmBlock | undefined {
    const cached = this.#blockCache.get(height);
    if (cached !== undefined) return cached;
    const v = this.#blk.get(u64be(height));
    if (v === undefined) return undefined;
    const b = decodeBlock(v);
    if (b.transactionsRoot.length === 0 || b.receiptsRoot.length === 0) {
      const receipts = this.receipts(height);
      b.transactionsRoot = orderedTrieRoot(receipts.map((r) => r.rawTx));
      b.receiptsRoot = orderedTrieRoot(receipts.map(encodeReceiptForTrie));
      if (this.#blockCache.size >= 256) this.#blockCache.clear();
      this.#blockCache.set(height, b);
    }
    return b;
  }

  /**
   * BLOCKHASH's answer for `height`: the stored block's hash; on a fork, a height at or below the fork
   * block that the chain does not hold is the source's block hash (app/evm/fork/); else zero bytes.
   */
  blockHash(height: number): Uint8Array {
    return this.blockWithoutRoots(height)?.hash ?? this.#fork?.blockHash(BigInt(height)) ?? new Uint8Array(32);
  }

  /**
   * A stored block as `block` gives it, except that `transactionsRoot` and `receiptsRoot` are empty
   * when the record does not hold them: `block` derives them on first read with a trie over every
   * receipt (tens of ms for a block of hundreds of txs), which receipts, logs, call contexts and
   * fee queries do not need.
   */
  blockWithoutRoots(height: number): EvmBlock | undefined {
    const full = this.#blockCache.get(height);
    if (full !== undefined) return full;
    const kept = this.#rootlessCache.get(height);
    if (kept !== undefined) return kept;
    const v = this.#blk.get(u64be(height));
    if (v === undefined) return undefined;
    const b = decodeBlock(v);
    if (this.#rootlessCache.size >= 256) this.#rootlessCache.clear();
    this.#rootlessCache.set(height, b);
    return b;
  }

  /**
   * A block's height by its hash. Lookups by hash, here and in txLocation, only find heights up to
   * latestHeight(): a commit's rows are readable in LMDB before endCommit publishes the height (the
   * fsync lies between), and a client that found a receipt must also find its block's state at "latest".
   */
  heightByBlockHash(hash: Uint8Array): number | undefined {
    const v = this.#bhash.get(hash);
    if (v === undefined) return undefined;
    const height = readU64be(v);
    return height > this.latestHeight() ? undefined : height;
  }

  /**
   * Each receipt's tx hash, index and logs only (eth_getLogs reads thousands). A committed block's
   * receipts never change, so decoded ones are kept for the most recently read heights (like geth's
   * receipts cache), bounded by height count and by total logs.
   */
  receiptLogs(height: number): readonly ReceiptLogs[] {
    const kept = this.#logsCache.get(height);
    if (kept !== undefined) {
      // Most recently used last.
      this.#logsCache.delete(height);
      this.#logsCache.set(height, kept);
      return kept.receipts;
    }
    const out: ReceiptLogs[] = [];
    let entries = 0;
    for (const { key, value } of this.#rcpt.range({ prefix: u64be(height) })) {
      const txIndex = new DataView(key.buffer, key.byteOffset + 8, 4).getUint32(0);
      const r = { txIndex, ...decodeReceiptLogs(value) };
      entries += r.logs.length + 1;
      out.push(r);
    }
    // Only heights already committed: the current height's receipts are still being written.
    if (height <= this.latestHeight()) {
      this.#logsCache.set(height, { receipts: out, entries });
      this.#logsCacheEntries += entries;
      for (const [oldest, v] of this.#logsCache) {
        if (this.#logsCache.size <= LOGS_CACHE_HEIGHTS && this.#logsCacheEntries <= LOGS_CACHE_ENTRIES) break;
        this.#logsCache.delete(oldest);
        this.#logsCacheEntries -= v.entries;
      }
    }
    return out;
  }

  receipts(height: number): EvmReceipt[] {
    const out: EvmReceipt[] = [];
    for (const { key, value } of this.#rcpt.range({ prefix: u64be(height) })) {
      out.push(decodeReceipt(height, new DataView(key.buffer, key.byteOffset + 8, 4).getUint32(0), value));
    }
    return out;
  }

  receipt(height: number, index: number): EvmReceipt | undefined {
    const v = this.#rcpt.get(concat(u64be(height), u32be(index)));
    return v === undefined ? undefined : decodeReceipt(height, index, v);
  }

  /** Where a tx is, once its height is published (see heightByBlockHash). */
  txLocation(ethHash: Uint8Array): { height: number; index: number } | undefined {
    const v = this.#txh.get(ethHash);
    if (v === undefined) return undefined;
    const height = readU64be(v);
    if (height > this.latestHeight()) return undefined;
    return { height, index: new DataView(v.buffer, v.byteOffset + 8, 4).getUint32(0) };
  }

  // ---- writes -----------------------------------------------------------------------------------

  /** Writes the chain settings (once, at InitChain). Call inside kv.transaction. */
  putSettings(s: ChainSettings): void {
    this.#meta.put(META_SETTINGS, encodeSettings(s));
  }

  /**
   * Writes one height: state diff (latest + history + changelog), block, receipts, indexes, pointer,
   * and on a dev chain (`settings.devChain`) the pointer and settings after the height, which
   * rollbackTo restores. Call inside kv.transaction; then call `committed(meta, diff)` after it resolved.
   */
  writeHeight(
    meta: AppMeta,
    diff: StateDiff,
    block: EvmBlock | undefined,
    receipts: EvmReceipt[],
    settings: ChainSettings,
  ): void {
    const h = meta.height;
    const inv = inverted(h);
    const changes: Uint8Array[][] = [];
    const fork = this.#fork;
    for (const { addr, account } of diff.accounts) {
      const enc = encodeAccount(account);
      if (account.exists || account.incarnation > 0 || fork !== undefined) this.#acct.put(addr, enc);
      else this.#acct.remove(addr);
      // A record naming the source's code keeps the code locally (a restart reads the record, not the source).
      if (fork !== undefined && account.exists && !equalBytes(account.codeHash, KECCAK256_NULL)) {
        const code = fork.code(account.codeHash);
        if (code !== undefined && this.#code.get(account.codeHash) === undefined)
          this.#code.put(account.codeHash, code);
      }
      this.#acctH.put(concat(addr, inv), enc);
      changes.push([Uint8Array.of(T_ACCT), addr]);
    }
    for (const s of diff.storage) {
      const key = storageKey(s.addr, s.incarnation, s.slot);
      if (s.value.length === 0 && fork === undefined) this.#stor.remove(key);
      else this.#stor.put(key, s.value);
      this.#storH.put(concat(key, inv), s.value);
      changes.push([Uint8Array.of(T_STOR), key]);
    }
    for (const c of diff.codes) this.#code.put(c.hash, c.code);
    if (changes.length > 0) this.#chg.put(u64be(h), rlpEncode(changes));
    if (block !== undefined) {
      this.#blk.put(u64be(h), encodeBlock(block));
      if (block.hash.length > 0) this.#bhash.put(block.hash, u64be(h));
    }
    for (const r of receipts) {
      this.#rcpt.put(concat(u64be(h), u32be(r.txIndex)), encodeReceipt(r));
      this.#txh.put(r.txHash, concat(u64be(h), u32be(r.txIndex)));
    }
    const metaBytes = encodeMeta(meta);
    this.#meta.put(META_APP, metaBytes);
    if (settings.devChain === true) this.#devH.put(u64be(h), rlpEncode([metaBytes, this.#devSettingsBytes(settings)]));
  }

  /**
   * Drops history versions no longer needed once `earliest` is the oldest kept height: for each height
   * p in (previous earliest, earliest], the versions superseded by the writes at p. Inside kv.transaction.
   */
  prune(fromHeight: number, toHeight: number): void {
    for (let p = fromHeight; p <= toHeight; p++) {
      const v = this.#chg.get(u64be(p));
      if (v === undefined) continue;
      if (p === 0) {
        // Genesis writes supersede nothing.
        this.#chg.remove(u64be(p));
        continue;
      }
      const invOlder = inverted(p - 1);
      for (const item of rlpDecode(v) as Uint8Array[][]) {
        const [t, key] = item as [Uint8Array, Uint8Array];
        const table = t[0] === T_ACCT ? this.#acctH : this.#storH;
        const end = prefixEnd(key);
        const range = end === undefined ? { gte: concat(key, invOlder) } : { gte: concat(key, invOlder), lt: end };
        const stale: Uint8Array[] = [];
        for (const e of table.range(range)) if (e.key.length === key.length + 8) stale.push(e.key);
        for (const k of stale) table.remove(k);
      }
      this.#chg.remove(u64be(p));
    }
  }

  /**
   * Drops the blocks, receipts (with their logs) and tx and block hash lookups of heights below
   * `retainHeight` (min-retain-blocks: the Ethereum JSON-RPC then answers those heights as unknown).
   * Returns how many blocks went. Inside kv.transaction.
   */
  pruneHistory(retainHeight: number): number {
    const end = u64be(retainHeight);
    const doomedBlocks: Uint8Array[] = [];
    for (const { key, value } of this.#blk.range({ lt: end })) {
      doomedBlocks.push(key);
      const hash = decodeBlock(value).hash;
      if (hash.length > 0) this.#bhash.remove(hash);
    }
    for (const key of doomedBlocks) this.#blk.remove(key);
    const doomedReceipts: Uint8Array[] = [];
    for (const { key, value } of this.#rcpt.range({ lt: end })) {
      doomedReceipts.push(key);
      this.#txh.remove(decodeReceiptLogs(value).txHash);
    }
    for (const key of doomedReceipts) this.#rcpt.remove(key);
    for (const h of [...this.#blockCache.keys(), ...this.#rootlessCache.keys(), ...this.#logsCache.keys()]) {
      if (h >= retainHeight) continue;
      this.#blockCache.delete(h);
      this.#rootlessCache.delete(h);
      const logs = this.#logsCache.get(h);
      if (logs !== undefined) {
        this.#logsCache.delete(h);
        this.#logsCacheEntries -= logs.entries;
      }
    }
    return doomedBlocks.length;
  }

  /** encodeSettings(settings), unless this settings object was the last one encoded. */
  #devSettingsBytes(settings: ChainSettings): Uint8Array {
    let kept = this.#lastDevSettings;
    if (kept?.settings !== settings) {
      kept = { settings, bytes: encodeSettings(settings) };
      this.#lastDevSettings = kept;
    }
    return kept.bytes;
  }

  /** The pointer and settings kept after `height` (dev chains), or undefined. */
  devRecord(height: number): { meta: AppMeta; settings: ChainSettings } | undefined {
    const v = this.#devH.get(u64be(height));
    if (v === undefined) return undefined;
    const [m, st] = rlpDecode(v) as Uint8Array[];
    return { meta: decodeMeta(m as Uint8Array), settings: decodeSettings(st as Uint8Array) };
  }

  /**
   * Rolls the state back to what it was after `target` (dev chains: evm_revert, hardhat_reset): for
   * every later height, its history versions, changelog, block, receipts and lookups are deleted, then
   * each key those heights wrote gets its value as of `target` back in the latest tables. Inside
   * kv.transaction; then call endRollback with the restored pointer.
   */
  rollbackTo(target: number): void {
    const latest = this.latestHeight();
    const touched = new Map<string, { table: number; key: Uint8Array }>();
    for (let h = latest; h > target; h--) {
      const inv = inverted(h);
      const v = this.#chg.get(u64be(h));
      if (v !== undefined) {
        for (const item of rlpDecode(v) as Uint8Array[][]) {
          const [t, key] = item as [Uint8Array, Uint8Array];
          const table = t[0] === T_ACCT ? this.#acctH : this.#storH;
          table.remove(concat(key, inv));
          touched.set(`${t[0]}:${bytesToHex(key)}`, { table: t[0] as number, key: key.slice() });
        }
        this.#chg.remove(u64be(h));
      }
      const b = this.#blk.get(u64be(h));
      if (b !== undefined) {
        const block = decodeBlock(b);
        if (block.hash.length > 0) this.#bhash.remove(block.hash);
        this.#blk.remove(u64be(h));
      }
      const receipts: Uint8Array[] = [];
      for (const { key, value } of this.#rcpt.range({ prefix: u64be(h) })) {
        receipts.push(key.slice());
        const r = decodeReceiptLogs(value);
        this.#txh.remove(r.txHash);
      }
      for (const k of receipts) this.#rcpt.remove(k);
      this.#devH.remove(u64be(h));
    }
    for (const { table, key } of touched.values()) {
      if (table === T_ACCT) {
        const v = this.#seek(this.#acctH, key, target);
        const a = v === undefined ? MISSING_ACCOUNT : decodeAccount(v);
        if (v !== undefined && (a.exists || a.incarnation > 0 || this.#fork !== undefined)) this.#acct.put(key, v);
        else this.#acct.remove(key);
      } else {
        const v = this.#seek(this.#storH, key, target);
        // A fork keeps the zero it wrote (a tombstone over the source's value); without a version the
        // key falls back to the source again.
        if (v === undefined || (v.length === 0 && this.#fork === undefined)) this.#stor.remove(key);
        else this.#stor.put(key, v);
      }
    }
    const kept = this.devRecord(target);
    if (kept === undefined) throw new StateUnavailableError(target, target + 1, latest);
    this.#meta.put(META_APP, encodeMeta(kept.meta));
    this.#meta.put(META_SETTINGS, encodeSettings(kept.settings));
  }

  /** After rollbackTo's transaction: publishes the restored pointer and forgets every cached read. */
  endRollback(meta: AppMeta): void {
    this.#latest = meta;
    this.#published(meta);
    this.#committing = false;
    this.#acctCache.clear();
    this.#codeCache.clear();
    this.#blockCache.clear();
    this.#rootlessCache.clear();
    this.#logsCache.clear();
    this.#logsCacheEntries = 0;
  }

  // ---- state sync snapshots (app/snapshots, docs/state-sync.md) -------------------------------------

  /**
   * The committed state as snapshot entries, each key tagged by its table (SNAPSHOT_TAGS): the
   * pointer and settings first, then accounts, storage, code, and the block records of the last 256
   * heights (BLOCKHASH and the latest block's queries). Read synchronously: one consistent view.
   */
  *snapshotEntries(): Generator<{ key: Uint8Array; value: Uint8Array }> {
    const height = this.latestHeight();
    for (const { key, value } of this.#meta.range()) yield { key: tagged(SNAPSHOT_TAGS.meta, key), value };
    for (const { key, value } of this.#acct.range()) yield { key: tagged(SNAPSHOT_TAGS.acct, key), value };
    for (const { key, value } of this.#stor.range()) yield { key: tagged(SNAPSHOT_TAGS.stor, key), value };
    for (const { key, value } of this.#code.range()) yield { key: tagged(SNAPSHOT_TAGS.code, key), value };
    for (const { key, value } of this.#blk.range({ gte: u64be(BigInt(Math.max(0, height - 255))) })) {
      yield { key: tagged(SNAPSHOT_TAGS.blk, key), value };
    }
  }

  /** Empties every table before a snapshot is restored (inside kv.transaction). */
  clearForRestore(): void {
    const tables = [this.#acct, this.#acctH, this.#stor, this.#storH, this.#code, this.#chg, this.#blk];
    for (const t of [...tables, this.#rcpt, this.#txh, this.#bhash, this.#meta, this.#devH]) {
      for (const { key } of t.range()) t.remove(key);
    }
    this.#restoreHeight = undefined;
  }

  /**
   * Writes one chunk's entries (inside kv.transaction). Accounts and slots get their history version
   * at the snapshot height too, so that reads at that height keep working once later heights commit.
   */
  restoreEntries(entries: readonly { key: Uint8Array; value: Uint8Array }[]): void {
    for (const { key, value } of entries) {
      const tag = key[0];
      const k = key.subarray(1);
      switch (tag) {
        case SNAPSHOT_TAGS.meta:
          this.#meta.put(k, value);
          if (equalBytes(k, META_APP)) this.#restoreHeight = decodeMeta(value).height;
          break;
        case SNAPSHOT_TAGS.acct:
        case SNAPSHOT_TAGS.stor: {
          if (this.#restoreHeight === undefined)
            throw new SnapshotFormatError("an account or slot came before the pointer");
          const [latest, history] = tag === SNAPSHOT_TAGS.acct ? [this.#acct, this.#acctH] : [this.#stor, this.#storH];
          latest.put(k, value);
          history.put(concat(k, inverted(this.#restoreHeight)), value);
          break;
        }
        case SNAPSHOT_TAGS.code:
          this.#code.put(k, value);
          break;
        case SNAPSHOT_TAGS.blk: {
          this.#blk.put(k, value);
          const block = decodeBlock(value);
          if (block.hash.length > 0) this.#bhash.put(block.hash, k);
          break;
        }
        default:
          throw new SnapshotFormatError(`unknown table tag ${String(tag)}`);
      }
    }
  }

  /**
   * After the last chunk: the restored pointer becomes the latest, with its state the only one kept
   * (earliest = the snapshot height); caches are dropped. Inside no transaction; returns the pointer.
   */
  async finishRestore(): Promise<AppMeta | undefined> {
    const raw = this.#meta.get(META_APP);
    let meta = raw === undefined ? undefined : decodeMeta(raw);
    if (meta !== undefined && meta.earliestStateHeight !== meta.height) {
      const m: AppMeta = { ...meta, earliestStateHeight: meta.height };
      await this.kv.transaction(() => this.#meta.put(META_APP, encodeMeta(m)));
      meta = m;
    }
    this.#latest = meta;
    this.#latestRaw = undefined;
    if (meta !== undefined) this.#published(meta);
    this.#acctCache.clear();
    this.#codeCache.clear();
    this.#blockCache.clear();
    this.#rootlessCache.clear();
    this.#logsCache.clear();
    this.#logsCacheEntries = 0;
    this.#restoreHeight = undefined;
    return meta;
  }

  /** Marks the start of a commit: readers of the current height switch to history tables. */
  beginCommit(): void {
    this.#committing = true;
  }

  /** After the transaction of writeHeight resolved (or failed: pass undefined to keep the old pointer). */
  endCommit(meta: AppMeta | undefined, diff: StateDiff | undefined): void {
    if (meta !== undefined) {
      this.#latest = meta;
      if (diff !== undefined) {
        for (const { addr, account } of diff.accounts) this.#acctCache.set(bytesToHex(addr), account);
      }
    }
    this.#committing = false;
    if (meta !== undefined) this.#published(meta);
  }

  /**
   * Calls `fn` with the new latest height each time one is published (a commit, a rollback, a
   * restored snapshot), synchronously, before anything can read it through latestHeight(): the read
   * processes learn the height before any answer of this process shows it. Returns the unsubscriber.
   */
  onPublished(fn: (height: number) => void): () => void {
    this.#publishListeners.push(fn);
    return () => {
      const i = this.#publishListeners.indexOf(fn);
      if (i >= 0) this.#publishListeners.splice(i, 1);
    };
  }

  #published(meta: AppMeta): void {
    for (const fn of this.#publishListeners) fn(meta.height);
  }
}

class VersionedReader implements StateReader {
  readonly height: number;
  readonly #db: EvmStateDb;

  constructor(db: EvmStateDb, height: number) {
    this.#db = db;
    this.height = height;
  }

  account(addr: Uint8Array, key?: string): StoredAccount {
    return this.#db.readAccount(addr, this.height, key);
  }

  storage(addr: Uint8Array, incarnation: number, slot: Uint8Array): Uint8Array {
    return this.#db.readStorage(addr, incarnation, slot, this.height);
  }

  code(codeHash: Uint8Array): Uint8Array {
    return this.#db.readCode(codeHash);
  }

  hasStorage(addr: Uint8Array, incarnation: number): boolean {
    for (const _ of this.#db.storageSlotsAt(addr, incarnation, this.height)) return true;
    return false;
  }
}
