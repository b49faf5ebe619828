import { createHash } from "node:crypto";
import type { AbciEvent, CheckTxResponse, ExecTxResult, FinalizeBlockResponse } from "../../../types/abci.js";
import type { Block, BlockMeta, Commit, CommitSig, Header } from "../../../types/block.js";
import type { BlockId } from "../../../types/blockId.js";
import type { Evidence } from "../../../types/evidence.js";
import type { GenesisDoc } from "../../../types/genesis.js";
import type { PubKey } from "../../../types/keys.js";
import type { ConsensusParams } from "../../../types/params.js";
import type { Validator } from "../../../types/validator.js";
import type { Vote } from "../../../types/vote.js";
import { bytesEqual, bytesToHexUpper, compareBytes } from "../../../util/bytes.js";
import { ComethError } from "../../../util/errors.js";
import { formatRfc3339Nano, GO_ZERO_TIME, type Timestamp } from "../../../util/time.js";
import type {
  CometServices,
  EventMessage,
  EventQuery,
  EventSubscription,
  IndexedTx,
  MerkleProofView,
  PeerStateView,
  RoundStateView,
  ValidatorSetView,
  VoteSetView,
} from "../services.js";

/**
 * In-memory stand-ins for the node's subsystems, built from domain types: a 6-block chain with
 * three validators, an event bus with bounded subscriptions, a query parser, a tx indexer, a
 * mempool, an app and consensus views. Test support only.
 */

export const sha256 = (data: Uint8Array | string): Uint8Array =>
  new Uint8Array(createHash("sha256").update(data).digest());

export const CHAIN_ID = "test-chain-Xy1bZ9";
export const LATEST_HEIGHT = 6;
const T0: Timestamp = 1_704_067_200_000_000_000n; // 2024-01-01T00:00:00Z

/** A named test failure (src/ code never throws bare Error). */
export class FakeServiceError extends ComethError {}

// ---------------------------------------------------------------------------------------------
// Merkle (RFC 6962) and vote text, as types/ provides them.

function leafHash(b: Uint8Array): Uint8Array {
  return sha256(Buffer.concat([Buffer.from([0]), b]));
}
function innerHash(l: Uint8Array, r: Uint8Array): Uint8Array {
  return sha256(Buffer.concat([Buffer.from([1]), l, r]));
}
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
function merkleRoot(items: Uint8Array[]): Uint8Array {
  if (items.length === 0) return sha256(new Uint8Array(0));
  if (items.length === 1) return leafHash(items[0] as Uint8Array);
  const k = splitPoint(items.length);
  return innerHash(merkleRoot(items.slice(0, k)), merkleRoot(items.slice(k)));
}
function auntsFor(items: Uint8Array[], index: number): Uint8Array[] {
  if (items.length <= 1) return [];
  const k = splitPoint(items.length);
  if (index < k) return [...auntsFor(items.slice(0, k), index), merkleRoot(items.slice(k))];
  return [...auntsFor(items.slice(k), index - k), merkleRoot(items.slice(0, k))];
}
export function proofsFromByteSlices(items: Uint8Array[]): { root: Uint8Array; proofs: MerkleProofView[] } {
  return {
    root: merkleRoot(items),
    proofs: items.map((item, index) => ({
      total: items.length,
      index,
      leafHash: leafHash(item),
      aunts: auntsFor(items, index),
    })),
  };
}

const fp = (b: Uint8Array) => bytesToHexUpper(b.subarray(0, 6)).padEnd(12, "0");

/** CometBFT Vote.String(). */
export function formatVote(v: Vote): string {
  const typeName = v.type === 1 ? "SIGNED_MSG_TYPE_PREVOTE(Prevote)" : "SIGNED_MSG_TYPE_PRECOMMIT(Precommit)";
  const round = v.round.toString().padStart(2, "0");
  return `Vote{${v.validatorIndex}:${fp(v.validatorAddress)} ${v.height}/${round}/${typeName} ${fp(v.blockId.hash)} ${fp(v.signature)} ${fp(v.extension)} @ ${formatRfc3339Nano(v.timestamp)}}`;
}

// ---------------------------------------------------------------------------------------------
// Queries and the event bus.

export interface FakeCondition {
  tag: string;
  op: "=" | "<" | "<=" | ">" | ">=" | "CONTAINS" | "EXISTS";
  value: string | number | undefined;
}

export class FakeQuery implements EventQuery {
  readonly text: string;
  readonly conditions: FakeCondition[];
  constructor(text: string, conditions: FakeCondition[]) {
    this.text = text;
    this.conditions = conditions;
  }
  canonical(): string {
    return this.conditions
      .map((c) =>
        c.op === "EXISTS"
          ? `${c.tag} EXISTS`
          : `${c.tag} ${c.op} ${typeof c.value === "string" ? `'${c.value}'` : String(c.value)}`,
      )
      .join(" AND ");
  }
  matches(events: Readonly<Record<string, readonly string[]>>): boolean {
    return this.conditions.every((c) => {
      const values = events[c.tag];
      if (values === undefined) return false;
      if (c.op === "EXISTS") return true;
      return values.some((v) => {
        if (c.op === "=") return typeof c.value === "number" ? Number(v) === c.value : v === c.value;
        if (c.op === "CONTAINS") return v.includes(String(c.value));
        const n = Number(v);
        const want = Number(c.value);
        if (Number.isNaN(n)) return false;
        return c.op === "<" ? n < want : c.op === "<=" ? n <= want : c.op === ">" ? n > want : n >= want;
      });
    });
  }
}

/** A small version of the events/ parser: `tag op value {AND ...}`; errors read "offset N: ...". */
export function parseQuery(text: string): FakeQuery {
  const re = /\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*(<=|>=|=|<|>|CONTAINS|EXISTS)\s*('([^']*)'|(\d+(?:\.\d+)?))?\s*/y;
  const conditions: FakeCondition[] = [];
  let pos = 0;
  if (text.trim() === "") throw new FakeServiceError("offset 0: got EOF, wanted tag");
  for (;;) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (m === null)
      throw new FakeServiceError(`offset ${pos}: got ${JSON.stringify(text.slice(pos, pos + 1))}, wanted tag`);
    const op = m[2] as FakeCondition["op"];
    const hasArg = m[3] !== undefined;
    if ((op === "EXISTS") === hasArg) {
      throw new FakeServiceError(
        `offset ${re.lastIndex}: got EOF, wanted ${op === "EXISTS" ? "AND" : "string or number"}`,
      );
    }
    const isString = m[4] !== undefined;
    if (isString && op !== "=" && op !== "CONTAINS") {
      throw new FakeServiceError(`offset ${pos}: got string, wanted number, timestamp or datestamp`);
    }
    if (!isString && op === "CONTAINS") throw new FakeServiceError(`offset ${pos}: got number, wanted string`);
    conditions.push({ tag: m[1] as string, op, value: m[4] ?? (m[5] !== undefined ? Number(m[5]) : undefined) });
    pos = re.lastIndex;
    if (pos >= text.length) break;
    if (!text.startsWith("AND", pos)) {
      throw new FakeServiceError(`offset ${pos}: got ${JSON.stringify(text.slice(pos, pos + 3))}, wanted AND`);
    }
    pos += 3;
  }
  return new FakeQuery(text, conditions);
}

class FakeSubscription implements EventSubscription {
  private readonly buffer: EventMessage[] = [];
  private waiter: ((m: EventMessage | undefined) => void) | undefined;
  private reason: string | undefined;
  readonly query: FakeQuery;
  readonly capacity: number;
  private readonly onCancel: ((reason: string) => void) | undefined;
  constructor(query: FakeQuery, capacity: number, onCancel?: (reason: string) => void) {
    this.query = query;
    this.capacity = capacity;
    this.onCancel = onCancel;
  }
  /** False when the buffer is full (the bus then cancels). */
  push(m: EventMessage): boolean {
    if (this.waiter !== undefined) {
      const w = this.waiter;
      this.waiter = undefined;
      w(m);
      return true;
    }
    if (this.buffer.length >= this.capacity) return false;
    this.buffer.push(m);
    return true;
  }
  cancel(reason: string): void {
    if (this.reason !== undefined) return;
    this.onCancel?.(reason);
    this.reason = reason;
    if (this.waiter !== undefined && this.buffer.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      w(undefined);
    }
  }
  next(): Promise<EventMessage | undefined> {
    const m = this.buffer.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.reason !== undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
  cancelled(): string | undefined {
    return this.reason;
  }
}

export class FakeEventBus {
  private readonly subs = new Map<string, Map<string, FakeSubscription>>();
  /** Every cancellation reason, in order (for tests). */
  readonly cancellations: string[] = [];
  /** Ignore requested capacities (an event bus that never drops), to test the RPC's own buffer. */
  private readonly unbounded: boolean;
  constructor(opts: { unbounded?: boolean } = {}) {
    this.unbounded = opts.unbounded === true;
  }

  subscribe(subscriber: string, query: EventQuery, opts: { capacity?: number } = {}): EventSubscription {
    const q = query as FakeQuery;
    let mine = this.subs.get(subscriber);
    if (mine === undefined) {
      mine = new Map();
      this.subs.set(subscriber, mine);
    }
    if (mine.has(q.canonical())) throw new FakeServiceError("already subscribed");
    const capacity = this.unbounded ? Number.POSITIVE_INFINITY : (opts.capacity ?? 1);
    const sub = new FakeSubscription(q, capacity, (r) => this.cancellations.push(r));
    mine.set(q.canonical(), sub);
    return sub;
  }

  unsubscribe(subscriber: string, query: EventQuery): void {
    const mine = this.subs.get(subscriber);
    const sub = mine?.get(query.canonical());
    if (mine === undefined || sub === undefined) throw new FakeServiceError("subscription not found");
    mine.delete(query.canonical());
    if (mine.size === 0) this.subs.delete(subscriber);
    sub.cancel("unsubscribed");
  }

  unsubscribeAll(subscriber: string): void {
    const mine = this.subs.get(subscriber);
    if (mine === undefined) throw new FakeServiceError("subscription not found");
    this.subs.delete(subscriber);
    for (const sub of mine.values()) sub.cancel("unsubscribed");
  }

  numClients(): number {
    return this.subs.size;
  }

  numClientSubscriptions(subscriber: string): number {
    return this.subs.get(subscriber)?.size ?? 0;
  }

  /** Publishes to every matching subscription; a full buffer cancels that subscription. */
  publish(type: string, data: unknown, extra: Record<string, string[]> = {}): void {
    const events: Record<string, string[]> = { ...extra, "tm.event": [type] };
    for (const [subscriber, mine] of this.subs) {
      for (const [key, sub] of mine) {
        if (!sub.query.matches(events)) continue;
        if (!sub.push({ type, data, events })) {
          mine.delete(key);
          sub.cancel("internal subscription event buffer is out of capacity");
        }
      }
      if (mine.size === 0) this.subs.delete(subscriber);
    }
  }

  /** Node shutdown: every subscription ends with "CometBFT exited" (no reason). */
  close(): void {
    for (const mine of this.subs.values()) for (const sub of mine.values()) sub.cancel("CometBFT exited");
    this.subs.clear();
  }
}

/** Composite-key map of ABCI events, as the bus and the indexer build it. */
export function eventsMap(events: readonly AbciEvent[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of events) {
    if (e.type === "") continue;
    for (const a of e.attributes) {
      if (a.key === "") continue;
      const k = `${e.type}.${a.key}`;
      out[k] ??= [];
      out[k].push(a.value);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The chain.

function pubKey(seed: string): PubKey {
  return { type: "ed25519", bytes: sha256(`pub:${seed}`) };
}
export function addressFromPubKey(pk: PubKey): Uint8Array {
  return sha256(pk.bytes).subarray(0, 20);
}

function makeValidators(): Validator[] {
  const vals = [
    { seed: "alice", power: 10n, prio: -5n },
    { seed: "bob", power: 5n, prio: 3n },
    { seed: "carol", power: 5n, prio: 2n },
  ].map(({ seed, power, prio }) => {
    const pk = pubKey(seed);
    return { address: addressFromPubKey(pk), pubKey: pk, votingPower: power, proposerPriority: prio };
  });
  return vals.sort((a, b) =>
    a.votingPower === b.votingPower ? compareBytes(a.address, b.address) : a.votingPower > b.votingPower ? -1 : 1,
  );
}

export const VALIDATORS = makeValidators();
export const NODE_PUB_KEY = pubKey("alice");

export class FakeValidatorSet implements ValidatorSetView {
  readonly validators: readonly Validator[];
  constructor(validators: readonly Validator[]) {
    this.validators = validators;
  }
  getProposer(): Validator | undefined {
    let best: Validator | undefined;
    for (const v of this.validators) if (best === undefined || v.proposerPriority > best.proposerPriority) best = v;
    return best;
  }
}

export const CONSENSUS_PARAMS: ConsensusParams = {
  block: { maxBytes: 22020096n, maxGas: -1n },
  evidence: { maxAgeNumBlocks: 100000n, maxAgeDurationNs: 172800000000000n, maxBytes: 1048576n },
  validator: { pubKeyTypes: ["ed25519"] },
  version: { app: 0n },
  abci: { voteExtensionsEnableHeight: 0n },
};

const ZERO_ID: BlockId = { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };

export const TXS_BY_HEIGHT: Record<number, string[]> = {
  2: ["name=satoshi", "creator=Cosmoshi"],
  4: ["k=v<&>"],
};

export function blockIdAt(h: number): BlockId {
  return { hash: sha256(`block:${h}`), partSetHeader: { total: 1, hash: sha256(`parts:${h}`) } };
}

function timeAt(h: number): Timestamp {
  return T0 + BigInt(h) * 1_000_000_000n + 100_000_000n;
}

function commitFor(h: number): Commit {
  const signatures: CommitSig[] = VALIDATORS.map((v, i) =>
    i === 2
      ? { blockIdFlag: 1, validatorAddress: new Uint8Array(0), timestamp: GO_ZERO_TIME, signature: new Uint8Array(0) }
      : {
          blockIdFlag: 2,
          validatorAddress: v.address,
          timestamp: timeAt(h) + 1_000_000n,
          signature: sha256(`sig:${h}:${i}`),
        },
  );
  return { height: h, round: 0, blockId: blockIdAt(h), signatures };
}

function txResult(tx: string, index: number): ExecTxResult {
  return {
    code: tx.startsWith("fail") ? 5 : 0,
    data: index === 0 ? new Uint8Array(0) : Buffer.from("ok"),
    log: "",
    info: "",
    gasWanted: 10n,
    gasUsed: BigInt(index + 1),
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
  const txs = TXS_BY_HEIGHT[h] ?? [];
  return {
    events: [
      { type: "begin_event", attributes: [{ key: "foo", value: "100", index: true }] },
      { type: "end_event", attributes: [{ key: "mode", value: "EndBlock", index: false }] },
    ],
    txResults: txs.map(txResult),
    validatorUpdates: h === 3 ? [{ pubKey: pubKey("dave"), power: 7n }] : [],
    ...(h === 3 ? { consensusParamUpdates: CONSENSUS_PARAMS } : {}),
    appHash: sha256(`app:${h}`),
  };
}

function headerAt(h: number): Header {
  const txs = (TXS_BY_HEIGHT[h] ?? []).map((t) => Buffer.from(t));
  return {
    version: { block: 11n, app: h >= 5 ? 1n : 0n },
    chainId: CHAIN_ID,
    height: h,
    time: timeAt(h),
    lastBlockId: h === 1 ? ZERO_ID : blockIdAt(h - 1),
    lastCommitHash: sha256(`lch:${h}`),
    dataHash: merkleRoot(txs.map((t) => sha256(t))),
    validatorsHash: sha256("vals"),
    nextValidatorsHash: sha256("vals"),
    consensusHash: sha256("cp"),
    appHash: sha256(`app:${h - 1}`),
    lastResultsHash: h === 1 ? new Uint8Array(0) : sha256(`lrh:${h}`),
    evidenceHash: sha256(""),
    proposerAddress: (VALIDATORS[h % VALIDATORS.length] as Validator).address,
  };
}

export function blockAt(h: number): Block {
  return {
    header: headerAt(h),
    data: { txs: (TXS_BY_HEIGHT[h] ?? []).map((t) => new Uint8Array(Buffer.from(t))) },
    evidence: [],
    lastCommit: h === 1 ? { height: 0, round: 0, blockId: ZERO_ID, signatures: [] } : commitFor(h - 1),
  };
}

function metaAt(h: number): BlockMeta {
  return { blockId: blockIdAt(h), blockSize: 500 + h, header: headerAt(h), numTxs: (TXS_BY_HEIGHT[h] ?? []).length };
}

export const GENESIS: GenesisDoc = {
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
  appState: '{ "accounts": [ {"name": "<alice>", "balance": "100"} ], "2": 1, "1": 2 }',
};

export function indexedTxs(): IndexedTx[] {
  const out: IndexedTx[] = [];
  for (const [h, txs] of Object.entries(TXS_BY_HEIGHT)) {
    txs.forEach((t, index) => {
      out.push({ height: Number(h), index, tx: new Uint8Array(Buffer.from(t)), result: txResult(t, index) });
    });
  }
  return out;
}

function txEvents(r: IndexedTx): Record<string, string[]> {
  return {
    ...eventsMap(r.result.events.map((e) => ({ ...e, attributes: e.attributes.filter((a) => a.index) }))),
    "tx.hash": [bytesToHexUpper(sha256(r.tx))],
    "tx.height": [String(r.height)],
  };
}

function voteAt(h: number, round: number, type: 1 | 2, i: number): Vote {
  const v = VALIDATORS[i] as Validator;
  return {
    type,
    height: h,
    round,
    blockId: blockIdAt(h),
    timestamp: timeAt(h) + 1_000_000n,
    validatorAddress: v.address,
    validatorIndex: i,
    signature: sha256(`vote:${h}:${i}`),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
}

function voteSet(votes: (Vote | undefined)[]): VoteSetView {
  let sum = 0n;
  votes.forEach((v, i) => {
    if (v !== undefined) sum += (VALIDATORS[i] as Validator).votingPower;
  });
  return { votes, sum, totalVotingPower: 20n, peerMaj23s: new Map() };
}

export function roundStateView(): RoundStateView {
  const set = new FakeValidatorSet(VALIDATORS);
  const none = [undefined, undefined, undefined];
  return {
    height: LATEST_HEIGHT + 1,
    round: 0,
    step: 1,
    startTime: timeAt(LATEST_HEIGHT) + 2_000_000_000n,
    commitTime: timeAt(LATEST_HEIGHT) + 1_000_000_000n,
    validators: set,
    proposal: undefined,
    proposalBlock: undefined,
    proposalBlockParts: undefined,
    lockedRound: -1,
    lockedBlock: undefined,
    lockedBlockParts: undefined,
    validRound: -1,
    validBlock: undefined,
    validBlockParts: undefined,
    votes: [{ round: 0, prevotes: voteSet(none), precommits: voteSet(none) }],
    commitRound: -1,
    lastCommit: {
      ...voteSet([voteAt(LATEST_HEIGHT, 0, 2, 0), voteAt(LATEST_HEIGHT, 0, 2, 1), undefined]),
      peerMaj23s: new Map([["aa".repeat(20), blockIdAt(LATEST_HEIGHT)]]),
    },
    lastValidators: set,
    triggeredTimeoutPrecommit: false,
  };
}

function peerStates(): PeerStateView[] {
  const bits = (s: string) => ({ size: s.length, get: (i: number) => s[i] === "x" });
  return [
    {
      nodeAddress: `${"bb".repeat(20)}@127.0.0.1:26656`,
      roundState: {
        height: LATEST_HEIGHT + 1,
        round: 0,
        step: 3,
        startTime: timeAt(LATEST_HEIGHT) + 2_000_000_000n,
        proposal: false,
        proposalBlockPartSetHeader: { total: 0, hash: new Uint8Array(0) },
        proposalBlockParts: undefined,
        proposalPolRound: -1,
        proposalPol: undefined,
        prevotes: bits("x__"),
        precommits: bits("___"),
        lastCommitRound: 0,
        lastCommit: bits("xx_"),
        catchupCommitRound: -1,
        catchupCommit: undefined,
      },
      stats: { votes: 12, blockParts: 3 },
    },
    { nodeAddress: `${"cc".repeat(20)}@127.0.0.1:40000`, roundState: undefined, stats: { votes: 0, blockParts: 0 } },
  ];
}

function checkTxResponse(tx: Uint8Array): CheckTxResponse {
  const text = Buffer.from(tx).toString("utf8");
  const bad = text.startsWith("bad");
  return {
    code: bad ? 1 : 0,
    data: bad ? new Uint8Array(0) : Buffer.from([0xab, 0xcd]),
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
  /** Commits a pending tx: publishes its Tx event as consensus would. */
  includeTx(tx: Uint8Array, height: number): void;
}

/** A fake node at height 6, validator "alice" (power 10) being this node. */
export function createFakeNode(opts: { txIndex?: boolean; unboundedBus?: boolean } = {}): FakeNode {
  const bus = new FakeEventBus({ unbounded: opts.unboundedBus === true });
  const mempoolTxs: Uint8Array[] = [];
  const evidenceAdded: Evidence[] = [];
  const txs = indexedTxs();
  const inRange = (h: number) => h >= 1 && h <= LATEST_HEIGHT;
  const services: CometServices = {
    blocks: {
      base: () => 1,
      height: () => LATEST_HEIGHT,
      loadBlock: (h) => (inRange(h) ? blockAt(h) : undefined),
      loadBlockByHash: (hash) => {
        for (let h = 1; h <= LATEST_HEIGHT; h++) if (bytesEqual(blockIdAt(h).hash, hash)) return blockAt(h);
        return undefined;
      },
      loadBlockMeta: (h) => (inRange(h) ? metaAt(h) : undefined),
      loadBlockMetaByHash: (hash) => {
        for (let h = 1; h <= LATEST_HEIGHT; h++) if (bytesEqual(blockIdAt(h).hash, hash)) return metaAt(h);
        return undefined;
      },
      loadBlockCommit: (h) => (h >= 1 && h < LATEST_HEIGHT ? commitFor(h) : undefined),
      loadSeenCommit: (h) => (h === LATEST_HEIGHT ? commitFor(h) : undefined),
    },
    state: {
      loadValidators: (h) => (h >= 1 && h <= LATEST_HEIGHT + 1 ? new FakeValidatorSet(VALIDATORS) : undefined),
      loadConsensusParams: (h) => (h >= 1 && h <= LATEST_HEIGHT + 1 ? CONSENSUS_PARAMS : undefined),
      loadFinalizeBlockResponse: (h) => (h >= 2 && h <= LATEST_HEIGHT ? finalizeAt(h) : undefined),
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
          code: req.path === "/missing" ? 1 : 0,
          log: req.path === "/missing" ? "not found" : "exists",
          info: "",
          index: 0n,
          key: req.data,
          value: req.path === "/missing" ? new Uint8Array(0) : Buffer.from("value"),
          proofOps: req.prove ? [{ type: "ics23", key: req.data, data: Buffer.from("proof") }] : undefined,
          height: req.height === 0 ? LATEST_HEIGHT : req.height,
          codespace: "",
        };
      },
      checkTx: async (req) => checkTxResponse(req.tx),
    },
    mempool: {
      checkTx: async (tx) => {
        if (mempoolTxs.some((t) => bytesEqual(t, tx))) throw new FakeServiceError("tx already exists in cache");
        if (tx.length > 1024) throw new FakeServiceError(`Tx too large. Max size is 1024, but got ${tx.length}`);
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
    parseQuery,
    consensus: { roundStateView, peerStateViews: peerStates },
    indexer: {
      txIndexEnabled: opts.txIndex !== false,
      blockIndexEnabled: opts.txIndex !== false,
      getTx: (hash) => txs.find((t) => bytesEqual(sha256(t.tx), hash)),
      searchTxs: (query) => txs.filter((t) => (query as FakeQuery).matches(txEvents(t))),
      searchBlocks: (query) => {
        const out: number[] = [];
        for (let h = 1; h <= LATEST_HEIGHT; h++) {
          const ev = { ...eventsMap(h >= 2 ? finalizeAt(h).events : []), "block.height": [String(h)] };
          if ((query as FakeQuery).matches(ev)) out.push(h);
        }
        return out;
      },
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
      validatorPubKey: () => NODE_PUB_KEY,
      isCatchingUp: () => false,
    },
    types: {
      formatVote,
      headerHash: (h) => sha256(`header:${h.height}`),
      txHash: (tx) => sha256(tx),
      proofsFromByteSlices,
      addressFromPubKey,
    },
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
      validateBasic: (ev) => {
        if (ev.voteA.height !== ev.voteB.height) throw new FakeServiceError("votes are for different heights");
      },
      addEvidence: (ev) => {
        evidenceAdded.push(ev);
      },
      hash: (ev) => sha256(`evidence:${ev.voteA.height}`),
    },
  };
  return {
    services,
    bus,
    mempoolTxs,
    evidenceAdded,
    includeTx(tx, height) {
      const result = txResult(Buffer.from(tx).toString("utf8"), 0);
      bus.publish(
        "Tx",
        { height, index: 0, tx, result },
        { ...eventsMap(result.events), "tx.hash": [bytesToHexUpper(sha256(tx))], "tx.height": [String(height)] },
      );
    },
  };
}
