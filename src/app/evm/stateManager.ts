import type { AccountFields, StateManagerInterface } from "@ethereumjs/common";
import { Account, type Address } from "@ethereumjs/util";
import type { EngineState, StorageSlot } from "../../evm/index.js";
import { bytesToWord, type Word, wordToBytes, wordToMinimalBytes } from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { keccak256 } from "./crypto.js";
import { EvmCallTimeoutError, EvmNotSupportedError } from "./errors.js";
import { encodeAccount, equalBytes, KECCAK256_NULL, type StoredAccount, stripZeros } from "./records.js";
import type { StateDiff, StateReader } from "./stateDb.js";

/** keccak256(rlp("")): the storage root ethereumjs expects of an account without storage (EIP-7610 check). */
const EMPTY_STORAGE_ROOT = new Uint8Array(
  Buffer.from("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421", "hex"),
);

interface AccountEntry {
  addr: Uint8Array;
  account: StoredAccount;
}

/**
 * One slot of one account incarnation, read from the base once and then kept: every later SLOAD and
 * SSTORE of the block is a Map lookup by the slot's word (engine/words.ts) and a field access. `original` is the value
 * when the running transaction started (EIP-2200), captured at the slot's first touch in it.
 */
class SlotRecord implements StorageSlot {
  readonly key: Word;
  value: Word;
  /** The value in the base reader (diff() writes only slots whose value differs from it). */
  readonly base: Word;
  original: Word;
  /** The transaction (OverlayStateManager's counter) `original` belongs to. */
  originalTx: number;
  /** Written in this overlay (possibly back to its base value). */
  written = false;

  constructor(key: Word, base: Word, tx: number) {
    this.key = key;
    this.value = base;
    this.base = base;
    this.original = base;
    this.originalTx = tx;
  }
}

/** The slots of one account incarnation that the overlay has read or written. */
interface SlotTable {
  readonly addr: Uint8Array;
  readonly incarnation: number;
  readonly slots: Map<Word, SlotRecord>;
}

/** The slot tables of one address: the current incarnation's first (the common case), then any others. */
interface AddressSlots {
  current: SlotTable;
  others: SlotTable[] | undefined;
}

class AccountUndo {
  readonly key: string;
  readonly prev: AccountEntry | undefined;
  constructor(key: string, prev: AccountEntry | undefined) {
    this.key = key;
    this.prev = prev;
  }
}

class SlotUndo {
  readonly record: SlotRecord;
  readonly value: Word;
  readonly written: boolean;
  constructor(record: SlotRecord) {
    this.record = record;
    this.value = record.value;
    this.written = record.written;
  }
}

type Undo = AccountUndo | SlotUndo;

/**
 * An ethereumjs state manager that keeps a block's (or a call's) writes in memory over a read-only
 * StateReader of one height. Checkpoints are an undo journal (O(writes), not O(state) as in
 * SimpleStateManager). At the end of a block `diff()` hands the changed values to the store.
 *
 * Storage wipes (contract creation, self-destruct) bump the account's incarnation instead of deleting
 * slots: storage is keyed by (address, incarnation, slot), so older slots simply stop being visible.
 * Storage roots are not tracked: every account reports the empty root (EIP-7610's collision check then
 * only looks at nonce and code).
 */
export class OverlayStateManager implements StateManagerInterface, EngineState {
  #base: StateReader;
  readonly #accounts = new Map<string, AccountEntry>();
  /** Storage working set by address hex (SlotRecord). */
  readonly #storage = new Map<string, AddressSlots>();
  /** Bumped by clearOriginalStorage: the transaction a record's `original` is valid for. */
  #tx = 1;
  readonly #codes = new Map<string, Uint8Array>();
  /** Code by the identity of an account record's codeHash array (records are never changed in place). */
  readonly #codeOfHash = new WeakMap<Uint8Array, Uint8Array>();
  readonly #reads = new Map<string, StoredAccount>();
  #journal: Undo[] = [];
  #checkpoints: number[] = [];
  /**
   * eth_call from a contract: geth skips the EOA check (SkipFromEOACheck). This address reports no
   * code to ethereumjs' account checks, while its real code stays in place.
   */
  pretendEoa: Uint8Array | undefined;
  /** performance.now() deadline for calls; undefined for block execution. */
  deadline: number | undefined;
  timeoutMs = 0;

  readonly originalStorageCache = {
    get: async (address: Address, key: Uint8Array): Promise<Uint8Array> => this.originalStorage(address.bytes, key),
    clear: (): void => this.clearOriginalStorage(),
  };

  constructor(base: StateReader) {
    this.#base = base;
  }

  get base(): StateReader {
    return this.#base;
  }

  /**
   * The hex keys of the last two address arrays asked for: a transaction asks for its sender's and
   * recipient's accounts several times through the same arrays. By identity, and only until the next
   * reset (within one transaction or call nothing rewrites an address array).
   */
  #keyAddr0: Uint8Array | undefined;
  #key0 = "";
  #keyAddr1: Uint8Array | undefined;
  #key1 = "";

  #keyOf(addr: Uint8Array): string {
    if (addr === this.#keyAddr0) return this.#key0;
    if (addr === this.#keyAddr1) return this.#key1;
    const key = bytesToHex(addr);
    this.#keyAddr1 = this.#keyAddr0;
    this.#key1 = this.#key0;
    this.#keyAddr0 = addr;
    this.#key0 = key;
    return key;
  }

  /** Drops every write and starts over on `base` (a new block). */
  reset(base: StateReader): void {
    this.#keyAddr0 = undefined;
    this.#keyAddr1 = undefined;
    this.#base = base;
    this.#accounts.clear();
    this.#storage.clear();
    this.#codes.clear();
    this.#reads.clear();
    this.#journal = [];
    this.#checkpoints = [];
    this.#tx++;
    this.pretendEoa = undefined;
    this.deadline = undefined;
  }

  #check(): void {
    if (this.deadline !== undefined && performance.now() > this.deadline) {
      throw new EvmCallTimeoutError(this.timeoutMs);
    }
  }

  /**
   * Throws EvmCallTimeoutError once a call's deadline has passed: checked on state reads, and by the
   * engine's interrupt hook (engine/transaction.ts) every few thousand jumps, so code that loops without
   * touching state is stopped too.
   */
  checkDeadline(): void {
    this.#check();
  }

  /** Current account (overlay, else base); never mutate the result. */
  storedAccount(addr: Uint8Array, key = this.#keyOf(addr)): StoredAccount {
    const e = this.#accounts.get(key);
    if (e !== undefined) return e.account;
    let a = this.#reads.get(key);
    if (a === undefined) {
      this.#check();
      a = this.#base.account(addr, key);
      this.#reads.set(key, a);
    }
    return a;
  }

  /** Replaces an account (journaled). */
  setStoredAccount(addr: Uint8Array, account: StoredAccount, key = this.#keyOf(addr)): void {
    if (this.#checkpoints.length > 0) this.#journal.push(new AccountUndo(key, this.#accounts.get(key)));
    this.#accounts.set(key, { addr, account });
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const a = this.storedAccount(address.bytes);
    if (!a.exists) return undefined;
    const codeHash =
      this.pretendEoa !== undefined && equalBytes(this.pretendEoa, address.bytes) ? KECCAK256_NULL : a.codeHash;
    return new Account(a.nonce, a.balance, EMPTY_STORAGE_ROOT, codeHash);
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    if (account === undefined) return this.deleteAccount(address);
    const addr = address.bytes;
    const key = this.#keyOf(addr);
    const cur = this.storedAccount(addr, key);
    const keepCode = this.pretendEoa !== undefined && equalBytes(this.pretendEoa, addr);
    this.setStoredAccount(
      addr,
      {
        exists: true,
        nonce: account.nonce,
        balance: account.balance,
        codeHash: keepCode ? cur.codeHash : account.codeHash,
        incarnation: cur.incarnation,
      },
      key,
    );
  }

  async deleteAccount(address: Address): Promise<void> {
    const addr = address.bytes;
    const key = this.#keyOf(addr);
    const cur = this.storedAccount(addr, key);
    if (!cur.exists) return;
    this.setStoredAccount(
      addr,
      { exists: false, nonce: 0n, balance: 0n, codeHash: KECCAK256_NULL, incarnation: cur.incarnation + 1 },
      key,
    );
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const account = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) account.nonce = fields.nonce;
    if (fields.balance !== undefined) account.balance = fields.balance;
    if (fields.codeHash !== undefined) account.codeHash = fields.codeHash;
    await this.putAccount(address, account);
  }

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    this.setCode(address.bytes, value);
  }

  setCode(addr: Uint8Array, value: Uint8Array): void {
    const hash = value.length === 0 ? KECCAK256_NULL : keccak256(value);
    if (value.length > 0) this.#codes.set(bytesToHex(hash), value);
    const key = this.#keyOf(addr);
    const cur = this.storedAccount(addr, key);
    this.setStoredAccount(addr, { ...cur, exists: true, codeHash: hash }, key);
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const a = this.storedAccount(address.bytes);
    if (!a.exists || equalBytes(a.codeHash, KECCAK256_NULL)) return new Uint8Array(0);
    return this.codeByHash(a.codeHash);
  }

  codeByHash(hash: Uint8Array): Uint8Array {
    return this.#codes.get(bytesToHex(hash)) ?? this.#base.code(hash);
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  storageValue(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    return wordToMinimalBytes(this.slotOf(addr, bytesToHex(addr), bytesToWord(slot)).value);
  }

  /**
   * The working record of a slot at the account's current incarnation: read from the base the first
   * time, then kept for the rest of the block (EngineState.slotOf).
   */
  slotOf(addr: Uint8Array, addrKey: string, key: Word): StorageSlot {
    return this.#slot(addr, addrKey, key);
  }

  #slot(addr: Uint8Array, addrKey: string, key: Word): SlotRecord {
    const incarnation = this.storedAccount(addr, addrKey).incarnation;
    let entry = this.#storage.get(addrKey);
    let table: SlotTable;
    if (entry === undefined) {
      table = { addr, incarnation, slots: new Map() };
      entry = { current: table, others: undefined };
      this.#storage.set(addrKey, entry);
    } else {
      table = entry.current;
      if (table.incarnation !== incarnation) table = this.#switchTable(entry, addr, incarnation);
    }
    let rec = table.slots.get(key);
    if (rec === undefined) {
      this.#check();
      rec = new SlotRecord(key, bytesToWord(this.#base.storage(addr, incarnation, wordToBytes(key))), this.#tx);
      table.slots.set(key, rec);
    } else if (rec.originalTx !== this.#tx) {
      rec.original = rec.value;
      rec.originalTx = this.#tx;
    }
    return rec;
  }

  /** Makes `incarnation`'s table the address's current one (created empty when new). */
  #switchTable(entry: AddressSlots, addr: Uint8Array, incarnation: number): SlotTable {
    const others = entry.others ?? [];
    entry.others = others;
    others.push(entry.current);
    const i = others.findIndex((t) => t.incarnation === incarnation);
    const table = i < 0 ? { addr, incarnation, slots: new Map<Word, SlotRecord>() } : (others[i] as SlotTable);
    if (i >= 0) others.splice(i, 1);
    entry.current = table;
    return table;
  }

  /** Sets a slot's value (journaled). `slot` must come from slotOf on this overlay. */
  writeSlot(slot: StorageSlot, value: Word): void {
    const rec = slot as SlotRecord;
    if (this.#checkpoints.length > 0) this.#journal.push(new SlotUndo(rec));
    rec.value = value;
    rec.written = true;
  }

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    return this.storageValue(address.bytes, key);
  }

  async putStorage(address: Address, slot: Uint8Array, value: Uint8Array): Promise<void> {
    this.setStorageValue(address.bytes, slot, value);
  }

  setStorageValue(addr: Uint8Array, slot: Uint8Array, value: Uint8Array): void {
    this.writeSlot(this.slotOf(addr, bytesToHex(addr), bytesToWord(slot)), bytesToWord(stripZeros(value)));
  }

  async clearStorage(address: Address): Promise<void> {
    const addr = address.bytes;
    const key = this.#keyOf(addr);
    const cur = this.storedAccount(addr, key);
    this.setStoredAccount(addr, { ...cur, incarnation: cur.incarnation + 1 }, key);
  }

  async checkpoint(): Promise<void> {
    this.#checkpoints.push(this.#journal.length);
  }

  async commit(): Promise<void> {
    this.#checkpoints.pop();
    if (this.#checkpoints.length === 0) this.#journal = [];
  }

  async revert(): Promise<void> {
    if (this.#checkpoints.length === 0) return;
    this.revertTo(this.#checkpoints.length);
  }

  // ---- EngineState: the same overlay, synchronous, for cometh's own EVM (engine/) ---------------

  account(addr: Uint8Array, key = this.#keyOf(addr)): StoredAccount {
    return this.storedAccount(addr, key);
  }

  setAccount(addr: Uint8Array, account: StoredAccount, key?: string): void {
    this.setStoredAccount(addr, account, key);
  }

  code(addr: Uint8Array, key = this.#keyOf(addr)): Uint8Array {
    const a = this.storedAccount(addr, key);
    if (!a.exists) return new Uint8Array(0);
    // By the account record's hash array: a contract called in a loop looks its code up once.
    let code = this.#codeOfHash.get(a.codeHash);
    if (code === undefined) {
      code = equalBytes(a.codeHash, KECCAK256_NULL) ? new Uint8Array(0) : this.codeByHash(a.codeHash);
      this.#codeOfHash.set(a.codeHash, code);
    }
    return code;
  }

  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    return this.storageValue(addr, slot);
  }

  setStorage(addr: Uint8Array, slot: Uint8Array, value: Uint8Array): void {
    this.setStorageValue(addr, slot, value);
  }

  originalStorage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    return wordToMinimalBytes(this.slotOf(addr, bytesToHex(addr), bytesToWord(slot)).original);
  }

  clearOriginalStorage(): void {
    this.#tx++;
  }

  hasStorage(addr: Uint8Array): boolean {
    const a = this.storedAccount(addr);
    const entry = this.#storage.get(bytesToHex(addr));
    const tables = entry === undefined ? [] : [entry.current, ...(entry.others ?? [])];
    for (const t of tables) {
      if (t.incarnation !== a.incarnation) continue;
      for (const rec of t.slots.values()) if (rec.value !== 0) return true;
    }
    // A stored slot the overlay has since zeroed still counts (a creation at an address whose storage
    // the same block emptied: not worth a slot-by-slot walk).
    return this.#base.hasStorage?.(addr, a.incarnation) === true;
  }

  wipeStorage(addr: Uint8Array): void {
    const key = this.#keyOf(addr);
    const cur = this.storedAccount(addr, key);
    this.setStoredAccount(addr, { ...cur, incarnation: cur.incarnation + 1 }, key);
  }

  mark(): number {
    this.#checkpoints.push(this.#journal.length);
    return this.#checkpoints.length;
  }

  keep(mark: number): void {
    if (mark !== this.#checkpoints.length)
      throw new RangeError(`keep(${mark}) out of order: depth ${this.#checkpoints.length}`);
    this.#checkpoints.pop();
    if (this.#checkpoints.length === 0) this.#journal = [];
  }

  /**
   * Reverts to just before `mark` was taken, dropping any checkpoint above it that a run left open
   * (a forked chain's source failing in the middle of a tx: app/evm/fork/).
   */
  unwindTo(mark: number): void {
    while (this.#checkpoints.length > mark) this.revertTo(this.#checkpoints.length);
    this.revertTo(mark);
  }

  revertTo(mark: number): void {
    if (mark !== this.#checkpoints.length) {
      throw new RangeError(`revertTo(${mark}) out of order: depth ${this.#checkpoints.length}`);
    }
    const at = this.#checkpoints.pop() ?? 0;
    for (let i = this.#journal.length - 1; i >= at; i--) {
      const u = this.#journal[i] as Undo;
      if (u instanceof SlotUndo) {
        u.record.value = u.value;
        u.record.written = u.written;
      } else if (u.prev === undefined) this.#accounts.delete(u.key);
      else this.#accounts.set(u.key, u.prev);
    }
    this.#journal.length = at;
    if (this.#checkpoints.length === 0) this.#journal = [];
  }

  async getStateRoot(): Promise<Uint8Array> {
    throw new EvmNotSupportedError("state roots are not tracked by the EVM app; the app hash commits to the state");
  }

  async setStateRoot(): Promise<void> {
    throw new EvmNotSupportedError("state roots are not tracked by the EVM app; open a reader at a height instead");
  }

  async hasStateRoot(): Promise<boolean> {
    throw new EvmNotSupportedError("state roots are not tracked by the EVM app");
  }

  clearCaches(): void {}

  shallowCopy(): StateManagerInterface {
    return new OverlayStateManager(this.#base);
  }

  /** The block's writes that differ from the base, for the store and the app hash. */
  diff(): StateDiff {
    const diff: StateDiff = { accounts: [], storage: [], codes: [] };
    for (const [key, e] of this.#accounts) {
      const before = this.#reads.get(key) ?? this.#base.account(e.addr);
      if (!equalBytes(encodeAccount(before), encodeAccount(e.account)) || before.exists !== e.account.exists) {
        diff.accounts.push({ addr: e.addr, account: e.account });
      }
    }
    for (const entry of this.#storage.values()) {
      for (const t of entry.others === undefined ? [entry.current] : [entry.current, ...entry.others]) {
        for (const rec of t.slots.values()) {
          if (!rec.written || rec.value === rec.base) continue;
          diff.storage.push({
            addr: t.addr,
            incarnation: t.incarnation,
            slot: wordToBytes(rec.key),
            value: wordToMinimalBytes(rec.value),
          });
        }
      }
    }
    for (const [hex, code] of this.#codes) diff.codes.push({ hash: new Uint8Array(Buffer.from(hex, "hex")), code });
    return diff;
  }
}
