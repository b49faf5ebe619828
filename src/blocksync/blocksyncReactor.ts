import { MAX_BLOCK_SIZE_BYTES } from "../consensus/index.js";
import type { ChannelDescriptor, Peer, Reactor, ReactorSwitch } from "../p2p/reactor.js";
import {
  type Block,
  type BlockId,
  blockId,
  type ChainState,
  type Commit,
  makePartSet,
  type PartSet,
} from "../types/index.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { BlockPool, type BlockPoolOptions, defaultBlockPoolOptions } from "./blockPool.js";
import { type BlocksyncMessage, decodeBlocksyncMessage, encodeBlocksyncMessage } from "./blocksyncCodec.js";
import { BlocksyncApplyError, BlocksyncError, BlocksyncPeerError, StoreStateMismatchError } from "./errors.js";

/** blocksync.BlocksyncChannel. */
export const BLOCKSYNC_CHANNEL = 0x40;

/**
 * Largest message on the channel: a block of types.MaxBlockSizeBytes plus the BlockResponse and
 * Message envelopes (CometBFT's MaxMsgSize counts 5 bytes; 1 KiB leaves room for both tags,
 * lengths and an ext_commit-free response).
 */
export const BLOCKSYNC_MAX_MSG_BYTES = MAX_BLOCK_SIZE_BYTES + 1024;

/** What block sync reads and writes in the block store (store/ BlockStore satisfies it). */
export interface BlocksyncBlockStore {
  base(): number;
  height(): number;
  loadBlock(height: number): Block | undefined;
  /** Durable when the promise resolves. */
  saveBlock(block: Block, parts: PartSet, seenCommit: Commit): Promise<void>;
}

/** consensus/ BlockExecutor, the parts block sync uses. */
export interface BlocksyncBlockExecutor {
  /** state/validation.go validateBlock; throws when the block is invalid. */
  validateBlock(state: ChainState, block: Block): void;
  /** Executes the block against the app and persists the new state before resolving. */
  applyBlock(state: ChainState, id: BlockId, block: Block): Promise<{ state: ChainState }>;
}

export interface BlocksyncReactorDeps {
  blockStore: BlocksyncBlockStore;
  blockExec: BlocksyncBlockExecutor;
  /** The state after the handshake; its last height must be the block store's height. */
  state: ChainState;
  clock: Clock;
  log: Logger;
  /**
   * Called once, when block sync is caught up (the node starts consensus here, which adopts the
   * saved state: CometBFT SwitchToConsensus). `blocksSynced` = blocks applied by block sync.
   */
  onCaughtUp?(state: ChainState, blocksSynced: number): void | Promise<void>;
}

export interface BlocksyncOptions extends BlockPoolOptions {
  /** Sync at start (config block_sync). When false the reactor only serves blocks to peers. */
  enabled: boolean;
  /** How often to ask every peer for its range while syncing (statusUpdateIntervalSeconds). */
  statusIntervalMs: number;
  /** How often to check whether to switch to consensus (switchToConsensusIntervalSeconds). */
  switchCheckIntervalMs: number;
  /** Caught up when no peer has reported its range this long after start (a lone or first node). */
  startTimeoutMs: number;
  /** This node's validator address: holding >= 1/3 of the power means nobody else can make blocks. */
  localAddress?: Uint8Array;
}

export function defaultBlocksyncOptions(): BlocksyncOptions {
  return {
    ...defaultBlockPoolOptions(),
    enabled: true,
    statusIntervalMs: 10_000,
    switchCheckIntervalMs: 1_000,
    startTimeoutMs: 5_000,
  };
}

/**
 * The block sync reactor (CometBFT blocksync/reactor.go): serves blocks from the block store to
 * any peer, and at start fetches the blocks this node is missing, verifies each block H with
 * H+1's LastCommit against the validators of H, saves and applies it, until caught up with its
 * peers; then calls onCaughtUp once and only serves.
 */
export class BlocksyncReactor implements Reactor {
  readonly name = "BLOCKSYNC";
  readonly #deps: BlocksyncReactorDeps;
  readonly #opts: BlocksyncOptions;
  readonly #pool: BlockPool;
  #sw: ReactorSwitch | undefined;
  #state: ChainState;
  #syncing: boolean;
  #stopped = false;
  #processing = false;
  #kickAgain = false;
  #switchCheckDue = false;
  #loop: Promise<void> = Promise.resolve();
  #startedAtNs = 0n;
  #everHadPeer = false;
  #blocksSynced = 0;
  #failure: Error | undefined;
  #cancelStatusTimer: (() => void) | undefined;
  #cancelSwitchTimer: (() => void) | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(deps: BlocksyncReactorDeps, opts: Partial<BlocksyncOptions> = {}) {
    this.#deps = deps;
    this.#opts = { ...defaultBlocksyncOptions(), ...opts };
    this.#state = deps.state;
    const storeHeight = deps.blockStore.height();
    if (deps.state.lastBlockHeight !== storeHeight) {
      throw new StoreStateMismatchError(deps.state.lastBlockHeight, storeHeight);
    }
    const startHeight = storeHeight === 0 ? deps.state.initialHeight : storeHeight + 1;
    this.#pool = new BlockPool(
      startHeight,
      {
        clock: deps.clock,
        log: deps.log,
        sendRequest: (height, peerId) => this.#sendBlockRequest(height, peerId),
        onPeerError: (peerId, err) => this.#stopPeer(peerId, err),
      },
      this.#opts,
    );
    this.#syncing = this.#opts.enabled;
  }

  channels(): readonly ChannelDescriptor[] {
    return [
      {
        id: BLOCKSYNC_CHANNEL,
        priority: 5,
        sendQueueCapacity: 1000,
        recvMessageCapacity: BLOCKSYNC_MAX_MSG_BYTES,
        name: "blocksync",
      },
    ];
  }

  start(sw: ReactorSwitch): void {
    this.#sw = sw;
    if (!this.#syncing || this.#stopped) return;
    this.#startedAtNs = this.#deps.clock.nowNs();
    this.#deps.log.info(
      { height: this.#pool.height(), lastBlockHeight: this.#state.lastBlockHeight },
      "Starting block sync",
    );
    this.#pool.start();
    this.#scheduleStatusRequests();
    this.#scheduleSwitchCheck();
    this.#broadcast({ kind: "statusRequest" });
  }

  /**
   * SwitchToBlockSync: starts syncing from `state` (after state sync restored the app at its height;
   * the block store is still empty, its first block will be state.lastBlockHeight + 1).
   */
  switchToBlockSync(state: ChainState): void {
    if (this.#syncing || this.#stopped) return;
    this.#state = state;
    this.#pool.resetHeight(state.lastBlockHeight + 1);
    this.#syncing = true;
    if (this.#sw !== undefined) this.start(this.#sw);
  }

  /** Stops syncing (serving stops with the switch); resolves once the block being applied is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#endSync();
    await this.#loop;
  }

  /**
   * True until caught up (RPC status catching_up); false when block sync is disabled. A sync that
   * failed stays true: the node never caught up and consensus was not started.
   */
  isSyncing(): boolean {
    return this.#syncing || this.#failure !== undefined;
  }

  /** Why syncing stopped without catching up (a block that verified but could not be applied). */
  syncError(): Error | undefined {
    return this.#failure;
  }

  /** Pool progress, for logs and tests. */
  status(): { height: number; maxPeerHeight: number; numPeers: number; blocksSynced: number; numPending: number } {
    const s = this.#pool.status();
    return {
      height: s.height,
      maxPeerHeight: s.maxPeerHeight,
      numPeers: s.numPeers,
      blocksSynced: this.#blocksSynced,
      numPending: s.numPending,
    };
  }

  /** Resolves once no block is being verified or applied (tests). */
  idle(): Promise<void> {
    if (!this.#processing) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  isIdle(): boolean {
    return !this.#processing;
  }

  addPeer(peer: Peer): void {
    // CometBFT sends our range to every new peer; we also ask for theirs rather than wait for it.
    this.#send(peer, {
      kind: "statusResponse",
      height: this.#deps.blockStore.height(),
      base: this.#deps.blockStore.base(),
    });
    if (this.#syncing) this.#send(peer, { kind: "statusRequest" });
  }

  removePeer(peer: Peer, _reason: unknown): void {
    this.#pool.removePeer(peer.id);
  }

  receive(channelId: number, peer: Peer, bytes: Uint8Array): void {
    if (channelId !== BLOCKSYNC_CHANNEL) return;
    // Throws InvalidBlocksyncMessageError: the switch stops the peer (ValidateMsg failure).
    const msg = decodeBlocksyncMessage(bytes);
    switch (msg.kind) {
      case "blockRequest":
        this.#respondToPeer(msg.height, peer);
        return;
      case "blockResponse":
        if (!this.#syncing) return;
        if (this.#pool.addBlock(peer.id, msg.block)) this.#kick();
        return;
      case "statusRequest":
        this.#send(peer, {
          kind: "statusResponse",
          height: this.#deps.blockStore.height(),
          base: this.#deps.blockStore.base(),
        });
        return;
      case "statusResponse":
        if (!this.#syncing) return;
        this.#everHadPeer = true;
        this.#pool.setPeerRange(peer.id, msg.base, msg.height);
        return;
      case "noBlockResponse":
        this.#deps.log.debug({ peer: peer.id, height: msg.height }, "Peer does not have requested block");
        if (this.#syncing) this.#pool.redoRequestFrom(msg.height, peer.id);
        return;
    }
  }

  // ---- serving -----------------------------------------------------------------------------------

  #respondToPeer(height: number, peer: Peer): void {
    const block = this.#deps.blockStore.loadBlock(height);
    if (block === undefined) {
      this.#deps.log.info({ peer: peer.id, height }, "Peer asking for a block we don't have");
      this.#send(peer, { kind: "noBlockResponse", height });
      return;
    }
    this.#send(peer, { kind: "blockResponse", block });
  }

  #send(peer: Peer, msg: BlocksyncMessage): boolean {
    const queued = peer.trySend(BLOCKSYNC_CHANNEL, encodeBlocksyncMessage(msg));
    if (!queued) this.#deps.log.debug({ peer: peer.id, kind: msg.kind }, "Send queue is full, dropping message");
    return queued;
  }

  #broadcast(msg: BlocksyncMessage): void {
    this.#sw?.broadcast(BLOCKSYNC_CHANNEL, encodeBlocksyncMessage(msg));
  }

  #sendBlockRequest(height: number, peerId: string): void {
    const peer = this.#sw?.peer(peerId);
    if (peer === undefined) return;
    this.#send(peer, { kind: "blockRequest", height });
  }

  #stopPeer(peerId: string, err: Error): void {
    this.#deps.log.error({ peer: peerId, err: err.message }, "Stopping peer for error");
    const peer = this.#sw?.peer(peerId);
    if (peer !== undefined) this.#sw?.stopPeerForError(peer, err);
  }

  // ---- syncing -----------------------------------------------------------------------------------

  #scheduleStatusRequests(): void {
    this.#cancelStatusTimer = this.#deps.clock.schedule(this.#opts.statusIntervalMs, () => {
      this.#cancelStatusTimer = undefined;
      if (!this.#syncing) return;
      this.#broadcast({ kind: "statusRequest" });
      this.#scheduleStatusRequests();
    });
  }

  #scheduleSwitchCheck(): void {
    this.#cancelSwitchTimer = this.#deps.clock.schedule(this.#opts.switchCheckIntervalMs, () => {
      this.#cancelSwitchTimer = undefined;
      if (!this.#syncing) return;
      this.#switchCheckDue = true;
      this.#kick();
      this.#scheduleSwitchCheck();
    });
  }

  #endSync(): void {
    this.#syncing = false;
    this.#pool.stop();
    this.#cancelStatusTimer?.();
    this.#cancelStatusTimer = undefined;
    this.#cancelSwitchTimer?.();
    this.#cancelSwitchTimer = undefined;
  }

  /** Runs the sync loop unless it is running; a kick during a run makes it look again. */
  #kick(): void {
    if (!this.#syncing || this.#stopped) return;
    if (this.#processing) {
      this.#kickAgain = true;
      return;
    }
    this.#processing = true;
    this.#loop = this.#runLoop();
  }

  async #runLoop(): Promise<void> {
    try {
      do {
        this.#kickAgain = false;
        await this.#applyAvailableBlocks();
        if (this.#switchCheckDue && this.#syncing) {
          this.#switchCheckDue = false;
          await this.#maybeSwitchToConsensus();
        }
      } while (this.#kickAgain && this.#syncing);
    } catch (err) {
      this.#failure = err instanceof Error ? err : new BlocksyncApplyError(String(err));
      this.#deps.log.error({ err: this.#failure, height: this.#pool.height() }, "block sync failed; stopping it");
      this.#endSync();
    } finally {
      this.#processing = false;
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** The FOR_LOOP body of poolRoutine: verify, save and apply while two consecutive blocks are in. */
  async #applyAvailableBlocks(): Promise<void> {
    while (this.#syncing) {
      const { first, second } = this.#pool.peekTwoBlocks();
      if (first === undefined || second === undefined) return;
      const state = this.#state;
      const height = first.header.height;
      const expected = state.lastBlockHeight === 0 ? state.initialHeight : state.lastBlockHeight + 1;
      if (height !== expected || second.header.height !== height + 1) {
        throw new BlocksyncApplyError(
          `block pool out of step with the state: expected blocks ${expected} and ${expected + 1}, got ${height} and ${second.header.height}`,
        );
      }
      const parts = makePartSet(first);
      const firstId = blockId(first, parts);
      try {
        // Block H is final if the validators of H signed its id with +2/3 in H+1's LastCommit.
        state.validators.verifyCommit(state.chainId, firstId, height, second.lastCommit);
        this.#deps.blockExec.validateBlock(state, first);
      } catch (err) {
        this.#deps.log.error({ err: (err as Error).message, height }, "Error in validation");
        this.#dropPeersOf(height, second.header.height, err);
        continue;
      }
      this.#pool.popRequest();
      try {
        await this.#deps.blockStore.saveBlock(first, parts, second.lastCommit);
        const res = await this.#deps.blockExec.applyBlock(state, firstId, first);
        this.#state = res.state;
      } catch (err) {
        throw new BlocksyncApplyError(`failed to process committed block ${height}: ${(err as Error).message}`, {
          cause: err,
        });
      }
      this.#blocksSynced++;
      if (this.#blocksSynced % 100 === 0) {
        this.#deps.log.info(
          { height: this.#pool.height(), maxPeerHeight: this.#pool.maxPeerHeight() },
          "Block Sync Rate",
        );
      }
    }
  }

  /** Both blocks' senders are suspects: drop and ban them, and fetch their heights again. */
  #dropPeersOf(firstHeight: number, secondHeight: number, err: unknown): void {
    const reason = (id: string) =>
      new BlocksyncPeerError(id, `block ${firstHeight} failed verification: ${(err as Error).message}`, {
        cause: err,
      });
    const p1 = this.#pool.removePeerAndRedoAllPeerRequests(firstHeight);
    if (p1 !== undefined) this.#stopPeer(p1, reason(p1));
    const p2 = this.#pool.removePeerAndRedoAllPeerRequests(secondHeight);
    if (p2 !== undefined && p2 !== p1) this.#stopPeer(p2, reason(p2));
  }

  /**
   * localNodeBlocksTheChain: with >= 1/3 of the power no one else can commit a block. Compared
   * exactly (3·power >= total): CometBFT's integer total/3 makes 1 of 4 equal validators "block the
   * chain", so a restarted validator of a 4-node network would skip block sync although the other
   * three kept committing.
   */
  #localNodeBlocksTheChain(): boolean {
    const addr = this.#opts.localAddress;
    if (addr === undefined) return false;
    const val = this.#state.validators.getByAddress(addr);
    if (val === undefined) return false;
    return val.validator.votingPower * 3n >= this.#state.validators.totalVotingPower();
  }

  async #maybeSwitchToConsensus(): Promise<void> {
    const waitedMs = Number((this.#deps.clock.nowNs() - this.#startedAtNs) / 1_000_000n);
    const lonely = !this.#everHadPeer && this.#pool.numPeers() === 0 && waitedMs >= this.#opts.startTimeoutMs;
    const caughtUp = this.#pool.isCaughtUp();
    if (!caughtUp && !lonely && !this.#localNodeBlocksTheChain()) return;
    this.#deps.log.info(
      {
        height: this.#pool.height(),
        lastBlockHeight: this.#state.lastBlockHeight,
        maxPeerHeight: this.#pool.maxPeerHeight(),
        blocksSynced: this.#blocksSynced,
        reason: caughtUp ? "caught up with peers" : lonely ? "no peers" : "local validator blocks the chain",
      },
      "Time to switch to consensus reactor!",
    );
    this.#endSync();
    try {
      await this.#deps.onCaughtUp?.(this.#state, this.#blocksSynced);
    } catch (err) {
      this.#failure = err instanceof Error ? err : new BlocksyncError(String(err));
      this.#deps.log.error({ err }, "switching to consensus failed");
    }
  }
}
