import type { Query } from "../events/index.js";
import type { KvRange, KvStore, KvTable } from "../store/index.js";
import { type AbciEvent, type ExecTxResult, txHash } from "../types/index.js";
import { bytesToHex, hexToBytes } from "../util/bytes.js";
import { checkBlockInput } from "./blockInput.js";
import { EmptyTxHashError, IndexerClosedError, ReservedEventKeyError } from "./errors.js";
import type { BlockIndexInput, IndexedTx, Indexer } from "./indexer.js";
import {
  BLOCK_HEIGHT_KEY,
  collectTargets,
  type IndexRow,
  planSearch,
  type SearchStep,
  TX_HASH_KEY,
  TX_HEIGHT_KEY,
} from "./searchPlan.js";
import { decodeTxResult, decodeTxResultLazily, encodeTxResult } from "./txResultCodec.js";

/**
 * The kv indexer over a store/ KvStore, answering like CometBFT v0.38's state/txindex/kv and
 * state/indexer/block/kv (see searchPlan.ts for the query semantics). Layout, one table each:
 *
 *   txindex/results   hash                                     → protobuf abci.TxResult
 *   txindex/heights   height u64 · index u32                   → hash
 *   txindex/events    tag · value · height u64 · index u32 · event u32  → hash · spill
 *   blockindex/heights height u64                              → 0x02 · (u16 length · key)* of its events rows
 *   blockindex/events tag · value · height u64 · event u32     → spill
 *
 * Only attributes with `index: true` get an events row; `event` is the event's 1-based position in
 * its list (the identity conditions must share). tag and value are escaped (0x00 → 00 FF) and end
 * in 00 01, so a prefix selects one exact tag or tag+value. LMDB keys stop at 1978 bytes: a longer
 * tag or value is cut in the key (ending in 00 02 instead) and stored whole in the spill
 * (`u32 tag length · tag` when the tag is cut, then the value when the value is cut). Rows are
 * keyed by what they say, so indexing a block twice writes the same rows.
 *
 * Pruning (pruneBelow) finds a height's rows without scanning: a tx's events rows are made again from
 * its stored result, a block's are listed in its blockindex/heights value (databases written before
 * that hold 0x01 there; their block rows are found by one scan of the table).
 */

const TABLES = {
  txResults: "txindex/results",
  txHeights: "txindex/heights",
  txEvents: "txindex/events",
  blockHeights: "blockindex/heights",
  blockEvents: "blockindex/events",
} as const;

const MAX_TAG_KEY_BYTES = 512;
const MAX_VALUE_KEY_BYTES = 440;
const HASH_BYTES = 32;
/** First byte of a blockindex/heights value that lists the block's rows (older databases hold 0x01). */
const ROW_LIST = 0x02;
const END = 0x01;
const END_CUT = 0x02;

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Builds one key in a growable buffer (byte-array pushes cost more than the lmdb write itself). */
class KeyWriter {
  #buf: Buffer = Buffer.allocUnsafe(96);
  #pos = 0;

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  /** Starts a new key (a writer is reused for the rows of a block: see `copy`). */
  reset(): this {
    this.#pos = 0;
    return this;
  }

  /** An escaped string component; returns whether it was cut to `max` bytes. */
  component(text: string, max: number): boolean {
    // Most tags and values: no NUL to escape and short enough, written straight into the buffer.
    const length = Buffer.byteLength(text, "utf8");
    if (length <= max && text.indexOf("\0") < 0) {
      this.#room(length + 2);
      this.#pos += this.#buf.write(text, this.#pos, length, "utf8");
      this.#buf[this.#pos++] = 0;
      this.#buf[this.#pos++] = END;
      return false;
    }
    const raw = Buffer.from(text, "utf8");
    const cut = raw.length > max;
    const n = cut ? max : raw.length;
    const body = raw.subarray(0, n);
    if (body.indexOf(0) < 0) {
      this.#room(n + 2);
      this.#pos += body.copy(this.#buf, this.#pos);
    } else {
      this.#room(2 * n + 2);
      for (let i = 0; i < n; i++) {
        const b = body[i] as number;
        this.#buf[this.#pos++] = b;
        if (b === 0) this.#buf[this.#pos++] = 0xff;
      }
    }
    this.#buf[this.#pos++] = 0;
    this.#buf[this.#pos++] = cut ? END_CUT : END;
    return cut;
  }

  u64(n: number): this {
    const hi = Math.floor(n / 2 ** 32);
    this.u32(hi);
    return this.u32(n >>> 0);
  }

  u32(n: number): this {
    this.#room(4);
    this.#buf.writeUInt32BE(n >>> 0, this.#pos);
    this.#pos += 4;
    return this;
  }

  finish(): Uint8Array {
    return new Uint8Array(this.#buf.buffer, this.#buf.byteOffset, this.#pos);
  }

  /** The key written since `reset`, in bytes of its own (the writer goes on to the next key). */
  copy(): Uint8Array {
    // Uint8Array.prototype.slice copies (Buffer.prototype.slice would be a view).
    return Uint8Array.prototype.slice.call(this.#buf, 0, this.#pos);
  }
}

class KeyReader {
  readonly bytes: Uint8Array;
  #pos = 0;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  component(): { text: string; cut: boolean } {
    const out: number[] = [];
    const b = this.bytes;
    for (;;) {
      const x = b[this.#pos++];
      if (x === undefined) return { text: utf8Decoder.decode(Uint8Array.from(out)), cut: false };
      if (x !== 0) {
        out.push(x);
        continue;
      }
      const next = b[this.#pos++];
      if (next === 0xff) {
        out.push(0);
        continue;
      }
      return { text: utf8Decoder.decode(Uint8Array.from(out)), cut: next === END_CUT };
    }
  }

  u32(): number {
    const b = this.bytes;
    const p = this.#pos;
    this.#pos += 4;
    return (((b[p] ?? 0) << 24) | ((b[p + 1] ?? 0) << 16) | ((b[p + 2] ?? 0) << 8) | (b[p + 3] ?? 0)) >>> 0;
  }

  u64(): number {
    const hi = this.u32();
    return hi * 2 ** 32 + this.u32();
  }
}

function heightKey(height: number): Uint8Array {
  return new KeyWriter().u64(height).finish();
}

/** The spill that completes a cut tag and/or value. */
function encodeSpill(tag: string, tagCut: boolean, value: string, valueCut: boolean): Uint8Array {
  if (!tagCut && !valueCut) return new Uint8Array(0);
  const t = tagCut ? utf8.encode(tag) : new Uint8Array(0);
  const v = valueCut ? utf8.encode(value) : new Uint8Array(0);
  const out = new Uint8Array((tagCut ? 4 + t.length : 0) + v.length);
  let p = 0;
  if (tagCut) {
    new DataView(out.buffer).setUint32(0, t.length);
    out.set(t, 4);
    p = 4 + t.length;
  }
  out.set(v, p);
  return out;
}

function decodeSpill(
  spill: Uint8Array,
  tag: { text: string; cut: boolean },
  value: { text: string; cut: boolean },
): { tag: string; value: string } {
  let p = 0;
  let fullTag = tag.text;
  if (tag.cut) {
    const len = new DataView(spill.buffer, spill.byteOffset, spill.byteLength).getUint32(0);
    fullTag = utf8Decoder.decode(spill.subarray(4, 4 + len));
    p = 4 + len;
  }
  const fullValue = value.cut ? utf8Decoder.decode(spill.subarray(p)) : value.text;
  return { tag: fullTag, value: fullValue };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The keys of one step's rows: exact tag, then exact value and a height span when known. */
function stepBounds(step: SearchStep): { gte: Uint8Array; lt: Uint8Array } | undefined {
  if (step.minHeight > step.maxHeight) return undefined;
  const w = new KeyWriter();
  w.component(step.tag, MAX_TAG_KEY_BYTES);
  if (step.valueEquals === undefined) {
    const prefix = w.finish();
    return { gte: prefix, lt: prefixEndOf(prefix) };
  }
  w.component(step.valueEquals, MAX_VALUE_KEY_BYTES);
  const prefix = w.finish();
  const lo = new KeyWriter().u64(step.minHeight).finish();
  const hi = new KeyWriter().u64(step.maxHeight + 1).finish();
  return { gte: concat(prefix, lo), lt: concat(prefix, hi) };
}

/** A component always ends in 00 01 or 00 02, so bumping the last byte bounds the prefix. */
function prefixEndOf(prefix: Uint8Array): Uint8Array {
  // A copy even when `prefix` is a Buffer (whose slice is a view).
  const end = Uint8Array.prototype.slice.call(prefix);
  end[end.length - 1] = (end[end.length - 1] as number) + 1;
  return end;
}

function heightSpanBounds(step: SearchStep): { gte: Uint8Array; lt: Uint8Array } | undefined {
  if (step.minHeight > step.maxHeight) return undefined;
  return { gte: heightKey(step.minHeight), lt: heightKey(step.maxHeight + 1) };
}

/** The first app attribute whose composite key the indexer reserves (checked whatever its index flag). */
function findReservedKey(events: readonly AbciEvent[], reserved: readonly string[]): string | undefined {
  for (const e of events) {
    if (e.type === "") continue;
    for (const a of e.attributes) {
      if (a.key === "") continue;
      const composite = `${e.type}.${a.key}`;
      if (reserved.includes(composite)) return composite;
    }
  }
  return undefined;
}

/** The rows an event list adds: `index: true` attributes of typed events, with non-empty keys. */
function* indexedAttributes(events: readonly AbciEvent[]): Iterable<{ tag: string; value: string; event: number }> {
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as AbciEvent;
    if (e.type === "") continue;
    for (const a of e.attributes) {
      if (a.key === "" || !a.index) continue;
      yield { tag: `${e.type}.${a.key}`, value: a.value, event: i + 1 };
    }
  }
}

/** One writer for every tx events row key (each row takes a copy): a block writes thousands of them. */
const ROW_KEYS = new KeyWriter();

/**
 * The events rows of one tx, each given to `row` with its key and the spill when the tag or value was
 * cut. A callback rather than a generator: this runs for every indexed attribute of every tx.
 */
function txEventRows(
  height: number,
  index: number,
  events: readonly AbciEvent[],
  row: (key: Uint8Array, spill: Uint8Array | undefined) => void,
): void {
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as AbciEvent;
    if (e.type === "") continue;
    for (const a of e.attributes) {
      if (a.key === "" || !a.index) continue;
      const tag = `${e.type}.${a.key}`;
      const w = ROW_KEYS.reset();
      const tagCut = w.component(tag, MAX_TAG_KEY_BYTES);
      const valueCut = w.component(a.value, MAX_VALUE_KEY_BYTES);
      const key = w
        .u64(height)
        .u32(index)
        .u32(i + 1)
        .copy();
      row(key, tagCut || valueCut ? encodeSpill(tag, tagCut, a.value, valueCut) : undefined);
    }
  }
}

/** Event rows end in height u64 · index u32 · event u32 (txs, 16 bytes) or height u64 · event u32 (blocks, 12). */
function eventRowHeight(key: Uint8Array, fromEnd: number): number {
  return new KeyReader(key.subarray(key.length - fromEnd, key.length - fromEnd + 8)).u64();
}

/** A block's events row keys as its blockindex/heights value. */
function encodeRowList(keys: readonly Uint8Array[]): Uint8Array {
  let size = 1;
  for (const k of keys) size += 2 + k.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = ROW_LIST;
  let p = 1;
  for (const k of keys) {
    view.setUint16(p, k.length);
    out.set(k, p + 2);
    p += 2 + k.length;
  }
  return out;
}

function decodeRowList(value: Uint8Array): Uint8Array[] {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const keys: Uint8Array[] = [];
  let p = 1;
  while (p + 2 <= value.length) {
    const n = view.getUint16(p);
    keys.push(value.slice(p + 2, p + 2 + n));
    p += 2 + n;
  }
  return keys;
}

class KvStoreIndexer implements KvIndexer {
  readonly txIndexEnabled = true;
  readonly blockIndexEnabled = true;
  readonly #kv: KvStore;
  readonly #t: Record<keyof typeof TABLES, KvTable>;
  #closed = false;

  constructor(kv: KvStore) {
    this.#kv = kv;
    this.#t = {
      txResults: kv.table(TABLES.txResults),
      txHeights: kv.table(TABLES.txHeights),
      txEvents: kv.table(TABLES.txEvents),
      blockHeights: kv.table(TABLES.blockHeights),
      blockEvents: kv.table(TABLES.blockEvents),
    };
  }

  async indexBlock(input: BlockIndexInput): Promise<void> {
    this.#assertOpen();
    checkBlockInput(input);
    const { height } = input;
    // Like CometBFT's IndexerService, the block and its txs succeed or fail separately: a reserved
    // key drops that whole part (block events, or every tx of the block) and is reported afterwards.
    const blockReserved = findReservedKey(input.finalizeBlockEvents, [BLOCK_HEIGHT_KEY]);
    let txReserved: string | undefined;
    for (const r of input.txResults) {
      txReserved ??= findReservedKey(r.events, [TX_HASH_KEY, TX_HEIGHT_KEY]);
    }
    const txs = input.txs.map((tx, index) => {
      const result = input.txResults[index] as ExecTxResult;
      const hash = txHash(tx);
      return { hash, index, result, record: encodeTxResult({ height, index, tx, result }) };
    });

    await this.#kv.transaction(() => {
      if (blockReserved === undefined) this.#writeBlock(height, input.finalizeBlockEvents);
      if (txReserved !== undefined) return;
      const okByHash = new Map<string, boolean>();
      for (const tx of txs) {
        const hex = bytesToHex(tx.hash);
        // spec 4.4: a failed result never replaces an indexed successful one (kv.go Index).
        if (tx.result.code !== 0 && (okByHash.get(hex) ?? this.#storedIsOk(tx.hash))) continue;
        okByHash.set(hex, tx.result.code === 0);
        this.#writeTx(height, tx.index, tx.hash, tx.result.events, tx.record);
      }
    });
    if (blockReserved !== undefined) throw new ReservedEventKeyError(blockReserved, { blockEvents: true });
    if (txReserved !== undefined) throw new ReservedEventKeyError(txReserved, { blockEvents: false });
  }

  #storedIsOk(hash: Uint8Array): boolean {
    const raw = this.#t.txResults.get(hash);
    return raw !== undefined && decodeTxResult(raw).result.code === 0;
  }

  #writeBlock(height: number, events: readonly AbciEvent[]): void {
    const keys: Uint8Array[] = [];
    for (const a of indexedAttributes(events)) {
      const w = new KeyWriter();
      const tagCut = w.component(a.tag, MAX_TAG_KEY_BYTES);
      const valueCut = w.component(a.value, MAX_VALUE_KEY_BYTES);
      const key = w.u64(height).u32(a.event).finish();
      keys.push(key);
      this.#t.blockEvents.put(key, encodeSpill(a.tag, tagCut, a.value, valueCut));
    }
    this.#t.blockHeights.put(heightKey(height), encodeRowList(keys));
  }

  #writeTx(height: number, index: number, hash: Uint8Array, events: readonly AbciEvent[], record: Uint8Array): void {
    const table = this.#t.txEvents;
    txEventRows(height, index, events, (key, spill) => {
      // Without a spill the value is the hash itself (no copy).
      table.put(key, spill === undefined ? hash : concat(hash, spill));
    });
    this.#t.txHeights.put(new KeyWriter().u64(height).u32(index).finish(), hash);
    this.#t.txResults.put(hash, record);
  }

  /**
   * Removes every tx and block indexed below `retainHeight` (the block store's base after pruning):
   * results, height rows and events rows. Returns how many heights were removed. A tx hash indexed
   * again at a later height keeps its result (the later one).
   */
  async pruneBelow(retainHeight: number): Promise<number> {
    this.#assertOpen();
    const end = heightKey(retainHeight);
    return this.#kv.transaction(() => this.#removeHeights({ lt: end }, (h) => h < retainHeight));
  }

  /**
   * Dev chains (evm_revert): forgets every height above `height`, as pruneBelow forgets the heights
   * below its bound: the rows of each removed tx and block are made again from its stored result and
   * row list, so a revert costs what the removed heights indexed, not a scan of every event indexed.
   */
  async rollbackTo(height: number): Promise<void> {
    this.#assertOpen();
    const from = heightKey(height + 1);
    await this.#kv.transaction(() => this.#removeHeights({ gte: from }, (h) => h > height));
  }

  /**
   * Removes the txs and blocks at the heights of `range` (`inRange` says the same of a height):
   * results, height rows and events rows. A tx result kept for another inclusion of the same hash,
   * outside the range, stays. Returns how many block heights were removed.
   */
  #removeHeights(range: KvRange, inRange: (height: number) => boolean): number {
    const t = this.#t;
    const doomed: { table: KvTable; key: Uint8Array }[] = [];
    let scanTxEvents = false;
    for (const { key, value: hash } of t.txHeights.range(range)) {
      doomed.push({ table: t.txHeights, key });
      const r = new KeyReader(key);
      const height = r.u64();
      const index = r.u32();
      const raw = t.txResults.get(hash);
      const stored = raw === undefined ? undefined : decodeTxResult(raw);
      if (stored === undefined || stored.height !== height || stored.index !== index) {
        // The result kept is another inclusion's: this one's rows cannot be made again from it.
        // It is removed when its own row is (in the range), or stays (outside it).
        scanTxEvents = true;
        continue;
      }
      doomed.push({ table: t.txResults, key: hash });
      txEventRows(height, index, stored.result.events, (key) => doomed.push({ table: t.txEvents, key }));
    }
    let heights = 0;
    let scanBlockEvents = false;
    for (const { key, value } of t.blockHeights.range(range)) {
      heights++;
      doomed.push({ table: t.blockHeights, key });
      if (value[0] === ROW_LIST) for (const k of decodeRowList(value)) doomed.push({ table: t.blockEvents, key: k });
      else scanBlockEvents = true;
    }
    if (scanTxEvents) {
      for (const { key } of t.txEvents.range())
        if (inRange(eventRowHeight(key, 16))) doomed.push({ table: t.txEvents, key });
    }
    if (scanBlockEvents) {
      for (const { key } of t.blockEvents.range()) {
        if (inRange(eventRowHeight(key, 12))) doomed.push({ table: t.blockEvents, key });
      }
    }
    for (const { table, key } of doomed) table.remove(key);
    return heights;
  }

  getTx(hash: Uint8Array): IndexedTx | undefined {
    this.#assertOpen();
    if (hash.length === 0) throw new EmptyTxHashError({ inSearch: false });
    // Every key is a sha256; other lengths cannot match (and may exceed LMDB's key limit).
    if (hash.length !== HASH_BYTES) return undefined;
    const raw = this.#t.txResults.get(hash);
    return raw === undefined ? undefined : decodeTxResult(raw);
  }

  searchTxs(query: Query): IndexedTx[] {
    this.#assertOpen();
    const plan = planSearch(query, "tx");
    if (plan.type === "hash") {
      if (plan.hash.length === 0) throw new EmptyTxHashError({ inSearch: true });
      const tx = this.getTx(plan.hash);
      return tx === undefined ? [] : [tx];
    }
    if (plan.type !== "steps") return [];
    const out: IndexedTx[] = [];
    for (const hex of collectTargets(plan.steps, (step) => this.#txRows(step))) {
      const raw = this.#t.txResults.get(hexToBytes(hex) ?? new Uint8Array(0));
      // Copied: the record is decoded later, only if its page is asked for.
      if (raw !== undefined) out.push(decodeTxResultLazily(new Uint8Array(raw)));
    }
    return out;
  }

  searchBlocks(query: Query): number[] {
    this.#assertOpen();
    const plan = planSearch(query, "block");
    if (plan.type === "height") {
      return plan.height !== undefined && this.#hasBlock(plan.height) ? [plan.height] : [];
    }
    if (plan.type !== "steps") return [];
    const heights: number[] = [];
    for (const target of collectTargets(plan.steps, (step) => this.#blockRows(step))) {
      const h = Number(target);
      if (this.#hasBlock(h)) heights.push(h);
    }
    return heights;
  }

  lastIndexedHeight(): number {
    this.#assertOpen();
    for (const { key } of this.#t.blockHeights.range({ reverse: true, limit: 1 })) return new KeyReader(key).u64();
    return 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#kv.close();
  }

  #hasBlock(height: number): boolean {
    return this.#t.blockHeights.get(heightKey(height)) !== undefined;
  }

  *#txRows(step: SearchStep): Iterable<IndexRow> {
    if (step.heightRows) {
      const span = heightSpanBounds(step);
      if (span === undefined) return;
      for (const { key, value } of this.#t.txHeights.range(span)) {
        const height = new KeyReader(key).u64();
        yield { value: String(height), height, event: "0", target: bytesToHex(value) };
      }
      return;
    }
    const bounds = stepBounds(step);
    if (bounds === undefined) return;
    for (const { key, value } of this.#t.txEvents.range(bounds)) {
      const r = new KeyReader(key);
      const tagPart = r.component();
      const valuePart = r.component();
      const height = r.u64();
      const index = r.u32();
      const event = r.u32();
      const full = decodeSpill(value.subarray(HASH_BYTES), tagPart, valuePart);
      if (full.tag !== step.tag) continue;
      yield {
        value: full.value,
        height,
        event: `${height}/${index}/${event}`,
        target: bytesToHex(value.subarray(0, HASH_BYTES)),
      };
    }
  }

  *#blockRows(step: SearchStep): Iterable<IndexRow> {
    if (step.heightRows) {
      const span = heightSpanBounds(step);
      if (span === undefined) return;
      for (const { key } of this.#t.blockHeights.range(span)) {
        const height = new KeyReader(key).u64();
        yield { value: String(height), height, event: "0", target: String(height) };
      }
      return;
    }
    const bounds = stepBounds(step);
    if (bounds === undefined) return;
    for (const { key, value } of this.#t.blockEvents.range(bounds)) {
      const r = new KeyReader(key);
      const tagPart = r.component();
      const valuePart = r.component();
      const height = r.u64();
      const event = r.u32();
      const full = decodeSpill(value, tagPart, valuePart);
      if (full.tag !== step.tag) continue;
      yield { value: full.value, height, event: String(event), target: String(height) };
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new IndexerClosedError();
  }
}

/** The kv indexer: reads answer synchronously. */
export interface KvIndexer extends Indexer {
  pruneBelow(retainHeight: number): Promise<number>;
  getTx(hash: Uint8Array): IndexedTx | undefined;
  searchTxs(query: Query): IndexedTx[];
  searchBlocks(query: Query): number[];
}

/**
 * The kv indexer (`[tx_index] indexer = "kv"`) in `kv`'s tables. It takes ownership of the store:
 * close() closes it.
 */
export function createKvIndexer(kv: KvStore): KvIndexer {
  return new KvStoreIndexer(kv);
}
