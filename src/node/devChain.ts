import { randomBytes } from "node:crypto";
import {
  type DevCheat,
  type DevEntry,
  decodeAnvilStateHex,
  type EvmApplication,
  encodeAnvilStateHex,
  encodeAnvilStateJson,
  encodeDevEntry,
  ForkSource,
  type StateDump,
  StateDumpError,
} from "../app/index.js";
import { packageVersion } from "../config/index.js";
import type { Consensus, MiningPolicy } from "../consensus/index.js";
import { type ChainEpoch, RewindRefusedError, type RewindRegistry, type TxInclusion } from "../events/index.js";
import type { Mempool } from "../mempool/index.js";
import {
  type DevCheatRequest,
  type DevControl,
  type DevForkInfo,
  DevInputError,
  type DevMetadata,
  type DevNodeInfo,
  type ImpersonatedTx,
} from "../rpc/evm/index.js";
import { type ChainState, txHashHex } from "../types/index.js";
import { bytesToHex } from "../util/bytes.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { Timestamp } from "../util/time.js";
import type { EvmFeed } from "./evmServices.js";

/** The Anvil release whose dev methods these follow; web3_clientVersion names it first. */
export const ANVIL_COMPAT_VERSION = "1.7.1";
const NS = 1_000_000_000n;
/** hardhat_mine / anvil_mine take at most this many blocks in one call (each is a real block). */
export const MAX_MINE_BLOCKS = 1_000_000n;
/** How long an automined send waits for its block before answering anyway (three blocks at most). */
const AUTOMINE_WAIT_MS = 30_000;
/** anvil_loadState is committed in entries of about this many bytes (mempool max_tx_bytes is above it). */
const LOAD_STATE_CHUNK_BYTES = 512 * 1024;

/**
 * A dev chain's block times (CometBFT v1's proposer-based timestamps, chosen here as Anvil's
 * TimeManager chooses them): whole seconds, the wall clock plus an offset that evm_increaseTime and
 * evm_setTime move, an exact next timestamp, or a fixed interval after the last block; always later
 * than the last block. The time of a height is fixed the first time it is asked (the proposal and
 * PrepareProposal see the same one).
 */
export class DevTime {
  readonly #clock: Clock;
  offset = 0n;
  next: bigint | undefined;
  interval: bigint | undefined;
  /** anvil_mine's interval: each block of the batch this many seconds after the last. */
  perBlock: bigint | undefined;
  #pinned: { height: number; time: Timestamp } | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  nowSec(): bigint {
    return this.#clock.nowNs() / NS;
  }

  readonly proposerTime = (height: number, state: ChainState): Timestamp => {
    const pinned = this.#pinned;
    if (pinned !== undefined && pinned.height === height) return pinned.time;
    const lastSec = state.lastBlockTime / NS;
    let ts: bigint;
    if (this.perBlock !== undefined && this.perBlock > 0n && this.next === undefined) {
      // anvil_mine / hardhat_mine with an interval: each block that much after the last.
      ts = lastSec + this.perBlock;
      this.offset = ts - this.nowSec();
    } else if (this.next !== undefined) {
      ts = this.next;
      this.next = undefined;
      // Later blocks continue from there, as Anvil and Hardhat do.
      this.offset = ts - this.nowSec();
    } else if (this.interval !== undefined) {
      ts = lastSec + this.interval;
    } else {
      ts = this.nowSec() + this.offset;
    }
    if (ts <= lastSec) ts = lastSec + 1n;
    // A block ahead of the clock (a burst of blocks a second apart, an interval) moves the clock with
    // it, as Hardhat does: a later evm_increaseTime(60) is then 60 s after this block, not swallowed.
    const now = this.nowSec();
    if (ts - now > this.offset) this.offset = ts - now;
    const time = ts * NS;
    this.#pinned = { height, time };
    return time;
  };

  forgetPinned(): void {
    this.#pinned = undefined;
  }
}

interface Snapshot {
  height: number;
  offset: bigint;
  next: bigint | undefined;
  interval: bigint | undefined;
}

export interface DevChainParts {
  consensus: Consensus;
  /** How the chain makes blocks (consensus's block-production policy). */
  mining: MiningPolicy;
  mempool: Mempool;
  app: EvmApplication;
  /** Every store and cache a rollback takes back, registered once each (node/ fills it). */
  rewind: RewindRegistry;
  /** The chain state the rollback left as the latest, which consensus takes. */
  restoredState: () => ChainState;
  feed: EvmFeed;
  /** The node's one "tx included" wait: automined sends and cheats wait here for their block. */
  inclusion: TxInclusion;
  /** Told of each rollback; both RPC servers and their memos by height follow it. */
  epoch: ChainEpoch;
  time: DevTime;
  log: Logger;
  /** Where the request log and console.log lines go (the CLI prints them); absent: nowhere. */
  print?: (line: string) => void;
  /** Start with the request log off (`--silent`). */
  silent?: boolean;
  /** Told of the new source once anvil_reset has moved the chain to it (`cometh dev` records it in the home). */
  onForkReset?: (fork: ForkSource) => void;
}

/**
 * The dev methods of a `cometh dev` chain (rpc/evm/services.ts DevControl) over the real node: mining
 * through consensus, cheats and impersonated sends as dev entries in blocks, snapshots as rollbacks of
 * every store. docs/dev-chain.md describes the design.
 */
export class DevChain implements DevControl {
  readonly #p: DevChainParts;
  readonly #snapshots = new Map<bigint, Snapshot>();
  #nextSnapshotId = 0n;
  readonly #impersonated = new Set<string>();
  #autoImpersonate = false;
  #logging: boolean;
  readonly #instanceId = randomBytes(32);
  /** Serialises the methods that make blocks or roll back, so a revert never runs inside a mine. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(parts: DevChainParts) {
    this.#p = parts;
    this.#logging = parts.silent !== true;
    parts.app.onConsoleLog((lines) => {
      for (const line of lines) this.#print(line);
    });
    parts.feed.onNewBlock((height) => this.#logBlock(height));
  }

  #print(line: string): void {
    this.#p.print?.(line);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  clientVersion(): string {
    return `anvil/v${ANVIL_COMPAT_VERSION} (cometh/v${packageVersion()})`;
  }

  onRequest(method: string): void {
    if (this.#logging) this.#print(method);
  }

  #logBlock(height: number): void {
    if (!this.#logging) return;
    const reader = this.#p.app.reader;
    const block = reader.block(height);
    if (block === undefined || block.txHashes.length === 0) return;
    for (const r of reader.receipts(height)) {
      this.#print("");
      this.#print(`    Transaction: 0x${bytesToHex(r.txHash)}`);
      if (r.contractAddress !== undefined && r.status === 1) {
        this.#print(`    Contract created: 0x${bytesToHex(r.contractAddress)}`);
      }
      this.#print(`    Gas used: ${r.gasUsed}`);
      if (r.status === 0) this.#print(`    Error: ${r.vmError === "" ? "reverted" : r.vmError}`);
    }
    this.#print("");
    this.#print(`    Block Number: ${height}`);
    this.#print(`    Block Hash: 0x${bytesToHex(block.hash)}`);
    this.#print(`    Block Time: "${new Date(Number(block.timestamp) * 1000).toUTCString()}"`);
    this.#print("");
  }

  // ---- mining ------------------------------------------------------------------------------------

  mine(blocks: bigint, intervalSec?: bigint): Promise<void> {
    if (blocks < 0n) throw new DevInputError("the number of blocks cannot be negative");
    if (blocks > MAX_MINE_BLOCKS) {
      throw new DevInputError(`at most ${MAX_MINE_BLOCKS} blocks can be mined in one call (got ${blocks})`);
    }
    if (blocks === 0n) return Promise.resolve();
    return this.#serial(async () => {
      const time = this.#p.time;
      time.perBlock = intervalSec;
      try {
        await this.#p.mining.mineBlocks(Number(blocks));
      } finally {
        time.perBlock = undefined;
      }
    });
  }

  mineOne(timestamp?: bigint): Promise<void> {
    if (timestamp !== undefined) this.setNextBlockTimestamp(timestamp);
    return this.mine(1n);
  }

  automine(): boolean {
    return this.#p.mining.mining().automine;
  }

  setAutomine(on: boolean): void {
    const m = this.#p.mining.mining();
    // Anvil: automine replaces interval mining, and turning it off stops mining altogether.
    this.#p.mining.setMining({ automine: on, intervalMs: on ? 0 : m.intervalMs });
  }

  intervalMining(): number | undefined {
    const ms = this.#p.mining.mining().intervalMs;
    return ms === 0 ? undefined : ms / 1000;
  }

  setIntervalMining(seconds: number): void {
    if (!Number.isSafeInteger(seconds) || seconds < 0) {
      throw new DevInputError(`the interval must be a whole number of seconds ≥ 0 (got ${seconds})`);
    }
    this.#p.mining.setMining({ automine: seconds === 0 && this.automine(), intervalMs: seconds * 1000 });
  }

  setBlockTimestampInterval(seconds: bigint): void {
    this.#p.time.interval = seconds;
  }

  removeBlockTimestampInterval(): boolean {
    const had = this.#p.time.interval !== undefined;
    this.#p.time.interval = undefined;
    return had;
  }

  /** The mempool keys of waiting txs matching `pick`. */
  #pendingKeys(pick: (from: Uint8Array, hash: Uint8Array) => boolean): string[] {
    const keys: string[] = [];
    for (const raw of this.#p.mempool.txs()) {
      try {
        const v = this.#p.app.reader.decodeTransaction(raw);
        if (pick(v.from, v.hash)) keys.push(txHashHex(raw));
      } catch {
        // A cheat entry: not a transaction.
      }
    }
    return keys;
  }

  async #removePending(keys: string[]): Promise<number> {
    if (keys.length === 0) return 0;
    return this.#p.mempool.removeTxs(keys, () => this.#p.app.resetCheckState());
  }

  async dropTransaction(hash: Uint8Array): Promise<Uint8Array | undefined> {
    const hex = bytesToHex(hash);
    const removed = await this.#removePending(this.#pendingKeys((_from, h) => bytesToHex(h) === hex));
    return removed > 0 ? hash : undefined;
  }

  async dropAllTransactions(): Promise<void> {
    await this.#removePending(this.#pendingKeys(() => true));
  }

  async removePoolTransactions(address: Uint8Array): Promise<void> {
    const hex = bytesToHex(address);
    await this.#removePending(this.#pendingKeys((from) => bytesToHex(from) === hex));
  }

  async afterSubmit(raw: Uint8Array, hash: Uint8Array): Promise<void> {
    if (!this.automine()) return;
    const key = txHashHex(raw);
    const mempool = this.#p.mempool;
    if (this.#p.app.reader.txLocation(hash) !== undefined || !mempool.has(key)) return;
    // A block already being made may not carry it; the next one does unless it cannot run yet (it
    // leaves the mempool, or stays for a nonce gap: then the send answers after three blocks).
    await this.#p.inclusion.waitOutcome(raw, {
      timeoutMs: AUTOMINE_WAIT_MS,
      maxBlocks: 3,
      stillPending: () => mempool.has(key),
      acceptRecent: true,
    }).outcome;
  }

  // ---- time --------------------------------------------------------------------------------------

  #latestTimestamp(): bigint {
    return this.#p.consensus.chainState().lastBlockTime / NS;
  }

  increaseTime(seconds: bigint): bigint {
    if (seconds < 0n) throw new DevInputError("evm_increaseTime takes a non-negative number of seconds");
    this.#p.time.offset += seconds;
    return this.#p.time.offset;
  }

  setNextBlockTimestamp(timestamp: bigint): void {
    const latest = this.#latestTimestamp();
    // CometBFT block times strictly increase (Hardhat refuses an equal timestamp too).
    if (timestamp <= latest) {
      throw new DevInputError(
        `timestamp ${timestamp} is lower than or equal to the latest block's timestamp ${latest}; pass ${latest + 1n} or later`,
      );
    }
    this.#p.time.next = timestamp;
  }

  setTime(timestamp: bigint): bigint {
    const now = this.#p.time.nowSec();
    this.#p.time.offset = timestamp - now;
    this.#p.time.next = undefined;
    return timestamp > now ? timestamp - now : 0n;
  }

  // ---- snapshots ---------------------------------------------------------------------------------

  snapshot(): bigint {
    const id = this.#nextSnapshotId++;
    const t = this.#p.time;
    this.#snapshots.set(id, {
      height: this.#p.consensus.chainState().lastBlockHeight,
      offset: t.offset,
      next: t.next,
      interval: t.interval,
    });
    return id;
  }

  revert(id: bigint): Promise<boolean> {
    return this.#serial(async () => {
      const s = this.#snapshots.get(id);
      if (s === undefined) return false;
      // Hardhat: the reverted-to snapshot and every later one are used up.
      for (const k of [...this.#snapshots.keys()]) if (k >= id) this.#snapshots.delete(k);
      await this.#rollbackTo(s.height);
      const t = this.#p.time;
      t.offset = s.offset;
      t.next = s.next;
      t.interval = s.interval;
      return true;
    });
  }

  reset(): Promise<void> {
    return this.#serial(async () => {
      this.#snapshots.clear();
      await this.#rollbackTo(0);
      const t = this.#p.time;
      t.offset = 0n;
      t.next = undefined;
      t.interval = undefined;
    });
  }

  rollback(depth: bigint): Promise<void> {
    return this.#serial(async () => {
      const head = BigInt(this.#p.consensus.chainState().lastBlockHeight);
      if (depth > head) {
        throw new DevInputError(
          `Rollback depth must not exceed current chain height: current height ${head}, depth ${depth}`,
        );
      }
      const height = Number(head - depth);
      // A snapshot above the new head could not be reverted to: its blocks are gone.
      for (const [id, snap] of this.#snapshots) if (snap.height > height) this.#snapshots.delete(id);
      await this.#rollbackTo(height);
    });
  }

  // ---- forking (anvil_reset with `forking`; app/evm/fork/) ----------------------------------------

  setRpcUrl(url: string): Promise<void> {
    return this.#serial(async () => {
      const old = this.#p.app.db.fork;
      if (old === undefined) return;
      let fork: ForkSource;
      try {
        // The same fork point, pinned: nothing is asked of the new source until a read needs it, and
        // the reads cached on disk for this chain and block are its reads too.
        fork = ForkSource.open({
          ...old.options,
          urls: [url],
          chainId: old.point.chainId,
          blockNumber: old.point.blockNumber,
        });
      } catch (err) {
        throw new DevInputError(`cannot use ${url} as the fork's source: ${(err as Error).message}`);
      }
      await this.#p.app.replaceFork(fork);
      this.#p.onForkReset?.(fork);
    });
  }

  /**
   * Back to genesis on another fork: the new source is opened first (a URL that does not answer
   * leaves the chain as it was), then the chain is rolled back to genesis and reads the new source.
   * The genesis state (the dev accounts' balances, the nonces they had on the first source) and the
   * chain id stay those of the chain's start (docs/compatibility.md).
   */
  resetFork(forking: { urls?: string[]; blockNumber?: bigint }): Promise<void> {
    const old = this.#p.app.db.fork;
    const urls = forking.urls ?? old?.options.urls;
    // A block number alone on a chain that is no fork (viem's reset({ blockNumber })): a plain reset.
    if (urls === undefined) return this.reset();
    return this.#serial(async () => {
      // A chain started without --fork-url becomes a fork from its genesis on, as Anvil's does.
      const { chainId: _pinned, blockNumber: _old, ...kept } = old?.options ?? { urls };
      let fork: ForkSource;
      try {
        fork = ForkSource.open({
          ...kept,
          urls,
          ...(forking.blockNumber === undefined ? {} : { blockNumber: forking.blockNumber }),
        });
      } catch (err) {
        throw new DevInputError(`cannot reset to the fork: ${(err as Error).message}`);
      }
      this.#snapshots.clear();
      await this.#rollbackTo(0);
      await this.#p.app.replaceFork(fork);
      this.#p.onForkReset?.(fork);
      const t = this.#p.time;
      t.offset = 0n;
      t.next = undefined;
      t.interval = undefined;
    });
  }

  async #rollbackTo(height: number): Promise<void> {
    const p = this.#p;
    // Before consensus is asked: a store that cannot go back leaves everything as it was.
    try {
      p.rewind.check();
    } catch (err) {
      if (err instanceof RewindRefusedError) throw new DevInputError(err.message);
      throw err;
    }
    await p.consensus.rewind(async () => {
      const release = await p.mempool.lock();
      try {
        await p.rewind.rewindTo(height);
        return p.restoredState();
      } finally {
        release();
      }
    });
    p.epoch.rewound(height);
    p.log.info({ height }, "dev chain rolled back");
  }

  // ---- cheats and impersonation ------------------------------------------------------------------

  /**
   * Puts an entry in the mempool and commits blocks until one carries it; answers once that block is
   * readable (the node's one "tx included" wait, started before CheckTx so an automined block is seen).
   */
  async #commitEntry(entry: DevEntry, cheatsOnly: boolean): Promise<void> {
    const raw = encodeDevEntry(entry);
    const key = txHashHex(raw);
    const mempool = this.#p.mempool;
    const included = this.#p.inclusion.waitOutcome(raw, { stillPending: () => mempool.has(key) });
    let res: Awaited<ReturnType<Mempool["checkTx"]>>;
    try {
      res = await mempool.checkTx(raw);
    } catch (err) {
      included.cancel();
      throw err;
    }
    if (res.code !== 0) {
      included.cancel();
      throw new DevInputError(res.log === "" ? `CheckTx failed with code ${res.code}` : res.log);
    }
    // A block already being made may not carry it; the next one does (it always fits: entries are
    // bounded far below a block). The mempool says at once whether a committed block took it.
    for (let i = 0; i < 3 && mempool.has(key); i++) {
      if (cheatsOnly && !this.automine()) this.#p.app.setCheatsOnlyProposal(true);
      await this.#p.mining.mineBlocks(1);
    }
    if (mempool.has(key)) {
      included.cancel();
      await this.#removePending([key]);
      throw new Error(`the ${entry.op} entry was still waiting after 3 blocks; it was dropped, nothing was applied`);
    }
    // Out of the mempool: its block is being indexed (or, never seen so far, it was dropped, which the
    // wait reports at the next block; the cheat then answers as it always did, without an error).
    await included.outcome;
  }

  cheat(c: DevCheatRequest): Promise<void> {
    return this.#serial(() => this.#commitEntry(c as DevCheat, true));
  }

  impersonate(address: Uint8Array): void {
    this.#impersonated.add(bytesToHex(address));
  }

  stopImpersonating(address: Uint8Array): void {
    this.#impersonated.delete(bytesToHex(address));
  }

  setAutoImpersonate(on: boolean): void {
    this.#autoImpersonate = on;
  }

  isImpersonated(address: Uint8Array): boolean {
    return this.#autoImpersonate || this.#impersonated.has(bytesToHex(address));
  }

  async sendImpersonated(tx: ImpersonatedTx): Promise<Uint8Array> {
    const raw = encodeDevEntry({
      op: "send",
      from: tx.from,
      type: tx.type,
      nonce: tx.nonce,
      gasLimit: tx.gasLimit,
      to: tx.to,
      value: tx.value,
      data: tx.data,
      ...(tx.gasPrice === undefined ? {} : { gasPrice: tx.gasPrice }),
      ...(tx.maxFeePerGas === undefined ? {} : { maxFeePerGas: tx.maxFeePerGas }),
      ...(tx.maxPriorityFeePerGas === undefined ? {} : { maxPriorityFeePerGas: tx.maxPriorityFeePerGas }),
      accessList: tx.accessList.map((e) => ({ address: e.address, storageKeys: [...e.storageKeys] })),
    });
    const res = await this.#p.mempool.checkTx(raw);
    if (res.code !== 0) throw new DevInputError(res.log === "" ? `CheckTx failed with code ${res.code}` : res.log);
    const hash = this.#p.app.reader.decodeTransaction(raw).hash;
    this.#p.feed.pendingTransaction(hash);
    await this.afterSubmit(raw, hash);
    return hash;
  }

  // ---- state -------------------------------------------------------------------------------------

  async dumpState(): Promise<string> {
    return encodeAnvilStateHex(this.#collectState());
  }

  /** The state as the JSON text `anvil --dump-state` writes to its file. */
  dumpStateJson(): string {
    return encodeAnvilStateJson(this.#collectState());
  }

  #collectState(): StateDump {
    const app = this.#p.app;
    const db = app.db;
    const height = db.latestHeight();
    const dump: StateDump = { accounts: [] };
    for (const { addr, account } of db.accountsAt(height)) {
      const storage: { slot: Uint8Array; value: Uint8Array }[] = [];
      for (const s of db.storageSlotsAt(addr, account.incarnation, height)) {
        const value = new Uint8Array(32);
        value.set(s.value, 32 - s.value.length);
        storage.push({ slot: s.slot, value });
      }
      dump.accounts.push({
        address: addr,
        nonce: account.nonce,
        balance: account.balance,
        code: db.readCode(account.codeHash),
        storage,
      });
    }
    const block = db.blockWithoutRoots(height);
    if (block !== undefined) {
      dump.blockNumber = BigInt(height);
      dump.bestBlockNumber = BigInt(height);
      dump.timestamp = block.timestamp;
      dump.coinbase = block.coinbase;
      dump.gasLimit = block.gasLimit;
      dump.baseFee = block.baseFee;
    }
    return dump;
  }

  loadState(bytes: Uint8Array): Promise<void> {
    let dump: StateDump;
    try {
      dump = decodeAnvilStateHex(`0x${bytesToHex(bytes)}`);
    } catch (err) {
      if (err instanceof StateDumpError) throw new DevInputError(err.message);
      throw err;
    }
    return this.#serial(async () => {
      // Entries of bounded size: a large dump becomes several entries, each in its own block.
      let chunk: DevCheat & { op: "loadState" } = { op: "loadState", accounts: [] };
      let bytes = 0;
      for (const a of dump.accounts) {
        const size = 200 + a.code.length * 2 + a.storage.length * 140;
        if (bytes > 0 && bytes + size > LOAD_STATE_CHUNK_BYTES) {
          await this.#commitEntry(chunk, true);
          chunk = { op: "loadState", accounts: [] };
          bytes = 0;
        }
        chunk.accounts.push(a);
        bytes += size;
      }
      if (chunk.accounts.length > 0) await this.#commitEntry(chunk, true);
    });
  }

  nodeInfo(): DevNodeInfo {
    const app = this.#p.app;
    const reader = app.reader;
    const height = reader.latestHeight();
    const block = reader.blockStamp(height);
    const settings = app.settings();
    return {
      currentBlockNumber: Math.max(0, height),
      currentBlockTimestamp: block?.timestamp ?? 0n,
      // Before the first local block of a fork: the source's fork block.
      currentBlockHash: block?.hash ?? app.db.blockHash(height),
      // Anvil's spelling (alloy's EthereumHardfork name), which Foundry parses back.
      hardFork: "Prague",
      baseFee: reader.nextBaseFee(),
      chainId: reader.chainId(),
      gasLimit: settings === undefined || settings.maxGas <= 0n ? (1n << 64n) - 1n : settings.maxGas,
      gasPrice: reader.nextBaseFee(),
      ...this.#forkInfo(),
    };
  }

  #forkInfo(): { fork?: DevForkInfo } {
    const fork = this.#p.app.db.fork;
    if (fork === undefined) return {};
    const { chainId, blockNumber, blockHash } = fork.point;
    return { fork: { url: fork.options.urls[0] ?? "", chainId, blockNumber, blockHash } };
  }

  metadata(): DevMetadata {
    const reader = this.#p.app.reader;
    const height = Math.max(0, reader.latestHeight());
    return {
      clientVersion: this.clientVersion(),
      chainId: reader.chainId(),
      instanceId: this.#instanceId,
      latestBlockNumber: height,
      latestBlockHash: reader.blockStamp(height)?.hash ?? this.#p.app.db.blockHash(height),
      snapshots: [...this.#snapshots.keys()],
      ...this.#forkInfo(),
    };
  }

  setLoggingEnabled(on: boolean): void {
    this.#logging = on;
  }
}
