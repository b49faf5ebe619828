import { createHash } from "node:crypto";
import { parseQuery, type Query, TxInclusion } from "../../../events/index.js";
import type { AbciEvent, CheckTxResponse, ExecTxResult, FinalizeBlockResponse } from "../../../types/abci.js";
import type { Block, BlockMeta, Commit, Header } from "../../../types/block.js";
import type { BlockId } from "../../../types/blockId.js";
import type { Evidence } from "../../../types/evidence.js";
import type { GenesisDoc } from "../../../types/genesis.js";
import {
  addressFromPubKey,
  formatVote,
  hashEvidence,
  headerHash,
  proofsFromByteSlices,
  txHash,
} from "../../../types/index.js";
import type { PubKey } from "../../../types/keys.js";
import type { ConsensusParams } from "../../../types/params.js";
import type { Validator } from "../../../types/validator.js";
import { bytesEqual, bytesToHexUpper } from "../../../util/bytes.js";
import { ComethError } from "../../../util/errors.js";
import type { Timestamp } from "../../../util/time.js";
import type {
  CometServices,
  EventMessage,
  EventQuery,
  EventSubscription,
  RoundStateView,
  ValidatorSetView,
} from "../services.js";

/**
 * A small stand-in for the node behind the node RPC, for transport- and error-level tests only
 * (behaviour tests run on a real node: realChain.ts). It answers a few routes from fixed data —
 * six blocks, three validators — and keeps no chain rules: the block hash is types/' headerHash of
 * the fixed header, every other hash is a constant. What it does model is what transports need:
 * an event bus with bounded subscriptions that tests publish to (queries parsed by events/), a mempool that never commits,
 * and an app whose `/hang` query never answers.
 */

export const sha256 = (data: Uint8Array | string): Uint8Array =>
  new Uint8Array(createHash("sha256").update(data).digest());

export const CHAIN_ID = "test-chain-Xy1bZ9";
const LATEST_HEIGHT = 6;
const T0: Timestamp = 1_704_067_200_000_000_000n; // 2024-01-01T00:00:00Z

/** A named test failure (src/ code never throws bare Error). */
export class FakeServiceError extends ComethError {}

/** A constant 32-byte value standing in for a hash nobody checks. */
const fixed = (n: number) => new Uint8Array(32).fill(n);

// ---------------------------------------------------------------------------------------------
// The event bus (queries are events/' own).

class FakeSubscription implements EventSubscription {
  readonly #buffer: EventMessage[] = [];
  #waiter: ((m: EventMessage | undefined) => void) | undefined;
  #reason: string | undefined;
  readonly query: Query;
  readonly capacity: number;
  readonly #onCancel: (reason: string) => void;
  constructor(query: Query, capacity: number, onCancel: (reason: string) => void) {
    this.query = query;
    this.capacity = capacity;
    this.#onCancel = onCancel;
  }
  /** False when the buffer is full (the bus then cancels). */
  push(m: EventMessage): boolean {
    const w = this.#waiter;
    if (w !== undefined) {
      this.#waiter = undefined;
      w(m);
      return true;
    }
    if (this.#buffer.length >= this.capacity) return false;
    this.#buffer.push(m);
    return true;
  }
  cancel(reason: string): void {
    if (this.#reason !== undefined) return;
    this.#onCancel(reason);
    this.#reason = reason;
    const w = this.#waiter;
    if (w !== undefined && this.#buffer.length === 0) {
      this.#waiter = undefined;
      w(undefined);
    }
  }
  next(): Promise<EventMessage | undefined> {
    const m = this.#buffer.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.#reason !== undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }
  cancelled(): string | undefined {
    return this.#reason;
  }
}

export class FakeEventBus {
  readonly #subs = new Map<string, Map<string, FakeSubscription>>();
  /** Every cancellation reason, in order (for tests). */
  readonly cancellations: string[] = [];
  /** Ignore requested capacities (an event bus that never drops), to test the RPC's own buffer. */
  readonly #unbounded: boolean;
  constructor(opts: { unbounded?: boolean } = {}) {
    this.#unbounded = opts.unbounded === true;
  }

  subscribe(subscriber: string, query: EventQuery, opts: { capacity?: number } = {}): EventSubscription {
    const q = query as Query;
    let mine = this.#subs.get(subscriber);
    if (mine === undefined) {
      mine = new Map();
      this.#subs.set(subscriber, mine);
    }
    if (mine.has(q.canonical())) throw new FakeServiceError("already subscribed");
    const capacity = this.#unbounded ? Number.POSITIVE_INFINITY : (opts.capacity ?? 1);
    const sub = new FakeSubscription(q, capacity, (r) => this.cancellations.push(r));
    mine.set(q.canonical(), sub);
    return sub;
  }

  unsubscribe(subscriber: string, query: EventQuery): void {
    const mine = this.#subs.get(subscriber);
    const sub = mine?.get(query.canonical());
    if (mine === undefined || sub === undefined) throw new FakeServiceError("subscription not found");
    mine.delete(query.canonical());
    if (mine.size === 0) this.#subs.delete(subscriber);
    sub.cancel("unsubscribed");
  }

  unsubscribeAll(subscriber: string): void {
    const mine = this.#subs.get(subscriber);
    if (mine === undefined) throw new FakeServiceError("subscription not found");
    this.#subs.delete(subscriber);
    for (const sub of mine.values()) sub.cancel("unsubscribed");
  }

  numClients(): number {
    return this.#subs.size;
  }

  numClientSubscriptions(subscriber: string): number {
    return this.#subs.get(subscriber)?.size ?? 0;
  }

  /** Publishes to every matching subscription; a full buffer cancels that subscription. */
  publish(type: string, data: unknown, extra: Record<string, string[]> = {}): void {
    const events: Record<string, string[]> = { ...extra, "tm.event": [type] };
    for (const [subscriber, mine] of this.#subs) {
      for (const [key, sub] of mine) {
        if (!sub.query.matches(events)) continue;
        if (!sub.push({ type, data, events })) {
          mine.delete(key);
          sub.cancel("internal subscription event buffer is out of capacity");
        }
      }
      if (mine.size === 0) this.#subs.delete(subscriber);
    }
  }

  /** Node shutdown: every subscription ends with "CometBFT exited" (no reason). */
  close(): void {
    for (const mine of this.#subs.values()) for (const sub of mine.values()) sub.cancel("CometBFT exited");
    this.#subs.clear();
  }
}

/** Composite-key map of ABCI events, as the bus builds it. */
function eventsMap(events: readonly AbciEvent[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of events) {
    for (const a of e.attributes) {
      const k = `${e.type}.${a.key}`;
      out[k] ??= [];
      out[k].push(a.value);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixed data.

function validator(n: number, power: bigint, prio: bigint): Validator {
  const pubKey: PubKey = { type: "ed25519", bytes: fixed(n) };
  return { address: addressFromPubKey(pubKey), pubKey, votingPower: power, proposerPriority: prio };
}

/** Three validators; the first (power 10) is this node. */
export const VALIDATORS: readonly Validator[] = [validator(1, 10n, -5n), validator(2, 5n, 3n), validator(3, 5n, 2n)];

const VALIDATOR_SET: ValidatorSetView = {
  validators: VALIDATORS,
  getProposer: () => VALIDATORS[1],
};

const CONSENSUS_PARAMS: ConsensusParams = {
  block: { maxBytes: 22020096n, maxGas: -1n },
  evidence: { maxAgeNumBlocks: 100000n, maxAgeDurationNs: 172800000000000n, maxBytes: 1048576n },
  validator: { pubKeyTypes: ["ed25519"] },
  version: { app: 0n },
  abci: { voteExtensionsEnableHeight: 0n },
};

const ZERO_ID: BlockId = { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };

const TXS_BY_HEIGHT: Record<number, string[]> = {
  2: ["name=satoshi", "creator=Cosmoshi"],
  4: ["k=v<&>"],
};

const txsAt = (h: number) => (TXS_BY_HEIGHT[h] ?? []).map((t) => new Uint8Array(Buffer.from(t)));
const timeAt = (h: number): Timestamp => T0 + BigInt(h) * 1_000_000_000n + 100_000_000n;

function headerAt(h: number): Header {
  return {
    version: { block: 11n, app: 1n },
    chainId: CHAIN_ID,
    height: h,
    time: timeAt(h),
    lastBlockId: h === 1 ? ZERO_ID : blockIdAt(h - 1),
    lastCommitHash: fixed(0x10),
    dataHash: fixed(0x11),
    validatorsHash: fixed(0x12),
    nextValidatorsHash: fixed(0x12),
    consensusHash: fixed(0x13),
    appHash: sha256(`app:${h - 1}`),
    lastResultsHash: fixed(0x14),
    evidenceHash: fixed(0x15),
    proposerAddress: (VALIDATORS[0] as Validator).address,
  };
}

/** The block hash is types/' headerHash of the fixed header. */
export function blockIdAt(h: number): BlockId {
  const hash = headerHash(headerAt(h));
  if (hash === undefined) throw new FakeServiceError(`header ${h} has no hash`);
  return { hash, partSetHeader: { total: 1, hash: fixed(0x20 + h) } };
}

function commitFor(h: number): Commit {
  const v = VALIDATORS[0] as Validator;
  return {
    height: h,
    round: 0,
    blockId: blockIdAt(h),
    signatures: [{ blockIdFlag: 2, validatorAddress: v.address, timestamp: timeAt(h), signature: fixed(0x30) }],
  };
}

export function blockAt(h: number): Block {
  return {
    header: headerAt(h),
    data: { txs: txsAt(h) },
    evidence: [],
    lastCommit: h === 1 ? { height: 0, round: 0, blockId: ZERO_ID, signatures: [] } : commitFor(h - 1),
  };
}

function txResult(tx: string): ExecTxResult {
  return {
    code: 0,
    data: new Uint8Array(0),
    log: "",
    info: "",
    gasWanted: 10n,
    gasUsed: 1n,
    events: [
      {
        type: "app",
        attributes: [
          { key: "creator", value: "Cosmoshi Netowoko", index: true },
          { key: "key", value: tx.split("=")[0] ?? "", index: true },
          { key: "noindex_key", value: "x", index: false },
        ],
      },
    ],
    codespace: "",
  };
}

export function finalizeAt(h: number): FinalizeBlockResponse {
  return {
    events: [
      { type: "begin_event", attributes: [{ key: "foo", value: "100", index: true }] },
      { type: "end_event", attributes: [{ key: "mode", value: "EndBlock", index: false }] },
    ],
    txResults: (TXS_BY_HEIGHT[h] ?? []).map(txResult),
    validatorUpdates: h === 3 ? [{ pubKey: { type: "ed25519", bytes: fixed(4) }, power: 7n }] : [],
    ...(h === 3 ? { consensusParamUpdates: CONSENSUS_PARAMS } : {}),
    appHash: sha256(`app:${h}`),
  };
}

function metaAt(h: number): BlockMeta {
  return { blockId: blockIdAt(h), blockSize: 500 + h, header: headerAt(h), numTxs: txsAt(h).length };
}

const GENESIS: GenesisDoc = {
  genesisTime: T0,
  chainId: CHAIN_ID,
  initialHeight: 1,
  consensusParams: CONSENSUS_PARAMS,
  validators: VALIDATORS.map((v, i) => ({
    address: v.address,
    pubKey: v.pubKey,
    power: v.votingPower,
    name: `val${i}`,
  })),
  appHash: new Uint8Array(0),
  appState: '{ "accounts": [ {"name": "<alice>", "balance": "100"} ] }',
};

const ROUND_STATE: RoundStateView = {
  height: LATEST_HEIGHT + 1,
  round: 0,
  step: 1,
  startTime: timeAt(LATEST_HEIGHT) + 2_000_000_000n,
  commitTime: timeAt(LATEST_HEIGHT) + 1_000_000_000n,
  validators: VALIDATOR_SET,
  proposal: undefined,
  proposalBlock: undefined,
  proposalBlockParts: undefined,
  lockedRound: -1,
  lockedBlock: undefined,
  lockedBlockParts: undefined,
  validRound: -1,
  validBlock: undefined,
  validBlockParts: undefined,
  votes: [],
  commitRound: -1,
  lastCommit: undefined,
  lastValidators: VALIDATOR_SET,
  triggeredTimeoutPrecommit: false,
};

function checkTxResponse(tx: Uint8Array): CheckTxResponse {
  const bad = Buffer.from(tx).toString("utf8").startsWith("bad");
  return {
    code: bad ? 1 : 0,
    data: new Uint8Array(0),
    log: bad ? "bad tx" : "",
    info: "",
    gasWanted: 1n,
    gasUsed: 0n,
    events: [],
    codespace: bad ? "app" : "",
  };
}

export interface FakeNode {
  services: CometServices;
  bus: FakeEventBus;
  mempoolTxs: Uint8Array[];
  evidenceAdded: Evidence[];
  /** Publishes a Tx event for `tx` at `height`, as consensus would on commit. */
  includeTx(tx: Uint8Array, height: number): void;
}

const inRange = (h: number) => h >= 1 && h <= LATEST_HEIGHT;

function heightOfHash(hash: Uint8Array): number | undefined {
  for (let h = 1; h <= LATEST_HEIGHT; h++) if (bytesEqual(blockIdAt(h).hash, hash)) return h;
  return undefined;
}

/** A fake node at height 6; its mempool admits txs that no block ever includes. */
export function createFakeNode(opts: { txIndex?: boolean; unboundedBus?: boolean } = {}): FakeNode {
  const bus = new FakeEventBus({ unbounded: opts.unboundedBus === true });
  const mempoolTxs: Uint8Array[] = [];
  const evidenceAdded: Evidence[] = [];
  const services: CometServices = {
    blocks: {
      base: () => 1,
      height: () => LATEST_HEIGHT,
      loadBlock: (h) => (inRange(h) ? blockAt(h) : undefined),
      loadBlockByHash: (hash) => {
        const h = heightOfHash(hash);
        return h === undefined ? undefined : blockAt(h);
      },
      loadBlockMeta: (h) => (inRange(h) ? metaAt(h) : undefined),
      loadBlockMetaByHash: (hash) => {
        const h = heightOfHash(hash);
        return h === undefined ? undefined : metaAt(h);
      },
      loadBlockCommit: (h) => (h >= 1 && h < LATEST_HEIGHT ? commitFor(h) : undefined),
      loadSeenCommit: (h) => (h === LATEST_HEIGHT ? commitFor(h) : undefined),
    },
    state: {
      loadValidators: (h) => (h >= 1 && h <= LATEST_HEIGHT + 1 ? VALIDATOR_SET : undefined),
      loadConsensusParams: (h) => (h >= 1 && h <= LATEST_HEIGHT + 1 ? CONSENSUS_PARAMS : undefined),
      loadFinalizeBlockResponse: (h) => (inRange(h) ? finalizeAt(h) : undefined),
    },
    app: {
      info: async () => ({
        data: "fake-app",
        version: "1.0.0",
        appVersion: 1n,
        lastBlockHeight: LATEST_HEIGHT,
        lastBlockAppHash: sha256(`app:${LATEST_HEIGHT}`),
      }),
      query: async (req) => {
        if (req.path === "/hang") await new Promise(() => undefined);
        return {
          code: 0,
          log: "",
          info: "",
          index: 0n,
          key: req.data,
          value: new Uint8Array(0),
          proofOps: undefined,
          height: LATEST_HEIGHT,
          codespace: "",
        };
      },
      checkTx: async (req) => checkTxResponse(req.tx),
    },
    mempool: {
      checkTx: async (tx) => {
        if (mempoolTxs.some((t) => bytesEqual(t, tx))) throw new FakeServiceError("tx already exists in cache");
        const res = checkTxResponse(tx);
        if (res.code === 0) mempoolTxs.push(tx);
        return res;
      },
      reapMaxTxs: (max) => mempoolTxs.slice(0, max),
      size: () => mempoolTxs.length,
      sizeBytes: () => mempoolTxs.reduce((n, t) => n + t.length, 0),
      flush: () => {
        mempoolTxs.length = 0;
      },
    },
    events: bus,
    // events/' own wait: nothing here commits blocks, so a wait ends by its timeout.
    txWaits: new TxInclusion(),
    parseQuery,
    consensus: { roundStateView: () => ROUND_STATE, peerStateViews: () => [] },
    indexer: {
      txIndexEnabled: opts.txIndex !== false,
      blockIndexEnabled: opts.txIndex !== false,
      getTx: () => undefined,
      searchTxs: () => [],
      searchBlocks: () => [],
    },
    node: {
      nodeInfo: () => ({
        protocolVersion: { p2p: 8n, block: 11n, app: 1n },
        id: "dd".repeat(20),
        listenAddr: "tcp://0.0.0.0:26656",
        network: CHAIN_ID,
        version: "0.38.25",
        channels: Buffer.from("40202122233038606100", "hex"),
        moniker: "node0",
        other: { txIndex: opts.txIndex === false ? "off" : "on", rpcAddress: "tcp://127.0.0.1:26657" },
      }),
      validatorPubKey: () => (VALIDATORS[0] as Validator).pubKey,
      isCatchingUp: () => false,
    },
    types: { formatVote, headerHash, txHash, proofsFromByteSlices, addressFromPubKey },
    genesis: GENESIS,
    p2p: {
      isListening: () => true,
      listeners: () => ["Listener(@)"],
      peers: () => [],
      dialSeeds: () => undefined,
      addPersistentPeers: () => undefined,
      addUnconditionalPeerIds: () => undefined,
      addPrivatePeerIds: () => undefined,
      dialPeers: () => undefined,
    },
    evidence: {
      validateBasic: () => undefined,
      addEvidence: (ev) => {
        evidenceAdded.push(ev);
      },
      hash: hashEvidence,
    },
  };
  return {
    services,
    bus,
    mempoolTxs,
    evidenceAdded,
    includeTx(tx, height) {
      const result = txResult(Buffer.from(tx).toString("utf8"));
      bus.publish(
        "Tx",
        { height, index: 0, tx, result },
        { ...eventsMap(result.events), "tx.hash": [bytesToHexUpper(sha256(tx))], "tx.height": [String(height)] },
      );
    },
  };
}
