import { join } from "node:path";
import type { Common } from "@ethereumjs/common";
import { type KvBackend, type KvStore, openKvBackend } from "../../store/index.js";
import type {
  AbciEvent,
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  CheckTxRequest,
  CheckTxResponse,
  CommitResponse,
  ExecTxResult,
  FinalizeBlockRequest,
  FinalizeBlockResponse,
  InfoResponse,
  InitChainRequest,
  InitChainResponse,
  LoadSnapshotChunkRequest,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  PrepareProposalRequest,
  ProcessProposalRequest,
  QueryRequest,
  QueryResponse,
  Snapshot,
} from "../../types/index.js";
import { bytesToHex, EMPTY_BYTES, hexToBytes } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import type { Application } from "../application.js";
import type { SnapshotService } from "../snapshots/index.js";
import { keccak256 } from "./crypto.js";
import { DEV_MNEMONIC, type DevAccount, deriveDevAccounts, toChecksumAddress } from "./devAccounts.js";
import { type DevCheat, decodeDevEntry, isDevEntry } from "./devEntries.js";
import {
  CHECK_TX_CODES,
  CHECK_TX_CODESPACE,
  EvmAppSequenceError,
  EvmConfigError,
  InvalidEthTxError,
  StateUnavailableError,
} from "./errors.js";
import { createEvmCommon, createTxCommon, type ExecBlockContext, isDelegation, TxExecutor } from "./executor.js";
import {
  baseFeeWei,
  DEC_ONE,
  defaultFeeMarketParams,
  formatDec,
  nextBlockBaseFee,
  nextFeeMarketState,
} from "./feeMarket.js";
import { type ForkSource, ForkSourceError } from "./fork/index.js";
import { type GenesisAccount, HISTORY_STORAGE_ADDRESS, PREINSTALLS, parseEvmGenesis } from "./genesis.js";
import { EvmReaderImpl } from "./reader.js";
import type { EvmReader } from "./readerTypes.js";
import type { ReadWorkerSetup } from "./readWire.js";
import {
  type AppMeta,
  type ChainSettings,
  EMPTY_TRIE_ROOT,
  type EvmBlock,
  type EvmLogRecord,
  type EvmReceipt,
  equalBytes,
  type FeeMarketParams,
  KECCAK256_NULL,
  setLengthLeft,
  stripZeros,
} from "./records.js";
import { evmSnapshotService } from "./snapshots.js";
import { chainAppHash, diffHash, EvmStateDb, type StateDiff } from "./stateDb.js";
import { type DecodeContext, type DecodedTx, DecodedTxCache, notOnDevChain } from "./txDecode.js";

/** Cosmos EVM's default `[evm] evm-chain-id`. */
export const DEFAULT_EVM_CHAIN_ID = 262144n;
/** Cosmos SDK "default" pruning keeps this many recent heights. */
export const DEFAULT_PRUNING_KEEP_RECENT = 362880;
/** Cosmos EVM mempool `account-queue`: future nonces queued per account. */
export const DEFAULT_MAX_NONCE_GAP = 64;

export interface EvmAppOptions {
  /** The app's own database directory (created when missing), e.g. `<home>/data/evm.db`. */
  dbDir: string;
  log: Logger;
  /** EIP-155 chain id (`[evm] evm-chain-id`); default 262144. Fixed at InitChain. */
  chainId?: bigint;
  /** Accept pre-EIP-155 legacy txs (`allow-unprotected-txs`); default false. */
  allowUnprotectedTxs?: boolean;
  /** Heights of state kept for queries at past heights, or "archive"; default 362880. */
  pruning?: number | "archive";
  /**
   * Fixed fee recipient (0x address) instead of the proposer's address bytes. Changes the app hash:
   * every validator must use the same value (or set `evm.coinbase` in genesis app_state).
   */
  coinbase?: string;
  /** Mnemonic of the dev accounts funded when genesis funds nobody; default Hardhat's. */
  mnemonic?: string;
  devAccountCount?: number;
  /** CheckTx accepts nonces below (next pending nonce + gap): how far a sender may run ahead; default 64. */
  maxNonceGap?: number;
  /** Decoded-tx cache entries (CheckTx → block execution); default 50000. */
  decodedTxCacheSize?: number;
  /** Commits without flushing to disk (dev chains: they survive the process being killed, not a power loss). */
  noSync?: boolean;
  /** config.toml `db_backend`: "memdb" keeps the app's state in memory (dev chains); default "lmdb". */
  dbBackend?: KvBackend;
  /**
   * `[evm] min-tip`: txs whose effective tip (min(maxPriorityFeePerGas, maxFeePerGas − baseFee)) is below
   * this many wei stay in the mempool but are not proposed, nor are the sender's later nonces; default 0.
   */
  minTip?: bigint;
  /** `[evm] max-tx-gas-wanted`: CheckTx reports at most this gas wanted per tx (0 = the tx's gas limit). */
  maxTxGasWanted?: bigint;
  /**
   * Dev chains forked from another chain (`cometh dev --fork-url`): state local writes never touched
   * is read from this source at its fork block (app/evm/fork/). The app closes it on close().
   */
  fork?: ForkSource;
  /**
   * app.toml `min-retain-blocks`: Commit asks CometBFT to keep at least this many recent blocks and
   * prune the rest (retainBlockHeight); 0 (the default) keeps every block.
   */
  minRetainBlocks?: number;
  /** Blocks state sync peers may still need: snapshot-interval × snapshot-keep-recent (0 = none). */
  snapshotRetainBlocks?: number;
  /** State sync snapshots (app.toml [state-sync]), kept in `<dbDir>/snapshots` (snapshots.ts); none when absent. */
  snapshots?: { interval: number; keepRecent: number; chunkBytes?: number };
}

interface PendingBlock {
  meta: AppMeta;
  /** Settings after the block when dev entries changed them. */
  settings: ChainSettings | undefined;
  diff: StateDiff;
  block: EvmBlock;
  receipts: EvmReceipt[];
  /** Decoded-cache keys of the block's txs, dropped from the cache once committed. */
  keys: string[];
  /** Dev chains: console.log lines of the block's txs, reported once committed. */
  consoleLines: string[];
}

interface SenderPending {
  nonces: Map<bigint, { key: string; cost: bigint }>;
  spend: bigint;
  /** Committed nonce + the contiguous run of admitted nonces after it. */
  next: bigint;
}

/** ABCI version string of v0.38 apps. */
const ABCI_VERSION = "2.0.0";
const ZERO_ADDRESS = new Uint8Array(20);
const QUERY_KINDS = new Set(["account", "balance", "nonce", "code", "storage"]);
const MAX_UINT64 = (1n << 64n) - 1n;

/** The app's LMDB file in `dbDir`: a path with an extension makes LMDB use it as a file, keeping dbDir a directory. */
function evmDbFile(dbDir: string): string {
  return join(dbDir, "data.mdb");
}

/** Opens (or creates) the EVM app's LMDB database in `dbDir`. */
export async function createEvmApp(opts: EvmAppOptions): Promise<EvmApplication> {
  const kv = await openKvBackend(opts.dbBackend ?? "lmdb", evmDbFile(opts.dbDir), { noSync: opts.noSync === true });
  try {
    return await EvmApplication.open(kv, opts);
  } catch (err) {
    await kv.close();
    throw err;
  }
}

/** How long block execution runs before letting the event loop serve I/O. */
const EXEC_SLICE_MS = 4;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function txProtoSize(length: number): number {
  let varint = 1;
  for (let n = length; n >= 0x80; n = Math.floor(n / 0x80)) varint++;
  return 1 + varint + length;
}

function attr(key: string, value: string, index = true) {
  return { key, value, index };
}

/**
 * The EVM application: Ethereum txs in CometBFT blocks, executed by cometh's EVM (engine/, Prague) over
 * state kept in its own LMDB database. See README.md for the design and the query paths.
 */
export class EvmApplication implements Application {
  readonly db: EvmStateDb;
  readonly log: Logger;
  readonly reader: EvmReader;
  readonly #kv: KvStore;
  readonly #opts: EvmAppOptions;
  readonly #pruning: number | "archive";
  readonly #maxNonceGap: number;
  readonly #cache: DecodedTxCache;
  readonly #devAccounts: DevAccount[];
  #settings: ChainSettings | undefined;
  #common: Common;
  #decodeCtx: DecodeContext;
  #executor: TxExecutor | undefined;
  #pending: PendingBlock | undefined;
  /** CheckTx's view of the mempool: per sender, the nonces admitted since the last commit. */
  #checkState = new Map<string, SenderPending>();
  /** Dev chains: the next proposal carries only dev cheat entries (a cheat while automine is off). */
  #cheatsOnlyProposal = false;
  /** Dev chains: where console.log lines of calls and committed txs go. */
  #consoleLog: ((lines: string[]) => void) | undefined;
  /** State sync: taking, serving and restoring snapshots (snapshots.ts). */
  readonly #snapshots: SnapshotService;

  private constructor(kv: KvStore, opts: EvmAppOptions) {
    this.#kv = kv;
    this.#opts = opts;
    this.log = opts.log;
    this.db = new EvmStateDb(kv, opts.fork);
    this.#pruning = opts.pruning ?? DEFAULT_PRUNING_KEEP_RECENT;
    if (this.#pruning !== "archive" && (!Number.isInteger(this.#pruning) || this.#pruning < 1)) {
      throw new EvmConfigError(
        `pruning ${String(this.#pruning)} is not valid. Use a number of heights ≥ 1 or "archive"`,
      );
    }
    this.#maxNonceGap = opts.maxNonceGap ?? DEFAULT_MAX_NONCE_GAP;
    this.#cache = new DecodedTxCache(opts.decodedTxCacheSize ?? 50_000);
    this.#devAccounts = deriveDevAccounts(opts.mnemonic ?? DEV_MNEMONIC, opts.devAccountCount ?? 10);
    this.#settings = this.db.settings();
    const chainId = this.#settings?.chainId ?? opts.chainId ?? DEFAULT_EVM_CHAIN_ID;
    if (this.#settings !== undefined && opts.chainId !== undefined && opts.chainId !== this.#settings.chainId) {
      throw new EvmConfigError(
        `the EVM chain id option is ${opts.chainId} but this database was created with ${this.#settings.chainId}. Use ${this.#settings.chainId} or a new data directory`,
      );
    }
    this.#common = createEvmCommon(chainId);
    this.#decodeCtx = {
      common: createTxCommon(chainId),
      chainId,
      allowUnprotectedTxs: opts.allowUnprotectedTxs ?? false,
      devChain: this.#settings?.devChain === true,
    };
    this.reader = new EvmReaderImpl({
      db: this.db,
      common: () => this.#common,
      txCommon: () => this.#decodeCtx.common,
      settings: () => this.#settings,
      pendingNonce: (addr) => this.pendingNonce(addr),
      decode: (raw) => this.#cache.decode(raw, this.#decodeCtx),
      consoleLog: () => (this.#decodeCtx.devChain === true ? this.#consoleLog : undefined),
    });
    this.#snapshots = evmSnapshotService(this.db, opts, () => this.#reloadSettings());
  }

  /** After a snapshot restore: the chain settings, chain id and fork rules of the restored state. */
  #reloadSettings(): void {
    this.#settings = this.db.settings();
    const chainId = this.#settings?.chainId ?? this.#opts.chainId ?? DEFAULT_EVM_CHAIN_ID;
    this.#common = createEvmCommon(chainId);
    this.#decodeCtx = {
      ...this.#decodeCtx,
      common: createTxCommon(chainId),
      chainId,
      devChain: this.#settings?.devChain === true,
    };
    // A decode is checked against the chain id: none made under the old one is kept.
    this.#cache.clear();
    this.#executor = undefined;
    this.#checkState = new Map();
  }

  // ---- state sync (snapshots.ts) -------------------------------------------------------------------

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

  /** Wraps an open store (the app closes it on close()). */
  static async open(kv: KvStore, opts: EvmAppOptions): Promise<EvmApplication> {
    return new EvmApplication(kv, opts);
  }

  /** What a read worker (readPool.ts) needs to open this app's database and read it as `reader` does. */
  readWorkerSetup(): ReadWorkerSetup {
    return {
      dbFile: evmDbFile(this.#opts.dbDir),
      noSync: this.#opts.noSync === true,
      chainId: this.#decodeCtx.chainId,
      allowUnprotectedTxs: this.#opts.allowUnprotectedTxs ?? false,
    };
  }

  /** The dev accounts (funded at genesis when app_state funds nobody), with private keys. */
  devAccounts(): DevAccount[] {
    return this.#devAccounts;
  }

  chainId(): bigint {
    return this.#decodeCtx.chainId;
  }

  /** The chain settings in force (undefined before InitChain). */
  settings(): ChainSettings | undefined {
    return this.#settings;
  }

  /**
   * Dev chains: the next PrepareProposal takes only dev cheat entries from the mempool (a cheat made
   * while automine is off must not mine the txs waiting for evm_mine).
   */
  setCheatsOnlyProposal(on: boolean): void {
    this.#cheatsOnlyProposal = on;
  }

  /**
   * Dev chains: Hardhat console.log lines go to `listener`: a call's (eth_call, eth_estimateGas) when
   * it runs, a block's txs' once the block is committed.
   */
  onConsoleLog(listener: (lines: string[]) => void): void {
    this.#consoleLog = listener;
  }

  /** Forgets CheckTx's view of the pending txs (the mempool rechecks what it keeps right after). */
  resetCheckState(): void {
    this.#checkState = new Map();
  }

  /** The fee market parameters in force (genesis `feemarket.params`; x/feemarket defaults before InitChain). */
  feeMarketParams(): FeeMarketParams {
    return this.#settings?.feeMarket ?? defaultFeeMarketParams();
  }

  // ---- ABCI ---------------------------------------------------------------------------------------

  async info(): Promise<InfoResponse> {
    const m = this.db.meta();
    return {
      data: JSON.stringify({ evm_chain_id: this.#decodeCtx.chainId.toString() }),
      version: ABCI_VERSION,
      appVersion: 0n,
      // Only genesis state (height initial_height-1): CometBFT must still see 0 and run InitChain.
      lastBlockHeight:
        m === undefined || this.#settings === undefined || m.height < this.#settings.initialHeight ? 0 : m.height,
      lastBlockAppHash: m?.appHash ?? EMPTY_BYTES,
    };
  }

  async initChain(req: InitChainRequest): Promise<InitChainResponse> {
    const existing = this.db.meta();
    if (existing !== undefined && existing.height >= req.initialHeight) {
      throw new EvmAppSequenceError(
        `InitChain called but the EVM state is already at height ${existing.height}. Remove the app's data directory to start a new chain`,
      );
    }
    const genesis = parseEvmGenesis(req.appStateBytes, this.#devAccounts);
    // A fork pays fees to Anvil's default coinbase, the zero address, read from the source once here:
    // a proposer's address would be a new account to fetch for each new home (no offline restart).
    const coinbase =
      this.#opts.coinbase !== undefined
        ? hexToBytes(this.#opts.coinbase)
        : (genesis.coinbase ?? (this.db.fork === undefined ? undefined : ZERO_ADDRESS));
    if (coinbase !== undefined && coinbase.length !== 20) {
      throw new EvmConfigError(`coinbase "${this.#opts.coinbase}" is not a 20-byte hex address. Use a 0x address`);
    }
    if (this.db.fork !== undefined && coinbase !== undefined) this.db.forkAccount(coinbase);
    const settings: ChainSettings = {
      chainId: this.#decodeCtx.chainId,
      initialHeight: req.initialHeight,
      maxGas: req.consensusParams.block.maxGas,
      coinbase,
      feeMarket: genesis.feeMarket,
      ...(genesis.devChain ? { devChain: true } : {}),
      evidenceMaxAgeNumBlocks: req.consensusParams.evidence.maxAgeNumBlocks,
    };
    if (genesis.devChain && this.#pruning !== "archive") {
      throw new EvmConfigError(
        'a dev chain needs every height\'s state for snapshots and reverts. Set pruning = "nothing" in app.toml',
      );
    }
    if (genesis.devChain && (this.#opts.minRetainBlocks ?? 0) > 0) {
      throw new EvmConfigError(
        "a dev chain needs every block for reverts and resets. Set min-retain-blocks = 0 in app.toml",
      );
    }
    const accounts = new Map<string, GenesisAccount>();
    const fork = this.db.fork;
    // A fork takes the source's contracts as they are: no preinstalls over them, but the EIP-2935
    // history contract, which is the fork's own (EvmStateDb.forkAccount).
    if (genesis.preinstalls) {
      for (const p of PREINSTALLS) {
        const address = hexToBytes(p.address) as Uint8Array;
        if (fork !== undefined && !equalBytes(address, HISTORY_STORAGE_ADDRESS)) continue;
        accounts.set(bytesToHex(address), {
          address,
          balance: 0n,
          nonce: 0n,
          code: hexToBytes(p.code) as Uint8Array,
          storage: [],
        });
      }
    }
    for (const a of genesis.accounts) accounts.set(bytesToHex(a.address), a);
    const diff: StateDiff = { accounts: [], storage: [], codes: [] };
    for (const a of accounts.values()) {
      // On a fork, an account genesis gives no code and nonce (the dev accounts) keeps the source's
      // nonce and code and gets the balance, as Anvil funds its dev accounts on a fork.
      const remote =
        fork !== undefined && a.code.length === 0 && a.nonce === 0n ? this.db.forkAccount(a.address) : undefined;
      if (remote?.exists) {
        diff.accounts.push({ addr: a.address, account: { ...remote, balance: a.balance } });
        continue;
      }
      const codeHash = a.code.length === 0 ? KECCAK256_NULL : keccak256(a.code);
      if (a.code.length > 0) diff.codes.push({ hash: codeHash, code: a.code });
      diff.accounts.push({
        addr: a.address,
        account: { exists: true, nonce: a.nonce, balance: a.balance, codeHash, incarnation: 0 },
      });
      for (const s of a.storage) {
        const value = stripZeros(s.value);
        if (value.length > 0) diff.storage.push({ addr: a.address, incarnation: 0, slot: s.slot, value });
      }
    }
    const height = req.initialHeight - 1;
    const appHash = chainAppHash(new Uint8Array(32), height, diffHash(diff));
    const meta: AppMeta = {
      height,
      appHash,
      earliestStateHeight: height,
      feeMarket: { baseFee: settings.feeMarket.baseFee, blockGasWanted: 0n },
    };
    this.db.beginCommit();
    try {
      await this.#kv.transaction(() => {
        this.db.putSettings(settings);
        this.db.writeHeight(meta, diff, undefined, [], settings);
      });
      this.db.endCommit(meta, diff);
    } catch (err) {
      this.db.endCommit(undefined, undefined);
      throw err;
    }
    this.#settings = settings;
    this.#decodeCtx.devChain = settings.devChain === true;
    this.log.info(
      { height, accounts: accounts.size, appHash: bytesToHex(appHash), chainId: settings.chainId.toString() },
      "EVM genesis state written",
    );
    return { validators: [], appHash };
  }

  /**
   * The sender a read process of this node recovered (SnapshotReader.senderOf) from the tx it passes to
   * this process with CometBFT key `key` (an eth_sendRawTransaction it forwards): CheckTx of those bytes
   * takes it instead of recovering the sender again (DecodedTxCache.hintSender). Only the node's own
   * processes call this.
   */
  hintSender(key: string, sender: Uint8Array): void {
    this.#cache.hintSender(key, sender);
  }

  async checkTx(req: CheckTxRequest): Promise<CheckTxResponse> {
    let d: DecodedTx | undefined;
    try {
      // A dev chain's cheat needs no gas and no sender checks.
      if (this.#devCheat(req.tx) !== undefined) return checkTxOk(0n);
      d = this.#cache.decode(req.tx, this.#decodeCtx);
      if (this.db.fork !== undefined) await this.#warmFork(d);
      this.#admit(d);
      // Cosmos EVM's ante handler: the gas limit cannot be trusted for mempool accounting, since
      // unused gas is refunded, so an operator may cap what CheckTx reports.
      const cap = this.#opts.maxTxGasWanted ?? 0n;
      return checkTxOk(cap > 0n && d.gasLimit > cap ? cap : d.gasLimit);
    } catch (err) {
      if (err instanceof ForkSourceError) return failedResult(err, d?.gasLimit ?? 0n);
      if (!(err instanceof InvalidEthTxError)) throw err;
      return {
        code: err.code,
        data: EMPTY_BYTES,
        log: err.message,
        info: "",
        gasWanted: d?.gasLimit ?? 0n,
        gasUsed: 0n,
        events: [],
        codespace: CHECK_TX_CODESPACE,
      };
    }
  }

  /** Stateful admission (Cosmos EVM ante handler order), then records the nonce as pending. */
  #admit(d: DecodedTx): void {
    const settings = this.#requireSettings();
    if (settings.maxGas > 0n && d.gasLimit > settings.maxGas) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.outOfGas,
        // geth's txpool: core.ErrGasLimit.
        "exceeds block gas limit",
      );
    }
    const meta = this.db.meta() as AppMeta;
    const baseFee = baseFeeWei(
      nextBlockBaseFee(meta.height + 1, settings.feeMarket, meta.feeMarket, settings.maxGas, meta.nextBaseFee),
    );
    if (d.maxFeePerGas < baseFee) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.insufficientFee,
        `max fee per gas less than block base fee (${d.maxFeePerGas} < ${baseFee}): insufficient fee. Raise maxFeePerGas to at least ${baseFee}`,
      );
    }
    const acct = this.db.readAccount(d.from, meta.height);
    if (
      d.impersonated !== true &&
      acct.exists &&
      !equalBytes(acct.codeHash, KECCAK256_NULL) &&
      !isDelegation(this.db.readCode(acct.codeHash))
    ) {
      throw new InvalidEthTxError(CHECK_TX_CODES.invalidType, `sender not an eoa: address 0x${d.fromHex}`);
    }
    if (d.nonce < acct.nonce) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.invalidSequence,
        `nonce too low: next nonce ${acct.nonce}, tx nonce ${d.nonce}`,
      );
    }
    const pending = this.#checkState.get(d.fromHex);
    const taken = pending?.nonces.get(d.nonce);
    if (taken !== undefined) {
      if (taken.key === d.key) return;
      throw new InvalidEthTxError(
        CHECK_TX_CODES.invalidSequence,
        `replacement transaction underpriced: nonce ${d.nonce} of 0x${d.fromHex} is already pending and this mempool does not replace txs. Wait for it to be included, or use nonce ${this.pendingNonce(d.from)}`,
      );
    }
    const next = pending?.next ?? acct.nonce;
    if (d.nonce >= next + BigInt(this.#maxNonceGap)) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.invalidSequence,
        `nonce too high: next nonce ${next}, tx nonce ${d.nonce}; txs may skip at most ${this.#maxNonceGap - 1} nonces and wait for the gap to be filled`,
      );
    }
    const spend = pending?.spend ?? 0n;
    // geth's txpool texts (ValidateTransactionWithState), with the pending txs' cost when there are some.
    if (acct.balance < d.cost) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.insufficientFunds,
        `insufficient funds for gas * price + value: balance ${acct.balance}, tx cost ${d.cost}, overshot ${d.cost - acct.balance}`,
      );
    }
    if (acct.balance < spend + d.cost) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.insufficientFunds,
        `insufficient funds for gas * price + value: balance ${acct.balance}, queued cost ${spend}, tx cost ${d.cost}, overshot ${spend + d.cost - acct.balance}`,
      );
    }
    const p = pending ?? { nonces: new Map(), spend: 0n, next: acct.nonce };
    p.nonces.set(d.nonce, { key: d.key, cost: d.cost });
    p.spend += d.cost;
    while (p.nonces.has(p.next)) p.next++;
    if (pending === undefined) this.#checkState.set(d.fromHex, p);
  }

  /**
   * The next nonce for `address` counting txs admitted by CheckTx since the last block (contiguous
   * from the committed nonce; queued future nonces after a gap are not counted), for
   * eth_getTransactionCount(…, "pending").
   */
  pendingNonce(address: Uint8Array): bigint {
    const meta = this.db.meta();
    if (meta === undefined) return 0n;
    const committed = this.db.readAccount(address, meta.height).nonce;
    const p = this.#checkState.get(bytesToHex(address));
    return p === undefined || p.next < committed ? committed : p.next;
  }

  async prepareProposal(req: PrepareProposalRequest): Promise<{ txs: Uint8Array[] }> {
    const settings = this.#requireSettings();
    const meta = this.db.meta() as AppMeta;
    const baseFee = baseFeeWei(
      nextBlockBaseFee(req.height, settings.feeMarket, meta.feeMarket, settings.maxGas, meta.nextBaseFee),
    );
    const maxGas = settings.maxGas;
    const minTip = this.#opts.minTip ?? 0n;
    const out: Uint8Array[] = [];
    let bytes = 0;
    let gas = 0n;
    const senders = new Map<
      string,
      { next: bigint; balance: bigint; blocked: boolean; queued: Map<bigint, DecodedTx> }
    >();

    const take = (d: DecodedTx, s: { next: bigint; balance: bigint; blocked: boolean }): boolean => {
      const size = txProtoSize(d.raw.length);
      if (req.maxTxBytes >= 0 && bytes + size > req.maxTxBytes) return false;
      if (maxGas > -1n && gas + d.gasLimit > maxGas) return false;
      if (d.cost > s.balance) return false;
      bytes += size;
      gas += d.gasLimit;
      s.balance -= d.cost;
      s.next++;
      out.push(d.raw);
      return true;
    };

    const cheatsOnly = this.#cheatsOnlyProposal;
    this.#cheatsOnlyProposal = false;
    for (const raw of req.txs) {
      if (isDevEntry(raw)) {
        let cheat: DevCheat | undefined;
        try {
          cheat = this.#devCheat(raw);
        } catch {
          continue;
        }
        if (cheat !== undefined) {
          const size = txProtoSize(raw.length);
          if (req.maxTxBytes >= 0 && bytes + size > req.maxTxBytes) continue;
          bytes += size;
          out.push(raw);
          continue;
        }
      }
      if (cheatsOnly) continue;
      let d: DecodedTx;
      try {
        d = this.#cache.decode(raw, this.#decodeCtx);
      } catch {
        continue;
      }
      if (d.maxFeePerGas < baseFee) continue;
      // Below [evm] min-tip: left out, and the sender's later nonces wait behind it (the gap stays).
      if (minTip > 0n && effectiveTip(d, baseFee) < minTip) continue;
      let s = senders.get(d.fromHex);
      if (s === undefined) {
        const acct = this.db.readAccount(d.from, meta.height);
        s = { next: acct.nonce, balance: acct.balance, blocked: false, queued: new Map() };
        senders.set(d.fromHex, s);
      }
      if (s.blocked || d.nonce < s.next) continue;
      if (d.nonce > s.next) {
        if (!s.queued.has(d.nonce)) s.queued.set(d.nonce, d);
        continue;
      }
      if (!take(d, s)) {
        s.blocked = true;
        continue;
      }
      // Txs that arrived before the one filling their gap follow it now.
      for (let q = s.queued.get(s.next); q !== undefined; q = s.queued.get(s.next)) {
        s.queued.delete(q.nonce);
        if (!take(q, s)) {
          s.blocked = true;
          break;
        }
      }
    }
    return { txs: out };
  }

  async processProposal(req: ProcessProposalRequest): Promise<"accept" | "reject"> {
    for (const raw of req.txs) {
      try {
        if (this.#devCheat(raw) !== undefined) continue;
        this.#cache.decode(raw, this.#decodeCtx);
      } catch (err) {
        if (!(err instanceof InvalidEthTxError)) throw err;
        this.log.info({ height: req.height, reason: err.message }, "rejecting proposal with an invalid Ethereum tx");
        return "reject";
      }
    }
    return "accept";
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    const settings = this.#requireSettings();
    const meta = this.db.meta() as AppMeta;
    if (req.height !== meta.height + 1) {
      throw new EvmAppSequenceError(
        `FinalizeBlock for height ${req.height} but the EVM state is at height ${meta.height}. Blocks must be finalized in order`,
      );
    }
    const fm = settings.feeMarket;
    // A dev chain's setNextBlockBaseFeePerGas fixes this block's base fee.
    const baseFeeDec = nextBlockBaseFee(req.height, fm, meta.feeMarket, settings.maxGas, meta.nextBaseFee);
    const baseFee = baseFeeWei(baseFeeDec);
    const coinbase = settings.coinbase ?? (req.proposerAddress.length === 20 ? req.proposerAddress : ZERO_ADDRESS);
    let blockSettings: ChainSettings | undefined;
    let nextBaseFee: bigint | undefined;
    const ctx: ExecBlockContext = {
      height: req.height,
      timestamp: req.time / 1_000_000_000n,
      coinbase,
      baseFee,
      gasLimit: settings.maxGas > 0n ? settings.maxGas : MAX_UINT64,
      hash: req.hash,
    };
    const exec = await this.#blockExecutor();
    exec.begin(ctx, this.db.reader(meta.height), fm.minGasMultiplier);
    const consoleOn = this.#consoleLog !== undefined && settings.devChain === true;
    if (consoleOn) exec.enableConsoleLog();

    const txResults: ExecTxResult[] = [];
    const receipts: EvmReceipt[] = [];
    const bloom = new Uint8Array(256);
    const keys: string[] = [];
    let logIndex = 0;
    let sliceStart = performance.now();
    for (let i = 0; i < req.txs.length; i++) {
      // A block of many txs runs for tens of ms; RPC requests (CheckTx above all) are served in
      // between instead of after it (CometBFT's RPC goroutines do not wait for FinalizeBlock either).
      if (performance.now() - sliceStart > EXEC_SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
      const raw = req.txs[i] as Uint8Array;
      let d: DecodedTx;
      try {
        const cheat = this.#devCheat(raw);
        if (cheat !== undefined) {
          const changed = applyDevCheat(exec, cheat, blockSettings ?? settings);
          if (changed.settings !== undefined) blockSettings = changed.settings;
          if (changed.nextBaseFee !== undefined) nextBaseFee = changed.nextBaseFee;
          txResults.push(cheatResult(cheat));
          continue;
        }
        d = this.#cache.decode(raw, this.#decodeCtx);
      } catch (err) {
        if (!(err instanceof InvalidEthTxError)) throw err;
        txResults.push(failedResult(err, 0n));
        continue;
      }
      keys.push(d.key);
      const o = this.db.fork === undefined ? exec.apply(d) : applyOnFork(exec, d);
      if (o instanceof ForkSourceError) {
        txResults.push(failedResult(o, d.gasLimit));
        continue;
      }
      if (o.kind === "invalid") {
        txResults.push(failedResult(o.error, d.gasLimit));
        continue;
      }
      const txIndex = receipts.length;
      const logs = o.logs.map((l) => ({ ...l, logIndex: logIndex++ }));
      const receipt: EvmReceipt = {
        height: req.height,
        txIndex,
        cometIndex: i,
        txHash: d.hash,
        rawTx: d.raw,
        type: d.type,
        from: d.from,
        to: d.to,
        nonce: d.nonce,
        gasLimit: d.gasLimit,
        contractAddress: o.contractAddress,
        status: o.status,
        gasUsed: o.gasUsed,
        cumulativeGasUsed: o.cumulativeGasUsed,
        effectiveGasPrice: o.effectiveGasPrice,
        logs,
        logsBloom: o.logsBloom,
        vmError: o.vmError,
        returnData: o.returnData,
      };
      receipts.push(receipt);
      for (let b = 0; b < 256; b++) bloom[b] = (bloom[b] as number) | (o.logsBloom[b] as number);
      txResults.push({
        code: 0,
        data: EMPTY_BYTES,
        log: "",
        info: "",
        gasWanted: d.gasLimit,
        gasUsed: o.gasUsed,
        events: txEvents(receipt, d, req),
        codespace: "",
      });
    }

    const diff = exec.overlay.diff();
    const appHash = chainAppHash(meta.appHash, req.height, diffHash(diff, HISTORY_STORAGE_ADDRESS));
    const feeMarket = nextFeeMarketState(fm, meta.feeMarket, baseFeeDec, exec.gasWanted, exec.gasUsed);
    const block: EvmBlock = {
      height: req.height,
      hash: req.hash,
      parentHash: parentHashOf(req.block?.header?.lastBlockId?.hash, () => this.db.blockHash(req.height - 1)),
      timestamp: ctx.timestamp,
      timeNs: req.time,
      proposer: req.proposerAddress,
      coinbase,
      baseFee,
      gasLimit: ctx.gasLimit,
      gasUsed: exec.gasUsed,
      gasWanted: exec.gasWanted,
      logsBloom: bloom,
      // Not part of consensus: computed when first read (EvmStateDb.block), off the block path.
      transactionsRoot: receipts.length === 0 ? EMPTY_TRIE_ROOT : EMPTY_BYTES,
      receiptsRoot: receipts.length === 0 ? EMPTY_TRIE_ROOT : EMPTY_BYTES,
      appHash,
      txHashes: receipts.map((r) => r.txHash),
    };
    this.#pending = {
      meta: {
        height: req.height,
        appHash,
        earliestStateHeight: meta.earliestStateHeight,
        feeMarket,
        ...(nextBaseFee === undefined ? {} : { nextBaseFee }),
      },
      settings: blockSettings,
      consoleLines: consoleOn ? exec.takeConsoleLogs() : [],
      diff,
      block,
      receipts,
      keys,
    };
    const events: AbciEvent[] = [];
    if (baseFeeDec !== undefined) {
      events.push({
        type: "fee_market",
        attributes: [attr("base_fee", formatDec(baseFeeDec)), attr("mode", "BeginBlock")],
      });
      events.push({
        type: "evm_fee_market",
        attributes: [attr("base_fee", baseFee.toString()), attr("mode", "BeginBlock")],
      });
    }
    events.push({
      type: "block_bloom",
      attributes: [attr("bloom", `0x${bytesToHex(bloom)}`, false), attr("mode", "EndBlock")],
    });
    events.push({
      type: "block_gas",
      attributes: [
        attr("height", String(req.height)),
        attr("amount", feeMarket.blockGasWanted.toString()),
        attr("mode", "EndBlock"),
      ],
    });
    return { events, txResults, validatorUpdates: [], appHash };
  }

  async commit(): Promise<CommitResponse> {
    const p = this.#pending;
    if (p === undefined) return { retainHeight: 0 };
    const prev = this.db.meta() as AppMeta;
    const h = p.meta.height;
    const settings = p.settings ?? this.#requireSettings();
    const retainHeight = blockRetentionHeight(h, {
      minRetainBlocks: this.#opts.minRetainBlocks ?? 0,
      evidenceMaxAgeNumBlocks: settings.evidenceMaxAgeNumBlocks ?? 0n,
      snapshotRetainBlocks: this.#opts.snapshotRetainBlocks ?? 0,
    });
    // State older than the parent of the oldest retained block is of no use: no block to read it at.
    const windowEarliest =
      this.#pruning === "archive"
        ? prev.earliestStateHeight
        : Math.max(prev.earliestStateHeight, h - this.#pruning + 1);
    const earliest = retainHeight > 0 ? Math.max(windowEarliest, retainHeight - 1) : windowEarliest;
    const meta: AppMeta = { ...p.meta, earliestStateHeight: earliest };
    this.db.beginCommit();
    try {
      await this.#kv.transaction(() => {
        this.db.writeHeight(meta, p.diff, p.block, p.receipts, settings);
        if (earliest > prev.earliestStateHeight) this.db.prune(prev.earliestStateHeight + 1, earliest);
        if (retainHeight > 0) this.db.pruneHistory(retainHeight);
        if (p.settings !== undefined) this.db.putSettings(p.settings);
      });
      this.db.endCommit(meta, p.diff);
      if (p.settings !== undefined) this.#settings = p.settings;
    } catch (err) {
      this.db.endCommit(undefined, undefined);
      throw err;
    }
    this.#pending = undefined;
    this.#snapshots.afterCommit(meta.height, meta.appHash);
    if (p.consoleLines.length > 0) this.#consoleLog?.(p.consoleLines);
    if (this.db.fork !== undefined) this.flushForkCache();
    // The mempool rechecks what is left after each block; CheckTx rebuilds its view from those rechecks.
    this.#checkState = new Map();
    // A dev chain keeps the last committed decodes: evm_revert makes their bytes sendable again.
    if (settings.devChain === true) for (const k of p.keys) this.#cache.retire(k);
    else for (const k of p.keys) this.#cache.delete(k);
    return { retainHeight };
  }

  async query(req: QueryRequest): Promise<QueryResponse> {
    const base = {
      index: 0n,
      key: req.data,
      proofOps: undefined,
      info: "",
    };
    const latest = this.db.latestHeight();
    const height = req.height === 0 ? latest : req.height;
    const fail = (code: number, log: string): QueryResponse => ({
      ...base,
      code,
      log,
      value: EMPTY_BYTES,
      height,
      codespace: CHECK_TX_CODESPACE,
    });
    const parts = req.path.split("/").filter((s) => s !== "");
    if (parts[0] !== "evm" || parts.length < 2) {
      return fail(6, `unknown query path ${req.path}. Use /evm/account|balance|nonce|code|storage/<0xaddress>`);
    }
    const kind = parts[1] as string;
    if (!QUERY_KINDS.has(kind)) {
      return fail(6, `unknown query path ${req.path}. Use /evm/account|balance|nonce|code|storage/<0xaddress>`);
    }
    const addrText = parts[2] ?? new TextDecoder().decode(req.data);
    let address = hexToBytes(addrText.trim());
    if ((address === undefined || address.length !== 20) && req.data.length === 20 && parts[2] === undefined) {
      address = req.data;
    }
    if (address === undefined || address.length !== 20) {
      return fail(7, `invalid address "${addrText}". Put a 0x-prefixed 20-byte address in the path or in data`);
    }
    let reader: ReturnType<EvmStateDb["reader"]>;
    try {
      reader = this.db.reader(height);
    } catch (err) {
      if (err instanceof StateUnavailableError) return fail(26, err.message);
      throw err;
    }
    const acct = reader.account(address);
    const enc = new TextEncoder();
    let value: Uint8Array;
    switch (kind) {
      case "account":
        value = enc.encode(
          JSON.stringify({
            address: toChecksumAddress(address),
            nonce: acct.nonce.toString(),
            balance: acct.balance.toString(),
            code_hash: `0x${bytesToHex(acct.codeHash)}`,
          }),
        );
        break;
      case "balance":
        value = enc.encode(acct.balance.toString());
        break;
      case "nonce":
        value = enc.encode(acct.nonce.toString());
        break;
      case "code":
        value = acct.exists ? reader.code(acct.codeHash) : EMPTY_BYTES;
        break;
      case "storage": {
        const slot = hexToBytes(parts[3] ?? "");
        if (slot === undefined || slot.length > 32) {
          return fail(7, `invalid storage slot "${parts[3] ?? ""}". Use /evm/storage/<0xaddress>/<0xslot>`);
        }
        value = setLengthLeft(reader.storage(address, acct.incarnation, setLengthLeft(slot, 32)), 32);
        break;
      }
      default:
        return fail(6, `unknown query path ${req.path}. Use /evm/account|balance|nonce|code|storage/<0xaddress>`);
    }
    return { ...base, code: 0, log: "", value, height, codespace: "" };
  }

  async close(): Promise<void> {
    try {
      await this.db.fork?.close();
    } finally {
      await this.#kv.close();
    }
  }

  /**
   * A fork: runs the tx as a call on the latest state before admitting it, so every account, slot
   * and code it reads is fetched from the source (and kept) now. Block execution then finds them
   * kept and does not wait on the source; a source that cannot be reached rejects the tx here with
   * its reason instead of failing a block. The call's own outcome (revert, out of gas) is not looked at.
   */
  async #warmFork(d: DecodedTx): Promise<void> {
    const args = {
      from: d.from,
      ...(d.to === undefined ? {} : { to: d.to }),
      gas: d.gasLimit,
      value: d.value,
      data: d.tx.data,
    };
    try {
      await this.reader.call(args, { height: this.db.latestHeight() });
    } catch (err) {
      if (err instanceof ForkSourceError) throw err;
    }
  }

  /** After the fork's source is written to, flushes the reads it kept to its disk cache. */
  flushForkCache(): void {
    try {
      this.db.fork?.flush(true);
    } catch (err) {
      this.log.warn({ err }, "cannot write the fork cache");
    }
  }

  /**
   * Dev chains (anvil_reset with `forking`): with the chain already rolled back to its genesis, reads
   * fall back to `fork` (undefined: no source) from now on; the previous source is closed.
   */
  async replaceFork(fork: ForkSource | undefined): Promise<void> {
    const old = this.db.fork;
    this.db.setFork(fork);
    this.reader.forgetResults();
    this.#cache.clear();
    this.#checkState = new Map();
    if (old !== undefined && old !== fork) await old.close();
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): rolls the state, blocks, receipts, settings and fee market
   * back to what they were after `height`, durably. Only between blocks (consensus paused).
   */
  async rollbackTo(to: number): Promise<void> {
    const settings = this.#requireSettings();
    if (settings.devChain !== true) throw new EvmAppSequenceError("only a dev chain can be rolled back");
    // Height 0 is CometBFT's "no block yet": the genesis state, kept at initial_height - 1 (a fork's
    // genesis is at the fork block).
    const height = Math.max(to, settings.initialHeight - 1);
    const meta = this.db.meta() as AppMeta;
    if (height > meta.height) {
      throw new EvmAppSequenceError(`cannot roll back to height ${height}: the EVM state is at ${meta.height}`);
    }
    const kept = this.db.devRecord(height);
    if (kept === undefined) throw new StateUnavailableError(height, meta.earliestStateHeight, meta.height);
    this.db.beginCommit();
    try {
      await this.#kv.transaction(() => this.db.rollbackTo(height));
    } catch (err) {
      this.db.endCommit(undefined, undefined);
      throw err;
    }
    this.db.endRollback(kept.meta);
    this.#settings = kept.settings;
    this.#pending = undefined;
    this.#checkState = new Map();
    // The decoded txs stay (txDecode.ts DecodedTxCache): a decode depends on the bytes and the chain
    // id, not on state, and the txs the revert makes sendable again are then not decoded again.
    this.#cheatsOnlyProposal = false;
    this.reader.forgetResults();
  }

  // ---- internals ----------------------------------------------------------------------------------

  #requireSettings(): ChainSettings {
    if (this.#settings === undefined || this.db.meta() === undefined) {
      // Before InitChain, and on a node that joins by state sync until the snapshot is restored (CheckTx
      // of txs sent to it meanwhile lands here).
      throw new EvmAppSequenceError(
        "the EVM app has no state yet: it waits for InitChain, or for state sync to restore a snapshot",
      );
    }
    return this.#settings;
  }

  /**
   * The cheat a dev entry carries; undefined for anything else (an Ethereum tx, an impersonated send).
   * Throws InvalidEthTxError for a dev entry on a chain that is not a dev chain, or a malformed one.
   */
  #devCheat(raw: Uint8Array): DevCheat | undefined {
    if (!isDevEntry(raw)) return undefined;
    if (this.#decodeCtx.devChain !== true) throw notOnDevChain();
    const e = decodeDevEntry(raw);
    return e.op === "send" ? undefined : e;
  }

  async #blockExecutor(): Promise<TxExecutor> {
    if (this.#executor === undefined) {
      this.#executor = new TxExecutor(this.#common.chainId(), this.db.latestReader(), (n) =>
        this.db.blockHash(Number(n)),
      );
    }
    return this.#executor;
  }
}

/**
 * A block's parent hash: CometBFT's last block id; the block at initial_height has none, and shows
 * BLOCKHASH's answer for the height below (a fork's fork block, from the source; else zero bytes).
 */
function parentHashOf(lastBlockHash: Uint8Array | undefined, below: () => Uint8Array): Uint8Array {
  if (lastBlockHash !== undefined && lastBlockHash.length === 32) return lastBlockHash;
  try {
    return below();
  } catch (err) {
    // A fork's source that cannot tell its fork block's hash never fails a block: it shows zero.
    if (err instanceof ForkSourceError) return new Uint8Array(32);
    throw err;
  }
}

/**
 * Applies a dev cheat to the block's overlay (journaled like any write, so it lands in the diff and the
 * app hash); returns new settings or the next base fee when the cheat changes them.
 */
function applyDevCheat(
  exec: TxExecutor,
  cheat: DevCheat,
  settings: ChainSettings,
): { settings?: ChainSettings; nextBaseFee?: bigint } {
  const o = exec.overlay;
  switch (cheat.op) {
    case "setBalance": {
      const a = o.storedAccount(cheat.address);
      o.setStoredAccount(cheat.address, { ...a, exists: true, balance: cheat.value });
      return {};
    }
    case "setNonce": {
      const a = o.storedAccount(cheat.address);
      o.setStoredAccount(cheat.address, { ...a, exists: true, nonce: cheat.value });
      return {};
    }
    case "setCode":
      o.setCode(cheat.address, cheat.code);
      return {};
    case "setStorageAt": {
      const a = o.storedAccount(cheat.address);
      if (!a.exists) o.setStoredAccount(cheat.address, { ...a, exists: true });
      o.setStorageValue(cheat.address, cheat.slot, stripZeros(cheat.value));
      return {};
    }
    case "loadState":
      for (const acct of cheat.accounts) {
        const cur = o.storedAccount(acct.address);
        // A loaded account replaces the old one whole: its other storage slots stop being visible.
        o.setStoredAccount(acct.address, {
          ...cur,
          exists: true,
          nonce: acct.nonce,
          balance: acct.balance,
          incarnation: cur.exists || cur.incarnation > 0 ? cur.incarnation + 1 : cur.incarnation,
        });
        o.setCode(acct.address, acct.code);
        for (const s of acct.storage) o.setStorageValue(acct.address, s.slot, stripZeros(s.value));
      }
      return {};
    case "setCoinbase":
      return { settings: { ...settings, coinbase: cheat.address } };
    case "setMinGasPrice":
      return { settings: { ...settings, feeMarket: { ...settings.feeMarket, minGasPrice: cheat.value * DEC_ONE } } };
    case "setBlockGasLimit":
      return { settings: { ...settings, maxGas: cheat.value } };
    case "setNextBaseFee":
      return { nextBaseFee: cheat.value };
  }
}

/** The result of a dev cheat entry: success, no gas, an event naming what it did. */
function cheatResult(cheat: DevCheat): ExecTxResult {
  const attributes = [attr("op", cheat.op)];
  if ("address" in cheat) attributes.push(attr("address", toChecksumAddress(cheat.address)));
  return {
    code: 0,
    data: EMPTY_BYTES,
    log: "",
    info: "",
    gasWanted: 0n,
    gasUsed: 0n,
    events: [{ type: "dev_cheat", attributes }],
    codespace: "",
  };
}

/** What the proposer earns per gas: min(maxPriorityFeePerGas, maxFeePerGas − baseFee). */
function effectiveTip(d: DecodedTx, baseFee: bigint): bigint {
  const headroom = d.maxFeePerGas - baseFee;
  if (d.maxPriorityFeePerGas < headroom) return d.maxPriorityFeePerGas;
  return headroom;
}

function checkTxOk(gasWanted: bigint): CheckTxResponse {
  return {
    code: CHECK_TX_CODES.ok,
    data: EMPTY_BYTES,
    log: "",
    info: "",
    gasWanted,
    gasUsed: 0n,
    events: [],
    codespace: "",
  };
}

/**
 * A tx of a forked chain: a source that fails in the middle of it (a key CheckTx's warm-up did not
 * read) undoes what the tx wrote and fails the tx alone (forkTxFailed), never the block.
 */
function applyOnFork(exec: TxExecutor, d: DecodedTx): ReturnType<TxExecutor["apply"]> | ForkSourceError {
  const mark = exec.overlay.mark();
  try {
    const o = exec.apply(d);
    exec.overlay.keep(mark);
    return o;
  } catch (err) {
    if (!(err instanceof ForkSourceError)) throw err;
    exec.overlay.unwindTo(mark);
    return err;
  }
}

/**
 * A tx refused or failed before it ran (an ante check), with no state change and no receipt. A fork whose
 * source cannot be reached for what the tx reads fails it with Cosmos SDK's ErrInternal, code 1.
 */
function failedResult(err: InvalidEthTxError | ForkSourceError, gasWanted: bigint): ExecTxResult & CheckTxResponse {
  return {
    code: err instanceof InvalidEthTxError ? err.code : 1,
    data: EMPTY_BYTES,
    log: err.message,
    info: "",
    gasWanted,
    gasUsed: 0n,
    events: [],
    codespace: CHECK_TX_CODESPACE,
  };
}

/**
 * Cosmos EVM's per-tx events: the ante handler's `ethereum_tx` (hash, index), the msg server's
 * `ethereum_tx` (amount, hashes, index, gas used, recipient, failure) and `message` (module, sender,
 * type), plus Ethermint's `tx_log` (one `txLog` JSON per log, not indexed).
 */
function txEvents(r: EvmReceipt, d: DecodedTx, req: FinalizeBlockRequest): AbciEvent[] {
  const ethHash = `0x${bytesToHex(r.txHash)}`;
  const index = String(r.txIndex);
  const execAttrs = [
    attr("amount", d.value.toString()),
    attr("ethereumTxHash", ethHash),
    attr("txIndex", index),
    attr("txGasUsed", r.gasUsed.toString()),
    // CometBFT tx hash, lowercase hex as Cosmos EVM writes it (hex.EncodeToString).
    attr("txHash", d.key),
  ];
  if (r.to !== undefined) execAttrs.push(attr("recipient", toChecksumAddress(r.to)));
  if (r.status === 0) execAttrs.push(attr("ethereumTxFailed", r.vmError));
  const events: AbciEvent[] = [
    { type: "ethereum_tx", attributes: [attr("ethereumTxHash", ethHash), attr("txIndex", index)] },
    { type: "ethereum_tx", attributes: execAttrs },
  ];
  if (r.logs.length > 0) {
    const blockHash = `0x${bytesToHex(req.hash)}`;
    events.push({
      type: "tx_log",
      attributes: r.logs.map((l) => attr("txLog", txLogJson(l, r, ethHash, blockHash), false)),
    });
  }
  events.push({
    type: "message",
    attributes: [attr("module", "evm"), attr("sender", toChecksumAddress(r.from)), attr("txType", String(r.type))],
  });
  return events;
}

/**
 * Ethermint's `txLog` JSON of one log (keys in its order; the same text as JSON.stringify of that
 * object), written out: hex and base64 need no escaping, and this runs for every log of every block.
 */
function txLogJson(l: EvmLogRecord, r: EvmReceipt, ethHash: string, blockHash: string): string {
  let topics = "";
  for (let i = 0; i < l.topics.length; i++)
    topics += `${i === 0 ? "" : ","}"0x${bytesToHex(l.topics[i] as Uint8Array)}"`;
  const data = Buffer.from(l.data.buffer, l.data.byteOffset, l.data.byteLength).toString("base64");
  return `{"address":"${toChecksumAddress(l.address)}","topics":[${topics}],"data":"${data}","blockNumber":${r.height},"transactionHash":"${ethHash}","transactionIndex":${r.txIndex},"blockHash":"${blockHash}","logIndex":${l.logIndex},"removed":false}`;
}

/**
 * The retain height Commit returns, as the Cosmos SDK's BaseApp.GetBlockRetentionHeight computes it
 * (docs/operations.md, "Pruning"): 0 (keep everything) when min-retain-blocks is 0; otherwise the
 * lowest of the non-zero candidates commit − min-retain-blocks, commit − evidence max age in blocks
 * (blocks evidence can still come from) and commit − snapshot-interval × keep-recent (blocks a state
 * sync from the oldest kept snapshot replays); 0 when that is not above 0.
 */
export function blockRetentionHeight(
  commitHeight: number,
  o: { minRetainBlocks: number; evidenceMaxAgeNumBlocks: bigint; snapshotRetainBlocks: number },
): number {
  if (o.minRetainBlocks <= 0) return 0;
  const minNonZero = (x: number, y: number) => (x === 0 ? y : y === 0 ? x : Math.min(x, y));
  let retain = 0;
  if (o.evidenceMaxAgeNumBlocks > 0n) retain = commitHeight - Number(o.evidenceMaxAgeNumBlocks);
  if (o.snapshotRetainBlocks > 0) retain = minNonZero(retain, commitHeight - o.snapshotRetainBlocks);
  retain = minNonZero(retain, commitHeight - o.minRetainBlocks);
  return Math.max(retain, 0);
}
