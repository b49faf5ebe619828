import { join } from "node:path";
import { type KvStore, openKvStore } from "../../store/index.js";
import type {
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  LoadSnapshotChunkRequest,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  Snapshot,
} from "../../types/index.js";
import {
  type AbciEvent,
  addressFromPubKey,
  type CheckTxRequest,
  type CheckTxResponse,
  type CommitResponse,
  type ExecTxResult,
  type FinalizeBlockRequest,
  type FinalizeBlockResponse,
  type InfoResponse,
  type InitChainRequest,
  type InitChainResponse,
  KEY_TYPES,
  type PrepareProposalRequest,
  type ProcessProposalRequest,
  type QueryRequest,
  type QueryResponse,
  type ValidatorUpdate,
} from "../../types/index.js";
import { bytesToHex, bytesToUtf8, concatBytes, EMPTY_BYTES, utf8ToBytes } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import type { Application } from "../application.js";
import { type SnapshotEntry, SnapshotService, type SnapshotSettings } from "../snapshots/index.js";
import { InvalidKvTxError, KvStoreAppStateError } from "./errors.js";
import { KVSTORE_CODES, type KvTx, parseKvTx } from "./txFormat.js";
import { decodeValidatorRecord, encodeValidatorRecord } from "./validatorRecord.js";

/**
 * The built-in `kvstore` application, after CometBFT v0.38's persistent kvstore example
 * (abci/example/kvstore). What reaches a block is decided as upstream decides it: CheckTx and
 * ProcessProposal accept the same txs (txFormat.ts), and PrepareProposal rewrites the first `:` of
 * each tx into `=`, because upstream's Commit can only store `k=v`: a `k:v` tx proposed unchanged by
 * a cometh node stops every Go kvstore node of a mixed network (docs/compatibility.md, "mixed
 * networks"). Differences, all in cases where upstream halts the chain: validator updates that
 * CometBFT would refuse (removing an unknown or the last validator, a key type the consensus params
 * do not allow, too much power, a key twice in one block) fail their tx with code 2 instead.
 *
 * The app hash is upstream's: the number of applied txs, zigzag-varint encoded into 8 bytes
 * (binary.PutVarint). It says nothing about the values, but it is what every other kvstore node
 * computes, so a cometh kvstore node agrees with CometBFT nodes running the Go kvstore.
 */

/** version.ABCIVersion of v0.38. */
const ABCI_VERSION = "2.0.0";
const APP_VERSION = 1n;

const STATE_KEY = utf8ToBytes("stateKey");
const KV_PREFIX = utf8ToBytes("kvPairKey:");
const VAL_PREFIX = utf8ToBytes("val=");
const COLON = 0x3a;
const EQUALS = 0x3d;
/** LMDB's key limit (1978 bytes) minus the kv prefix. */
export const MAX_KV_KEY_BYTES = 1978 - KV_PREFIX.length;
/** types.MaxTotalVotingPower = MaxInt64 / 8. */
const MAX_TOTAL_VOTING_POWER = ((1n << 63n) - 1n) / 8n;

/** Upstream State.Hash(): binary.PutVarint(size) (zigzag) into an 8-byte buffer. */
export function kvStoreAppHash(size: number): Uint8Array {
  const out = new Uint8Array(8);
  let v = BigInt(size) * 2n;
  let i = 0;
  while (v >= 0x80n && i < 7) {
    out[i++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[i] = Number(v & 0xffn);
  return out;
}

interface AppState {
  /** Txs applied so far (upstream's Size): the app hash. */
  size: number;
  height: number;
  appHash: Uint8Array;
  /** ConsensusParams.validator.pubKeyTypes from InitChain: validator updates of other types are refused. */
  pubKeyTypes: string[];
}

interface StoredState {
  size: number;
  height: number;
  app_hash: string;
  pub_key_types: string[];
}

interface PendingBlock {
  state: AppState;
  sets: Map<string, { key: Uint8Array; value: Uint8Array }>;
  updates: Map<string, ValidatorUpdate>;
  validators: Map<string, ValidatorUpdate>;
}

export interface KvStoreAppOptions {
  /** The app's own database directory (created when missing), e.g. `<home>/data/kvstore.db`. */
  dbDir: string;
  log: Logger;
  /** Heights to keep (ResponseCommit.RetainHeight); 0 keeps every block. */
  retainBlocks?: number;
  /** State sync snapshots (app.toml [state-sync]), kept in `<dbDir>/snapshots`; none when absent. */
  snapshots?: KvSnapshotOptions;
}

/** app.toml [state-sync] snapshot-interval and snapshot-keep-recent; chunkBytes for tests. */
export type KvSnapshotOptions = SnapshotSettings;

interface OpenOptions {
  log: Logger;
  retainBlocks?: number;
  snapshots?: KvSnapshotOptions;
  /** Where snapshots are kept (required with `snapshots`). */
  snapshotDir?: string;
}

/** Opens (or creates) the kvstore app's LMDB database in `dbDir`. */
export async function createKvStoreApp(opts: KvStoreAppOptions): Promise<KvStoreApplication> {
  // A path with an extension makes LMDB use it as a file; a file inside dbDir keeps dbDir a directory.
  const db = await openKvStore(join(opts.dbDir, "data.mdb"));
  return KvStoreApplication.open(db, { ...opts, snapshotDir: join(opts.dbDir, "snapshots") });
}

function encodeState(s: AppState): Uint8Array {
  const stored: StoredState = {
    size: s.size,
    height: s.height,
    app_hash: bytesToHex(s.appHash),
    pub_key_types: s.pubKeyTypes,
  };
  return utf8ToBytes(JSON.stringify(stored));
}

function decodeState(bytes: Uint8Array | undefined): AppState {
  if (bytes === undefined) {
    return { size: 0, height: 0, appHash: kvStoreAppHash(0), pubKeyTypes: [KEY_TYPES.ed25519] };
  }
  try {
    const s = JSON.parse(bytesToUtf8(bytes)) as Partial<StoredState>;
    const size = s.size ?? 0;
    return {
      size,
      height: s.height ?? 0,
      appHash: kvStoreAppHash(size),
      pubKeyTypes: s.pub_key_types ?? [KEY_TYPES.ed25519],
    };
  } catch (err) {
    throw new KvStoreAppStateError("the app state record", { cause: err });
  }
}

function okResult(events: AbciEvent[]): ExecTxResult {
  return {
    code: KVSTORE_CODES.ok,
    data: EMPTY_BYTES,
    log: "",
    info: "",
    gasWanted: 0n,
    gasUsed: 0n,
    events,
    codespace: "",
  };
}

function failedResult(log: string): ExecTxResult {
  return { ...okResult([]), code: KVSTORE_CODES.invalidTxFormat, log };
}

/** Upstream emits the same two `app` events for every tx; key/value come from splitting the tx on "=". */
function txEvents(tx: Uint8Array): AbciEvent[] {
  const parts = bytesToUtf8(tx).split("=");
  const [key, value] = parts.length === 2 ? [parts[0] ?? "", parts[1] ?? ""] : [bytesToUtf8(tx), bytesToUtf8(tx)];
  const attrs = (creator: string, k: string) => [
    { key: "creator", value: creator, index: true },
    { key: "key", value: k, index: true },
    { key: "index_key", value: "index is working", index: true },
    { key: "noindex_key", value: "index is working", index: false },
  ];
  return [
    { type: "app", attributes: attrs("Cosmoshi Netowoko", key) },
    { type: "app", attributes: attrs("Cosmoshi", value) },
  ];
}

/** Upstream's formatTxs: the first ":" of a tx becomes "=" (a copy; tx bytes are never written to). */
function colonToEquals(tx: Uint8Array): Uint8Array {
  const at = tx.indexOf(COLON);
  if (at < 0) return tx;
  const out = tx.slice();
  out[at] = EQUALS;
  return out;
}

/** Size of a tx inside the block's Data protobuf (tag, length varint, bytes), as CometBFT counts it. */
function protoTxSize(tx: Uint8Array): number {
  let n = tx.length;
  let varint = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    varint++;
  }
  return 1 + varint + tx.length;
}

function totalPower(validators: Map<string, ValidatorUpdate>): bigint {
  let sum = 0n;
  for (const v of validators.values()) sum += v.power;
  return sum;
}

export class KvStoreApplication implements Application {
  readonly #db: KvStore;
  readonly #log: Logger;
  readonly #retainBlocks: number;
  #committed: AppState;
  /** Committed validator set: hex pubkey → update. */
  #validators: Map<string, ValidatorUpdate>;
  /** hex address → pubkey hex, for punishing misbehaviour. */
  #addresses: Map<string, string>;
  #pending: PendingBlock | undefined;
  /** State sync: taking, serving and restoring snapshots of every key of the store. */
  readonly #snapshots: SnapshotService;

  private constructor(db: KvStore, opts: OpenOptions) {
    this.#db = db;
    this.#log = opts.log;
    this.#retainBlocks = opts.retainBlocks ?? 0;
    this.#committed = decodeState(db.get(STATE_KEY));
    this.#validators = new Map();
    this.#addresses = new Map();
    this.#loadValidators();
    this.#snapshots = new SnapshotService(
      {
        // Every key of the app's store is its state: the snapshot is all of them, read in one view.
        entries: () => this.#db.range(),
        clear: () => this.#clearState(),
        write: (entries) => this.#writeEntries(entries),
        finish: async () => {
          this.#committed = decodeState(this.#db.get(STATE_KEY));
          this.#loadValidators();
          return { height: this.#committed.height, appHash: this.#committed.appHash };
        },
      },
      {
        dir: opts.snapshotDir,
        log: opts.log,
        ...(opts.snapshots === undefined ? {} : { settings: opts.snapshots }),
      },
    );
  }

  /** Wraps an open store (the app closes it on close()). */
  static open(db: KvStore, opts: OpenOptions): KvStoreApplication {
    return new KvStoreApplication(db, opts);
  }

  async info(): Promise<InfoResponse> {
    return {
      data: `{"size":${this.#committed.size}}`,
      version: ABCI_VERSION,
      appVersion: APP_VERSION,
      lastBlockHeight: this.#committed.height,
      lastBlockAppHash: this.#committed.appHash,
    };
  }

  async initChain(req: InitChainRequest): Promise<InitChainResponse> {
    const validators = new Map(this.#validators);
    for (const v of req.validators) {
      const key = bytesToHex(v.pubKey.bytes);
      if (v.power === 0n) validators.delete(key);
      else validators.set(key, v);
    }
    const state: AppState = { ...this.#committed, pubKeyTypes: [...req.consensusParams.validator.pubKeyTypes] };
    await this.#db.transaction(() => {
      this.#writeValidatorUpdates(req.validators);
      this.#db.put(STATE_KEY, encodeState(state));
    });
    this.#committed = state;
    this.#validators = validators;
    this.#addresses = this.#addressIndex(validators);
    return { validators: [], appHash: kvStoreAppHash(state.size) };
  }

  async checkTx(req: CheckTxRequest): Promise<CheckTxResponse> {
    const parsed = this.#tryParse(req.tx);
    const base = { data: EMPTY_BYTES, info: "", gasUsed: 0n, events: [], codespace: "" };
    if (parsed instanceof InvalidKvTxError) {
      // v0.38's kvstore answers code 1 and nothing else (no log): the reason goes to the node's debug log.
      this.#log.debug({ reason: parsed.message }, "CheckTx refused a tx");
      return { ...base, code: KVSTORE_CODES.invalidTxFormat, log: "", gasWanted: 0n };
    }
    return { ...base, code: KVSTORE_CODES.ok, log: "", gasWanted: 1n };
  }

  async prepareProposal(req: PrepareProposalRequest): Promise<{ txs: Uint8Array[] }> {
    const txs: Uint8Array[] = [];
    let bytes = 0;
    for (const tx of req.txs) {
      if (this.#tryParse(tx) instanceof InvalidKvTxError) continue;
      const formatted = colonToEquals(tx);
      bytes += protoTxSize(formatted);
      if (req.maxTxBytes >= 0 && bytes > req.maxTxBytes) break;
      txs.push(formatted);
    }
    return { txs };
  }

  async processProposal(req: ProcessProposalRequest): Promise<"accept" | "reject"> {
    for (const tx of req.txs) {
      if (this.#tryParse(tx) instanceof InvalidKvTxError) return "reject";
    }
    return "accept";
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    const validators = new Map(this.#validators);
    const updates = new Map<string, ValidatorUpdate>();
    const sets = new Map<string, { key: Uint8Array; value: Uint8Array }>();
    let size = this.#committed.size;

    // Upstream lowers an equivocating validator's power by one.
    for (const ev of req.misbehavior) {
      if (ev.type !== "duplicateVote") continue;
      const pubKeyHex = this.#addresses.get(bytesToHex(ev.validatorAddress));
      const current = pubKeyHex === undefined ? undefined : validators.get(pubKeyHex);
      if (current === undefined) {
        this.#log.warn({ address: bytesToHex(ev.validatorAddress) }, "cannot punish unknown validator");
        continue;
      }
      const refused = this.#applyValidatorUpdate(validators, updates, {
        pubKey: current.pubKey,
        power: ev.validatorPower - 1n,
      });
      if (refused !== undefined) this.#log.warn({ reason: refused }, "validator punishment skipped");
      else
        this.#log.info({ address: bytesToHex(ev.validatorAddress) }, "decreased validator power by 1 for equivocation");
    }

    const txResults: ExecTxResult[] = [];
    for (const tx of req.txs) {
      const parsed = this.#tryParse(tx);
      if (parsed instanceof InvalidKvTxError) {
        txResults.push(failedResult(parsed.message));
        continue;
      }
      if (parsed.kind === "validator") {
        const refused = this.#applyValidatorUpdate(validators, updates, parsed.update);
        if (refused !== undefined) {
          txResults.push(failedResult(refused));
          continue;
        }
      } else {
        sets.set(bytesToHex(parsed.key), { key: parsed.key, value: parsed.value });
      }
      size++;
      txResults.push(okResult(txEvents(tx)));
    }

    const state: AppState = { ...this.#committed, size, height: req.height, appHash: kvStoreAppHash(size) };
    this.#pending = { state, sets, updates, validators };
    return {
      events: [],
      txResults,
      validatorUpdates: [...updates.values()],
      appHash: state.appHash,
      // v0.38's kvstore answers an empty (not nil) list, which its NewBlock event shows as `[]`.
      validatorUpdatesEmptyList: true,
    };
  }

  async commit(): Promise<CommitResponse> {
    const p = this.#pending;
    if (p !== undefined) {
      await this.#db.transaction(() => {
        for (const { key, value } of p.sets.values()) this.#db.put(concatBytes(KV_PREFIX, key), value);
        this.#writeValidatorUpdates(p.updates.values());
        this.#db.put(STATE_KEY, encodeState(p.state));
      });
      this.#pending = undefined;
      this.#committed = p.state;
      if (p.updates.size > 0) {
        this.#validators = p.validators;
        this.#addresses = this.#addressIndex(p.validators);
        this.#log.info({ height: p.state.height, updates: p.updates.size }, "validator set updated");
      }
    }
    const height = this.#committed.height;
    if (p !== undefined) this.#snapshots.afterCommit(height, this.#committed.appHash);
    const retainHeight = this.#retainBlocks > 0 && height >= this.#retainBlocks ? height - this.#retainBlocks + 1 : 0;
    return { retainHeight };
  }

  async query(req: QueryRequest): Promise<QueryResponse> {
    const base = { code: KVSTORE_CODES.ok, info: "", proofOps: undefined, codespace: "", key: req.data };
    if (req.path === "/val") {
      // Upstream answers only key and value here: the stored ValidatorUpdate, length-delimited.
      const value = this.#db.get(concatBytes(VAL_PREFIX, req.data)) ?? EMPTY_BYTES;
      return { ...base, log: "", index: 0n, value, height: 0 };
    }
    // Every other path ("/key", "/store", "") reads the key, as upstream does.
    const value = req.data.length <= MAX_KV_KEY_BYTES ? this.#db.get(concatBytes(KV_PREFIX, req.data)) : undefined;
    return {
      ...base,
      log: value === undefined ? "does not exist" : "exists",
      index: req.prove ? -1n : 0n,
      value: value ?? EMPTY_BYTES,
      height: this.#committed.height,
    };
  }

  async close(): Promise<void> {
    await this.#db.close();
  }

  // ---- state sync (app/snapshots) ----------------------------------------------------------------

  listSnapshots(): Promise<Snapshot[]> {
    return this.#snapshots.listSnapshots();
  }

  loadSnapshotChunk(req: LoadSnapshotChunkRequest): Promise<Uint8Array> {
    return this.#snapshots.loadSnapshotChunk(req);
  }

  offerSnapshot(req: OfferSnapshotRequest): Promise<OfferSnapshotResult> {
    return this.#snapshots.offerSnapshot(req);
  }

  applySnapshotChunk(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse> {
    return this.#snapshots.applySnapshotChunk(req);
  }

  async #clearState(): Promise<void> {
    await this.#db.transaction(() => {
      for (const { key } of this.#db.range()) this.#db.remove(key);
    });
    this.#committed = decodeState(undefined);
    this.#pending = undefined;
    this.#loadValidators();
  }

  async #writeEntries(entries: readonly SnapshotEntry[]): Promise<void> {
    await this.#db.transaction(() => {
      for (const e of entries) this.#db.put(e.key, e.value);
    });
  }

  #loadValidators(): void {
    this.#validators = new Map();
    for (const { value } of this.#db.range({ prefix: VAL_PREFIX })) {
      const v = decodeValidatorRecord(value);
      this.#validators.set(bytesToHex(v.pubKey.bytes), v);
    }
    this.#addresses = this.#addressIndex(this.#validators);
  }

  #tryParse(tx: Uint8Array): KvTx | InvalidKvTxError {
    try {
      const parsed = parseKvTx(tx);
      if (parsed.kind === "set" && parsed.key.length > MAX_KV_KEY_BYTES) {
        return new InvalidKvTxError(`key is ${parsed.key.length} bytes; at most ${MAX_KV_KEY_BYTES} are allowed`);
      }
      return parsed;
    } catch (err) {
      if (err instanceof InvalidKvTxError) return err;
      throw err;
    }
  }

  /**
   * Applies one update to the block's validator view; returns why it is refused, if it is. These are
   * the checks CometBFT's UpdateWithChangeSet would fail on, which would halt the chain.
   */
  #applyValidatorUpdate(
    validators: Map<string, ValidatorUpdate>,
    updates: Map<string, ValidatorUpdate>,
    update: ValidatorUpdate,
  ): string | undefined {
    const key = bytesToHex(update.pubKey.bytes);
    if (!this.#committed.pubKeyTypes.includes(update.pubKey.type)) {
      return `validator pubkey type ${update.pubKey.type} is not allowed by the consensus params (${this.#committed.pubKeyTypes.join(", ")})`;
    }
    if (updates.has(key)) return "validator already updated in this block; send the next update in a later block";
    const current = validators.get(key);
    if (update.power === 0n) {
      if (current === undefined) return "cannot remove a validator that is not in the set";
      if (validators.size === 1) return "cannot remove the last validator";
      validators.delete(key);
    } else {
      const total = totalPower(validators) - (current?.power ?? 0n) + update.power;
      if (total > MAX_TOTAL_VOTING_POWER) {
        return `total voting power would exceed ${MAX_TOTAL_VOTING_POWER}`;
      }
      validators.set(key, update);
    }
    updates.set(key, update);
    return undefined;
  }

  #writeValidatorUpdates(updates: Iterable<ValidatorUpdate>): void {
    for (const u of updates) {
      const key = concatBytes(VAL_PREFIX, u.pubKey.bytes);
      if (u.power === 0n) this.#db.remove(key);
      else this.#db.put(key, encodeValidatorRecord(u));
    }
  }

  #addressIndex(validators: Map<string, ValidatorUpdate>): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, v] of validators) out.set(bytesToHex(addressFromPubKey(v.pubKey)), key);
    return out;
  }
}
