import {
  type AbciEvent,
  type Block,
  type BlockId,
  type Evidence,
  type ExecTxResult,
  type FinalizeBlockResponse,
  type Header,
  txHash,
  type Validator,
  type Vote,
} from "../types/index.js";
import { bytesToHexUpper } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import {
  AlreadySubscribedError,
  EventBusClosedError,
  InvalidCapacityError,
  SubscribeAbortedError,
  SubscriptionNotFoundError,
} from "./errors.js";
import { type EventsMap, QUERY_OPS, type Query } from "./query.js";

/**
 * The node's event bus (CometBFT types/event_bus.go over libs/pubsub). Consensus and block
 * execution publish; RPC subscriptions (and broadcast_tx_commit) consume. publish() is
 * synchronous and never waits for a consumer: it runs inside consensus, so a subscriber that falls
 * behind its bounded buffer is cancelled instead.
 */

/** Payload of the consensus events that carry only the round state. */
export interface RoundStateEvent {
  height: number;
  round: number;
  /** The RoundStep name, e.g. "RoundStepPropose". */
  step: string;
}

/** Event name (CometBFT's `tm.event` value) → payload. */
export interface EventMap {
  NewBlock: { block: Block; blockId: BlockId; resultFinalizeBlock: FinalizeBlockResponse };
  NewBlockHeader: { header: Header };
  NewBlockEvents: { height: number; events: AbciEvent[]; numTxs: number };
  Tx: { height: number; index: number; tx: Uint8Array; result: ExecTxResult };
  ValidatorSetUpdates: { validatorUpdates: Validator[] };
  NewEvidence: { height: number; evidence: Evidence };
  NewRound: RoundStateEvent & { proposer: { address: Uint8Array; index: number } };
  CompleteProposal: RoundStateEvent & { blockId: BlockId };
  NewRoundStep: RoundStateEvent;
  Polka: RoundStateEvent;
  Lock: RoundStateEvent;
  Unlock: RoundStateEvent;
  Relock: RoundStateEvent;
  TimeoutPropose: RoundStateEvent;
  TimeoutWait: RoundStateEvent;
  ValidBlock: RoundStateEvent;
  Vote: { vote: Vote };
}
export type EventType = keyof EventMap;

/** Every event name, in CometBFT's types/events.go order. */
export const EVENT_TYPES = [
  "NewBlock",
  "NewBlockHeader",
  "NewBlockEvents",
  "NewEvidence",
  "Tx",
  "ValidatorSetUpdates",
  "CompleteProposal",
  "Lock",
  "NewRound",
  "NewRoundStep",
  "Polka",
  "Relock",
  "TimeoutPropose",
  "TimeoutWait",
  "Unlock",
  "ValidBlock",
  "Vote",
] as const satisfies readonly EventType[];

/** Reserved composite keys the bus (or the indexers) add. */
export const EVENT_KEYS = {
  type: "tm.event",
  txHash: "tx.hash",
  txHeight: "tx.height",
  blockHeight: "block.height",
} as const;

/** Why a subscription ended (libs/pubsub errors; "CometBFT exited" is what RPC says on shutdown). */
export const CANCEL_REASONS = {
  outOfCapacity: "internal subscription event buffer is out of capacity",
  unsubscribed: "client unsubscribed",
  exited: "CometBFT exited",
} as const;

/** CometBFT's experimental_subscription_buffer_size default. */
export const DEFAULT_SUBSCRIPTION_CAPACITY = 200;

/** One published event as a subscriber receives it. */
export type Message = {
  [K in EventType]: { readonly type: K; readonly data: EventMap[K]; readonly events: EventsMap };
}[EventType];

export interface SubscribeOptions {
  /** Buffered messages before the subscription is cancelled as out of capacity (default 200). */
  capacity?: number;
  /** Aborting ends the subscription like unsubscribe. */
  signal?: AbortSignal;
}

export interface Subscription extends AsyncIterable<Message> {
  readonly subscriber: string;
  readonly query: Query;
  /** The next message; undefined once the subscription is cancelled (buffered messages are dropped). */
  next(): Promise<Message | undefined>;
  /** Why it ended, e.g. "internal subscription event buffer is out of capacity"; undefined while live. */
  cancelled(): string | undefined;
  /** Ends the subscription and frees its slot on the bus; no-op once ended. */
  cancel(reason?: string): void;
  /** Aborted (with the reason) when the subscription ends. */
  readonly signal: AbortSignal;
}

/** Composite key → values from ABCI events: `<type>.<key>`, skipping empty types and keys, any index flag. */
export function eventsMapFromAbci(events: readonly AbciEvent[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  for (const event of events) {
    if (event.type.length === 0) continue;
    for (const attr of event.attributes) {
      if (attr.key.length === 0) continue;
      appendValue(out, `${event.type}.${attr.key}`, attr.value);
    }
  }
  return out;
}

function appendValue(map: Record<string, string[]>, key: string, value: string): void {
  const list = map[key];
  if (list === undefined) map[key] = [value];
  else list.push(value);
}

/**
 * The events map of a publication (docs/cometbft-rpc.md §4.1): the app's events (FinalizeBlock events for NewBlock
 * and NewBlockEvents, the tx result's for Tx) unless `base` is given, then `tm.event`, and for Tx
 * `tx.hash` (uppercase hex sha256) and `tx.height`. Values are appended, never replaced.
 */
export function buildEventsMap<K extends EventType>(
  type: K,
  data: EventMap[K],
  base?: Readonly<Record<string, readonly string[]>>,
): Record<string, string[]> {
  let out: Record<string, string[]>;
  if (base !== undefined) {
    out = Object.create(null);
    for (const [key, values] of Object.entries(base)) out[key] = [...values];
  } else if (type === "NewBlock") {
    out = eventsMapFromAbci((data as EventMap["NewBlock"]).resultFinalizeBlock.events);
  } else if (type === "NewBlockEvents") {
    out = eventsMapFromAbci((data as EventMap["NewBlockEvents"]).events);
  } else if (type === "Tx") {
    out = eventsMapFromAbci((data as EventMap["Tx"]).result.events);
  } else {
    out = Object.create(null);
  }
  appendValue(out, EVENT_KEYS.type, type);
  if (type === "Tx") {
    const tx = data as EventMap["Tx"];
    appendValue(out, EVENT_KEYS.txHash, bytesToHexUpper(txHash(tx.tx)));
    appendValue(out, EVENT_KEYS.txHeight, String(tx.height));
  }
  return out;
}

interface QueryEntry {
  query: Query;
  subs: Map<string, BusSubscription>;
  /** The only event type the query can match (`tm.event = 'X'` among its conditions), if it names one. */
  eventType: string | undefined;
}

/** `X` when the query requires `tm.event = 'X'` (tm.event carries exactly the event's type). */
function requiredEventType(query: Query): string | undefined {
  for (const c of query.conditions) {
    if (c.tag === EVENT_KEYS.type && c.op === QUERY_OPS.eq && c.arg?.type === "string") return c.arg.text;
  }
  return undefined;
}

export class EventBus {
  /** canonical query → its subscribers, so each query is matched once per publication. */
  readonly #byQuery = new Map<string, QueryEntry>();
  /** subscriber → canonical query → subscription. */
  readonly #byClient = new Map<string, Map<string, BusSubscription>>();
  #total = 0;
  /** Queries held that match any event type, and those fixed to one type (how many per type). */
  #anyTypeQueries = 0;
  readonly #typedQueries = new Map<string, number>();
  #closed = false;
  readonly #log: Logger | undefined;

  constructor(opts: { log?: Logger } = {}) {
    this.#log = opts.log;
  }

  /** True when at least one subscription is live: callers may skip building costly payloads. */
  hasSubscribers(): boolean {
    return this.#total > 0;
  }

  /**
   * Delivers an event to every matching subscription without waiting. `events` replaces the app
   * events taken from `data`; `tm.event` (and tx.hash/tx.height for Tx) are always added.
   */
  publish<K extends EventType>(type: K, data: EventMap[K], events?: Readonly<Record<string, readonly string[]>>): void {
    if (this.#total === 0) return;
    // Nobody's query can match this type (subscribers to NewBlock do not pay for every Tx event).
    if (this.#anyTypeQueries === 0 && !this.#typedQueries.has(type)) return;
    const map = buildEventsMap(type, data, events);
    const msg = { type, data, events: map } as Message;
    for (const entry of this.#byQuery.values()) {
      if (entry.eventType !== undefined && entry.eventType !== type) continue;
      let match: boolean;
      try {
        match = entry.query.matches(map);
      } catch (err) {
        this.#log?.error({ err, query: entry.query.canonical() }, "failed to match event against query");
        continue;
      }
      if (!match) continue;
      for (const sub of entry.subs.values()) {
        if (!sub.offer(msg)) this.#remove(sub, CANCEL_REASONS.outOfCapacity);
      }
    }
  }

  /** Throws AlreadySubscribedError when `subscriber` already holds a query with the same canonical form. */
  subscribe(subscriber: string, query: Query, opts: SubscribeOptions = {}): Subscription {
    if (this.#closed) throw new EventBusClosedError();
    const capacity = opts.capacity ?? DEFAULT_SUBSCRIPTION_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new InvalidCapacityError(capacity);
    if (opts.signal?.aborted) throw new SubscribeAbortedError(opts.signal.reason);
    const key = query.canonical();
    let clientSubs = this.#byClient.get(subscriber);
    if (clientSubs?.has(key)) throw new AlreadySubscribedError();

    const sub = new BusSubscription(subscriber, query, key, capacity, (s, reason) => this.#remove(s, reason));
    if (clientSubs === undefined) {
      clientSubs = new Map();
      this.#byClient.set(subscriber, clientSubs);
    }
    clientSubs.set(key, sub);
    let entry = this.#byQuery.get(key);
    if (entry === undefined) {
      entry = { query, subs: new Map(), eventType: requiredEventType(query) };
      this.#byQuery.set(key, entry);
      if (entry.eventType === undefined) this.#anyTypeQueries++;
      else this.#typedQueries.set(entry.eventType, (this.#typedQueries.get(entry.eventType) ?? 0) + 1);
    }
    entry.subs.set(subscriber, sub);
    this.#total++;
    if (opts.signal !== undefined) sub.bindSignal(opts.signal);
    return sub;
  }

  /** Throws SubscriptionNotFoundError when `subscriber` does not hold `query` (compared canonically). */
  unsubscribe(subscriber: string, query: Query): void {
    const sub = this.#byClient.get(subscriber)?.get(query.canonical());
    if (sub === undefined) throw new SubscriptionNotFoundError();
    this.#remove(sub, CANCEL_REASONS.unsubscribed);
  }

  /** Throws SubscriptionNotFoundError when `subscriber` holds nothing. */
  unsubscribeAll(subscriber: string): void {
    const subs = this.#byClient.get(subscriber);
    if (subs === undefined) throw new SubscriptionNotFoundError();
    for (const sub of [...subs.values()]) this.#remove(sub, CANCEL_REASONS.unsubscribed);
  }

  /** Live subscriptions, every subscriber's. */
  numSubscriptions(): number {
    return this.#total;
  }

  /** Subscribers holding at least one subscription. */
  numClients(): number {
    return this.#byClient.size;
  }

  numClientSubscriptions(subscriber: string): number {
    return this.#byClient.get(subscriber)?.size ?? 0;
  }

  /** Cancels every subscription; later subscribe() calls throw and publish() does nothing. */
  close(reason: string = CANCEL_REASONS.exited): void {
    this.#closed = true;
    for (const subs of [...this.#byClient.values()]) {
      for (const sub of [...subs.values()]) this.#remove(sub, reason);
    }
  }

  #remove(sub: BusSubscription, reason: string): void {
    const clientSubs = this.#byClient.get(sub.subscriber);
    if (clientSubs?.get(sub.key) === sub) {
      clientSubs.delete(sub.key);
      if (clientSubs.size === 0) this.#byClient.delete(sub.subscriber);
      const entry = this.#byQuery.get(sub.key);
      entry?.subs.delete(sub.subscriber);
      if (entry?.subs.size === 0) {
        this.#byQuery.delete(sub.key);
        if (entry.eventType === undefined) this.#anyTypeQueries--;
        else {
          const n = (this.#typedQueries.get(entry.eventType) ?? 1) - 1;
          if (n === 0) this.#typedQueries.delete(entry.eventType);
          else this.#typedQueries.set(entry.eventType, n);
        }
      }
      this.#total--;
    }
    sub.end(reason);
  }
}

/** A FIFO with amortised O(1) shift. */
class Queue<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#head++;
    if (this.#head > 64 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}

class BusSubscription implements Subscription {
  readonly subscriber: string;
  readonly query: Query;
  readonly key: string;
  readonly #capacity: number;
  readonly #buffer = new Queue<Message>();
  readonly #waiters = new Queue<(msg: Message | undefined) => void>();
  readonly #controller = new AbortController();
  #reason: string | undefined;
  readonly #release: (sub: BusSubscription, reason: string) => void;
  #unbindSignal: (() => void) | undefined;

  constructor(
    subscriber: string,
    query: Query,
    key: string,
    capacity: number,
    release: (sub: BusSubscription, reason: string) => void,
  ) {
    this.subscriber = subscriber;
    this.query = query;
    this.key = key;
    this.#capacity = capacity;
    this.#release = release;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Hands the message to a waiting reader or buffers it; false when the buffer is full. */
  offer(msg: Message): boolean {
    if (this.#reason !== undefined) return true;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter(msg);
      return true;
    }
    if (this.#buffer.length >= this.#capacity) return false;
    this.#buffer.push(msg);
    return true;
  }

  next(): Promise<Message | undefined> {
    if (this.#reason !== undefined) return Promise.resolve(undefined);
    const msg = this.#buffer.shift();
    if (msg !== undefined) return Promise.resolve(msg);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  cancelled(): string | undefined {
    return this.#reason;
  }

  cancel(reason: string = CANCEL_REASONS.unsubscribed): void {
    this.#release(this, reason);
  }

  bindSignal(signal: AbortSignal): void {
    const onAbort = () => this.cancel(CANCEL_REASONS.unsubscribed);
    signal.addEventListener("abort", onAbort, { once: true });
    this.#unbindSignal = () => signal.removeEventListener("abort", onAbort);
  }

  /** Called by the bus once the subscription is out of its tables. */
  end(reason: string): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#buffer.clear();
    this.#unbindSignal?.();
    this.#unbindSignal = undefined;
    for (let w = this.#waiters.shift(); w !== undefined; w = this.#waiters.shift()) w(undefined);
    this.#controller.abort(reason);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Message> {
    for (;;) {
      const msg = await this.next();
      if (msg === undefined) return;
      yield msg;
    }
  }
}
