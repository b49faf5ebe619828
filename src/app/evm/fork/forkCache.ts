import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The fork's reads kept on disk, one JSON file per source chain id and fork block
 * (`<root>/<chainId>/<block>/storage.json`, the layout of Foundry's `~/.foundry/cache/rpc`), so a
 * second run at the same block needs no source. The file names the fork block's hash: a cache
 * written for another chain that had the same id and block number (a restarted dev chain) is
 * dropped when the source can be asked for the block's hash. docs/dev-chain.md "Forking" has the rule
 * on which chain ids are cached.
 */

export interface CachedAccount {
  balance: string;
  nonce: string;
  code: string;
}

interface CacheFile {
  meta: { chainId: string; blockNumber: string; blockHash: string; blockTimestamp?: string };
  accounts: Record<string, CachedAccount>;
  storage: Record<string, Record<string, string>>;
  /** Other answers the fork keeps: blocks, transactions and receipts at or below the fork block. */
  answers?: Record<string, unknown>;
}

/** Chain ids of local dev chains: their state at a block number is not unique, so never cached (Foundry's rule). */
export const UNCACHED_CHAIN_IDS: readonly bigint[] = [99n, 1337n, 31337n];

export class ForkCache {
  readonly file: string | undefined;
  readonly #data: CacheFile;
  #dirty = false;

  /**
   * Opens the cache of `chainId` at `blockNumber` under `root` (undefined root: memory only). A file
   * whose block hash differs from `blockHash` (when known) is ignored and replaced.
   */
  constructor(root: string | undefined, meta: CacheFile["meta"]) {
    this.file = root === undefined ? undefined : join(root, meta.chainId, meta.blockNumber, "storage.json");
    this.#data = { meta, accounts: {}, storage: {}, answers: {} };
    if (this.file === undefined || !existsSync(this.file)) return;
    let read: CacheFile;
    try {
      read = JSON.parse(readFileSync(this.file, "utf8")) as CacheFile;
    } catch {
      return;
    }
    if (read?.meta === undefined || typeof read.accounts !== "object" || typeof read.storage !== "object") return;
    if (meta.blockHash !== "" && read.meta.blockHash !== meta.blockHash) return;
    this.#data = { ...read, answers: read.answers ?? {} };
  }

  /** The meta of the cache as read from disk (offline start: the fork block's hash and time). */
  get meta(): CacheFile["meta"] {
    return this.#data.meta;
  }

  /** Reads a cache file's meta without opening it for writes (an offline start learns the block's hash). */
  static peekMeta(root: string, chainId: string, blockNumber: string): CacheFile["meta"] | undefined {
    const file = join(root, chainId, blockNumber, "storage.json");
    if (!existsSync(file)) return undefined;
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as CacheFile).meta;
    } catch {
      return undefined;
    }
  }

  account(addr: string): CachedAccount | undefined {
    return this.#data.accounts[addr];
  }

  putAccount(addr: string, a: CachedAccount): void {
    this.#data.accounts[addr] = a;
    this.#dirty = true;
  }

  storage(addr: string, slot: string): string | undefined {
    return this.#data.storage[addr]?.[slot];
  }

  putStorage(addr: string, slot: string, value: string): void {
    let slots = this.#data.storage[addr];
    if (slots === undefined) {
      slots = {};
      this.#data.storage[addr] = slots;
    }
    slots[slot] = value;
    this.#dirty = true;
  }

  answer(key: string): unknown {
    return this.#data.answers?.[key];
  }

  putAnswer(key: string, value: unknown): void {
    const answers = this.#data.answers ?? {};
    answers[key] = value;
    this.#data.answers = answers;
    this.#dirty = true;
  }

  /** Writes the file when something was added since the last flush (write then rename: never half a file). */
  flush(): void {
    if (this.file === undefined || !this.#dirty) return;
    mkdirSync(join(this.file, ".."), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.#data));
    renameSync(tmp, this.file);
    this.#dirty = false;
  }
}
