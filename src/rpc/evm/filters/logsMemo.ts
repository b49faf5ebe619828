import type { EncodedJson } from "../../jsonrpc/index.js";
import type { FilterCriteria } from "../params.js";

/**
 * Encoded eth_getLogs answers by resolved range and filter. Under CometBFT's instant finality a
 * range that ends at or below the head never changes (no reorgs, no pending logs), so an indexer or
 * dApp that asks the same range again gets the JSON text encoded the first time. Bounded by entry
 * count and by the total size of the texts kept; the oldest go first.
 */
export class LogsMemo {
  readonly #entries = new Map<string, EncodedJson>();
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;

  constructor(maxEntries = 64, maxBytes = 32 * 1024 * 1024) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  get(key: string): EncodedJson | undefined {
    return this.#entries.get(key);
  }

  /** Keeps `json` unless it alone is over a quarter of the byte budget. */
  set(key: string, json: EncodedJson): void {
    const size = json.text.length;
    if (size > this.#maxBytes / 4 || this.#entries.has(key)) return;
    this.#entries.set(key, json);
    this.#bytes += size;
    for (const [k, v] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= v.text.length;
    }
  }

  /** Forgets every answer (a dev chain was rolled back: heights are made again). */
  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  get size(): number {
    return this.#entries.size;
  }
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/** The memo key of a resolved range and the criteria's addresses and topics. */
export function logsMemoKey(from: number, to: number, criteria: FilterCriteria, logsCap: number): string {
  let key = `${from}|${to}|${logsCap}|`;
  for (const a of criteria.addresses) key += `${hex(a)},`;
  for (const t of criteria.topics) {
    key += "|";
    if (t === null) key += "*";
    else for (const v of t) key += `${hex(v)},`;
  }
  return key;
}
