import { homedir } from "node:os";
import { join } from "node:path";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, hexToBytes } from "../../../util/bytes.js";
import { ForkConfigError, ForkSourceError } from "./errors.js";
import { ForkCache, UNCACHED_CHAIN_IDS } from "./forkCache.js";
import { isMethodMissing, type RpcAnswer, SyncRpcClient, unwrap } from "./syncRpcClient.js";

/**
 * The state of a forked chain's source at the fork block, read the first time a key is touched and
 * kept (in memory and in the disk cache). Accounts come from Anvil's `eth_getAccountInfo` when the
 * source serves it, else from one batch of eth_getBalance, eth_getTransactionCount and eth_getCode;
 * storage from eth_getStorageAt. docs/dev-chain.md "Forking".
 */

export interface ForkOptions {
  /** Source URLs, in failover order. */
  urls: readonly string[];
  /** The fork block; negative: that many blocks before the source's head; absent: the head. */
  blockNumber?: bigint;
  /**
   * The source's chain id when known (`--fork-chain-id`): with a pinned block the start asks the
   * source nothing and reads the fork block from the disk cache (Anvil's offline start).
   */
  chainId?: bigint;
  /** Root of the disk cache; default ~/.cometh/cache/rpc. */
  cacheRoot?: string;
  /** Keep reads in memory only (Anvil's --no-storage-caching). */
  noCache?: boolean;
  /** Per request attempt; default 10 000 ms. */
  timeoutMs?: number;
  /** Extra rounds over the URLs; default 0. */
  retries?: number;
}

/** Where the fork starts: the source's chain id and the block whose state the fork reads. */
export interface ForkPoint {
  chainId: bigint;
  blockNumber: bigint;
  /** 0x hash of the fork block ("" when unknown). */
  blockHash: string;
  /** Unix seconds of the fork block. */
  timestamp: bigint;
}

/** An account as the source holds it at the fork block. */
export interface RemoteAccount {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array;
  codeHash: Uint8Array;
}

/** The default disk cache root (Foundry keeps its own under ~/.foundry/cache/rpc). */
export function defaultForkCacheRoot(): string {
  return join(homedir(), ".cometh", "cache", "rpc");
}

function to0x(b: Uint8Array): string {
  return `0x${bytesToHex(b)}`;
}

/** Hex already checked (the source's answers by `data`, the cache's own writes). */
function fromHex(s: string): Uint8Array {
  return hexToBytes(s) ?? new Uint8Array(0);
}

function quantity(v: unknown, what: string): bigint {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v)) return BigInt(v);
  if (typeof v === "string" && /^\d+$/.test(v)) return BigInt(v);
  throw new ForkSourceError(`the fork source's ${what} is not a quantity: ${JSON.stringify(v)}`);
}

function data(v: unknown, what: string): Uint8Array {
  if (typeof v !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(v)) {
    throw new ForkSourceError(`the fork source's ${what} is not 0x bytes: ${JSON.stringify(v)?.slice(0, 80)}`);
  }
  return fromHex(v);
}

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

export class ForkSource {
  readonly point: ForkPoint;
  readonly options: ForkOptions;
  readonly client: SyncRpcClient;
  readonly #cache: ForkCache;
  readonly #blockTag: string;
  readonly #accounts = new Map<string, RemoteAccount | undefined>();
  readonly #codes = new Map<string, Uint8Array>();
  readonly #blockHashes = new Map<string, Uint8Array>();
  /** undefined until the first account read tells whether the source serves eth_getAccountInfo. */
  #accountInfo: boolean | undefined;
  #flushedAt = 0;

  private constructor(options: ForkOptions, client: SyncRpcClient, point: ForkPoint, cache: ForkCache) {
    this.options = options;
    this.client = client;
    this.point = point;
    this.#cache = cache;
    this.#blockTag = hex(point.blockNumber);
  }

  /**
   * Resolves the fork block (asking the source its chain id, head and the block's hash), or with
   * `chainId` and a pinned block, reads them from the disk cache without asking. Synchronous.
   */
  static open(options: ForkOptions): ForkSource {
    const client = new SyncRpcClient({
      urls: options.urls,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.retries === undefined ? {} : { retries: options.retries }),
    });
    try {
      const point = resolvePoint(client, options);
      const cacheRoot =
        options.noCache === true || UNCACHED_CHAIN_IDS.includes(point.chainId)
          ? undefined
          : (options.cacheRoot ?? defaultForkCacheRoot());
      const cache = new ForkCache(cacheRoot, {
        chainId: point.chainId.toString(),
        blockNumber: point.blockNumber.toString(),
        blockHash: point.blockHash,
        blockTimestamp: point.timestamp.toString(),
      });
      return new ForkSource(options, client, point, cache);
    } catch (err) {
      void client.close();
      throw err;
    }
  }

  /** The disk cache file, or undefined when reads are kept in memory only. */
  get cacheFile(): string | undefined {
    return this.#cache.file;
  }

  /** The account at the fork block; undefined when the source holds nothing there (no balance, nonce or code). */
  account(addr: Uint8Array): RemoteAccount | undefined {
    const key = to0x(addr);
    if (this.#accounts.has(key)) return this.#accounts.get(key);
    let fields = this.#cache.account(key);
    if (fields === undefined) {
      fields = this.#fetchAccount(key);
      this.#cache.putAccount(key, fields);
    }
    const code = fromHex(fields.code);
    const account: RemoteAccount = {
      balance: BigInt(fields.balance),
      nonce: BigInt(fields.nonce),
      code,
      codeHash: keccak_256(code),
    };
    const empty = account.balance === 0n && account.nonce === 0n && code.length === 0;
    if (code.length > 0) this.#codes.set(to0x(account.codeHash), code);
    this.#accounts.set(key, empty ? undefined : account);
    return empty ? undefined : account;
  }

  /** Code of an account read from the source, by its keccak hash. */
  code(codeHash: Uint8Array): Uint8Array | undefined {
    return this.#codes.get(to0x(codeHash));
  }

  /** A storage slot at the fork block, leading zeros stripped (empty = 0). */
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array {
    const a = to0x(addr);
    const s = to0x(slot);
    const kept = this.#cache.storage(a, s);
    if (kept !== undefined) return fromHex(kept);
    const v = stripZeros(data(this.client.call("eth_getStorageAt", [a, s, this.#blockTag]), "storage value"));
    this.#cache.putStorage(a, s, to0x(v));
    return v;
  }

  #fetchAccount(addr: string): { balance: string; nonce: string; code: string } {
    if (this.#accountInfo !== false) {
      const [answer] = this.client.batch([{ method: "eth_getAccountInfo", params: [addr, this.#blockTag] }]);
      if (!isMethodMissing(answer as RpcAnswer)) {
        const info = unwrap("eth_getAccountInfo", answer as RpcAnswer) as {
          balance?: unknown;
          nonce?: unknown;
          code?: unknown;
        };
        this.#accountInfo = true;
        return {
          balance: quantity(info?.balance, "balance").toString(),
          nonce: quantity(info?.nonce, "nonce").toString(),
          code: to0x(data(info?.code, "code")),
        };
      }
      this.#accountInfo = false;
    }
    const [balance, nonce, code] = this.client.batch([
      { method: "eth_getBalance", params: [addr, this.#blockTag] },
      { method: "eth_getTransactionCount", params: [addr, this.#blockTag] },
      { method: "eth_getCode", params: [addr, this.#blockTag] },
    ]) as [RpcAnswer, RpcAnswer, RpcAnswer];
    return {
      balance: quantity(unwrap("eth_getBalance", balance), "balance").toString(),
      nonce: quantity(unwrap("eth_getTransactionCount", nonce), "nonce").toString(),
      code: to0x(data(unwrap("eth_getCode", code), "code")),
    };
  }

  /**
   * The hash of the source's block `n` at or below the fork block (BLOCKHASH and the first local
   * block's parent), kept like any other answer; undefined above the fork block or when the source
   * has no such block.
   */
  blockHash(n: bigint): Uint8Array | undefined {
    if (n < 0n || n > this.point.blockNumber) return undefined;
    const key = n.toString();
    const memo = this.#blockHashes.get(key);
    if (memo !== undefined) return memo;
    let hash: Uint8Array | undefined;
    if (n === this.point.blockNumber && this.point.blockHash !== "") {
      hash = data(this.point.blockHash, "block hash");
    } else {
      const block = this.request("eth_getBlockByNumber", [hex(n), false]) as { hash?: unknown } | null | undefined;
      if (block === null || block === undefined) return undefined;
      hash = data(block.hash, "block hash");
    }
    if (hash.length !== 32) throw new ForkSourceError(`the fork source's block ${n} hash is not 32 bytes`);
    this.#blockHashes.set(key, hash);
    return hash;
  }

  /**
   * A request about the chain at or below the fork block (blocks, transactions, receipts, logs),
   * answered by the source; answers that cannot change (not null) are kept in the disk cache.
   */
  request(method: string, params: unknown[]): unknown {
    const key = `${method}:${JSON.stringify(params)}`;
    const kept = this.#cache.answer(key);
    if (kept !== undefined) return kept;
    const result = this.client.call(method, params);
    if (result !== null && result !== undefined) this.#cache.putAnswer(key, result);
    return result;
  }

  /**
   * Writes new reads to the disk cache (no-op when nothing was read or caching is off). With
   * `throttled`, at most once a second (after each block), since the file holds every read.
   */
  flush(throttled = false): void {
    const now = Date.now();
    if (throttled && now - this.#flushedAt < 1000) return;
    this.#flushedAt = now;
    try {
      this.#cache.flush();
    } catch (err) {
      throw new ForkSourceError(`cannot write the fork cache ${this.#cache.file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Flushes the cache and stops the source client. */
  async close(): Promise<void> {
    try {
      this.flush();
    } finally {
      await this.client.close();
    }
  }
}

function resolvePoint(client: SyncRpcClient, options: ForkOptions): ForkPoint {
  const pinned = options.blockNumber !== undefined && options.blockNumber >= 0n ? options.blockNumber : undefined;
  if (options.chainId !== undefined && pinned !== undefined) {
    // Anvil's offline start: the chain id and block are given; the block's hash and time come from
    // the cache when it has them, else from the source.
    if (options.noCache !== true && !UNCACHED_CHAIN_IDS.includes(options.chainId)) {
      const meta = ForkCache.peekMeta(
        options.cacheRoot ?? defaultForkCacheRoot(),
        options.chainId.toString(),
        pinned.toString(),
      );
      if (meta !== undefined) {
        return {
          chainId: options.chainId,
          blockNumber: pinned,
          blockHash: meta.blockHash,
          timestamp: BigInt(meta.blockTimestamp ?? "0"),
        };
      }
    }
  }
  const chainId = options.chainId ?? quantity(client.call("eth_chainId", []), "chain id");
  let blockNumber = pinned;
  if (blockNumber === undefined) {
    const head = quantity(client.call("eth_blockNumber", []), "block number");
    blockNumber = head + (options.blockNumber ?? 0n);
    if (blockNumber < 0n) {
      throw new ForkConfigError(
        `--fork-block-number ${options.blockNumber} is before the source's first block (its head is ${head}). Give a smaller distance`,
      );
    }
  }
  const block = client.call("eth_getBlockByNumber", [hex(blockNumber), false]) as {
    hash?: unknown;
    timestamp?: unknown;
  } | null;
  if (block === null || block === undefined) {
    throw new ForkConfigError(
      `the fork source has no block ${blockNumber}. Give a --fork-block-number at or below its head`,
    );
  }
  return {
    chainId,
    blockNumber,
    blockHash: typeof block.hash === "string" ? block.hash : "",
    timestamp: quantity(block.timestamp, "block timestamp"),
  };
}
