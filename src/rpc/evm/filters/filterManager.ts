import type { Clock } from "../../../util/clock.js";
import type { WireValue } from "../../jsonrpc/index.js";
import { toData } from "../encode/hex.js";
import { encodeLog } from "../encode/receipt.js";
import { invalidParams, serverError } from "../errors.js";
import { newRpcId } from "../ids.js";
import type { FilterCriteria } from "../params.js";
import type { EvmLog, EvmServices } from "../services.js";
import type { EvmRpcSettings } from "../settings.js";
import type { BlockEvent, ChainFeed } from "../subscriptions/chainFeed.js";
import { getLogs, PENDING_LOGS_UNSUPPORTED } from "./getLogs.js";
import { logMatches } from "./match.js";

/**
 * Polling filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter): each
 * buffers what arrived since its last eth_getFilterChanges. A filter nobody polls for
 * `timeoutMs` (geth: 5 minutes) is removed; polling restarts the timer, eth_getFilterLogs does
 * not. filter-cap counts every live filter. Buffers keep the newest entries when they overflow
 * (Cosmos EVM's ring sizes).
 */

export const FILTER_TIMEOUT_MS = 5 * 60 * 1000;
const MAX_BLOCK_HASHES = 4096;
const MAX_TX_HASHES = 32768;
const MAX_LOGS = 65536;

type FilterBody =
  | { readonly kind: "blocks"; items: Uint8Array[] }
  | { readonly kind: "pending"; items: Uint8Array[] }
  | { readonly kind: "logs"; readonly criteria: FilterCriteria; items: EvmLog[] };

type Filter = FilterBody & { cancelTimer: () => void };

function pushCapped<T>(list: T[], items: readonly T[], max: number): void {
  list.push(...items);
  if (list.length > max) list.splice(0, list.length - max);
}

export class FilterManager {
  readonly #filters = new Map<string, Filter>();
  readonly #services: EvmServices;
  readonly #feed: ChainFeed;
  readonly #clock: Clock;
  readonly #settings: EvmRpcSettings;
  readonly #timeoutMs: number;
  #stopFeed: (() => void)[] = [];

  constructor(deps: {
    services: EvmServices;
    feed: ChainFeed;
    clock: Clock;
    settings: EvmRpcSettings;
    timeoutMs?: number;
  }) {
    this.#services = deps.services;
    this.#feed = deps.feed;
    this.#clock = deps.clock;
    this.#settings = deps.settings;
    this.#timeoutMs = deps.timeoutMs ?? FILTER_TIMEOUT_MS;
  }

  /** Live filters (all kinds). */
  size(): number {
    return this.#filters.size;
  }

  newLogFilter(criteria: FilterCriteria): string {
    if (criteria.fromBlock?.kind === "tag" && criteria.fromBlock.tag === "pending") {
      throw serverError(PENDING_LOGS_UNSUPPORTED);
    }
    if (criteria.toBlock?.kind === "tag" && criteria.toBlock.tag === "pending") {
      throw serverError(PENDING_LOGS_UNSUPPORTED);
    }
    // geth's NewFilter: a numbered range that ends before it starts.
    const from = criteria.fromBlock?.kind === "number" ? criteria.fromBlock.number : undefined;
    const to = criteria.toBlock?.kind === "number" ? criteria.toBlock.number : undefined;
    if (from !== undefined && to !== undefined && from > 0 && to > 0 && from > to) {
      throw invalidParams("invalid block range params");
    }
    return this.#install({ kind: "logs", criteria, items: [] }, "error creating filter: max limit reached");
  }

  newBlockFilter(): string {
    return this.#install({ kind: "blocks", items: [] }, "error creating block filter: max limit reached");
  }

  newPendingTransactionFilter(): string {
    return this.#install({ kind: "pending", items: [] }, "error creating pending tx filter: max limit reached");
  }

  /** eth_getFilterChanges: what arrived since the last poll; restarts the expiry timer. */
  changes(id: string): WireValue {
    const f = this.#filters.get(id);
    if (f === undefined) throw serverError("filter not found");
    f.cancelTimer();
    f.cancelTimer = this.#clock.schedule(this.#timeoutMs, () => this.uninstall(id));
    if (f.kind === "logs") {
      const logs = f.items;
      f.items = [];
      return logs.map(encodeLog);
    }
    const hashes = f.items;
    f.items = [];
    return hashes.map(toData);
  }

  /** eth_getFilterLogs: runs a log filter's criteria as eth_getLogs. */
  async logs(id: string): Promise<readonly EvmLog[]> {
    const f = this.#filters.get(id);
    if (f === undefined || f.kind !== "logs") throw serverError("filter not found");
    return getLogs(f.criteria, this.#services, this.#settings);
  }

  /** Drops what filters collected (a dev chain was rolled back: those blocks and txs are gone). */
  forgetCollected(): void {
    for (const f of this.#filters.values()) f.items = [];
  }

  uninstall(id: string): boolean {
    const f = this.#filters.get(id);
    if (f === undefined) return false;
    f.cancelTimer();
    this.#filters.delete(id);
    if (this.#filters.size === 0) this.#detach();
    return true;
  }

  close(): void {
    for (const f of this.#filters.values()) f.cancelTimer();
    this.#filters.clear();
    this.#detach();
  }

  #install(body: FilterBody, capMessage: string): string {
    const cap = this.#settings.filterCap;
    if (cap > 0 && this.#filters.size >= cap) throw serverError(capMessage);
    const id = newRpcId();
    const cancelTimer = this.#clock.schedule(this.#timeoutMs, () => this.uninstall(id));
    this.#filters.set(id, { ...body, cancelTimer } as Filter);
    if (this.#stopFeed.length === 0) this.#attach();
    return id;
  }

  #attach(): void {
    this.#stopFeed = [
      this.#feed.onBlock((e) => this.#onBlock(e), {
        withLogs: () => [...this.#filters.values()].some((f) => f.kind === "logs"),
      }),
      this.#feed.onPendingTransaction((hash) => {
        for (const f of this.#filters.values()) if (f.kind === "pending") pushCapped(f.items, [hash], MAX_TX_HASHES);
      }),
    ];
  }

  #detach(): void {
    for (const stop of this.#stopFeed.splice(0)) stop();
  }

  #onBlock(e: BlockEvent): void {
    const height = e.block.number;
    for (const f of this.#filters.values()) {
      if (f.kind === "blocks") pushCapped(f.items, [e.block.hash], MAX_BLOCK_HASHES);
      else if (f.kind === "logs") {
        const c = f.criteria;
        if (c.blockHash !== undefined && Buffer.compare(c.blockHash, e.block.hash) !== 0) continue;
        if (c.fromBlock?.kind === "number" && height < c.fromBlock.number) continue;
        if (c.toBlock?.kind === "number" && height > c.toBlock.number) continue;
        const matched = e.logs.filter((l) => logMatches(l, c.addresses, c.topics));
        if (matched.length > 0) pushCapped(f.items, matched, MAX_LOGS);
      }
    }
  }
}
