import {
  type EvmBlock as AppBlock,
  type EvmReceipt as AppReceipt,
  EMPTY_TRIE_ROOT,
  type EvmLogView,
  type EvmReader,
  type EvmReadPool,
  type EvmTx,
  type LogFilter,
} from "../../app/evm/index.js";
import type { ChainReader, EvmBlock, EvmLog, EvmReceipt, LogQuery, TxLocation } from "../../rpc/evm/index.js";
import type { BlockStore } from "../../store/index.js";
import type { GenesisDoc } from "../../types/index.js";

/** What the chain asks a fork's source (app/evm/fork/ ForkSource). */
interface ForkHistorySource {
  readonly point: { readonly blockNumber: bigint };
  request(method: string, params: unknown[]): unknown;
}

/** The RPC's `chain`: blocks, transactions, receipts and logs from the EVM app's reader. */
export class EvmChainAdapter implements ChainReader {
  readonly #reader: EvmReader;
  readonly #pool: EvmReadPool | undefined;
  readonly #blockStore: BlockStore;
  readonly #genesis: GenesisDoc;
  readonly #genesisMiner: Uint8Array;
  /** A forked chain's source (it changes on anvil_reset with forking), or undefined. */
  readonly #fork: () => ForkHistorySource | undefined;

  constructor(
    reader: EvmReader,
    pool: EvmReadPool | undefined,
    blockStore: BlockStore,
    genesis: GenesisDoc,
    fork: () => ForkHistorySource | undefined = () => undefined,
  ) {
    this.#fork = fork;
    this.#reader = reader;
    this.#pool = pool;
    this.#blockStore = blockStore;
    this.#genesis = genesis;
    this.#genesisMiner = genesisCoinbase(genesis.appState);
  }

  latestHeight(): number {
    return Math.max(0, this.#reader.latestHeight());
  }

  fromForkSource(method: string, params: unknown[]): unknown {
    return this.#fork()?.request(method, params);
  }

  forkBlock(): number | undefined {
    const fork = this.#fork();
    if (fork === undefined) return undefined;
    // The chain's genesis is at initial_height - 1: the fork block when the chain was started as a
    // fork; a chain that became a fork by anvil_reset keeps its own numbers above its genesis.
    return Math.min(this.#genesis.initialHeight - 1, Number(fork.point.blockNumber));
  }

  earliestHeight(): number {
    return this.#blockStore.base();
  }

  blockByNumber(n: number): EvmBlock | undefined {
    const b = this.#reader.block(n);
    if (b === undefined) return n === 0 ? this.#genesisBlock() : undefined;
    return this.#blockOf(b);
  }

  blockByHash(h: Uint8Array): EvmBlock | undefined {
    const b = this.#reader.blockByHash(h);
    if (b === undefined) return isZeroHash(h) ? this.#genesisBlock() : undefined;
    return this.#blockOf(b);
  }

  transactionByHash(h: Uint8Array): { tx: EvmTx; location: TxLocation } | undefined {
    const tx = this.#reader.transaction(h);
    if (tx === undefined || tx.location === undefined) return undefined;
    const block = this.#reader.block(tx.location.height);
    const location: TxLocation = {
      blockHash: tx.location.blockHash,
      blockNumber: tx.location.height,
      blockTimestamp: Number(block?.timestamp ?? 0n),
      index: tx.location.index,
      baseFeePerGas: block?.baseFee,
    };
    return { tx, location };
  }

  receiptByHash(h: Uint8Array): EvmReceipt | undefined {
    const r = this.#reader.receiptByHash(h);
    if (r === undefined) return undefined;
    // Hash and timestamp only: the block's roots are a trie over all its receipts.
    const block = this.#reader.blockStamp(r.height);
    return block === undefined ? undefined : receiptOf(r, block);
  }

  blockReceipts(n: number): EvmReceipt[] | undefined {
    const block = this.#reader.block(n);
    if (block === undefined) return n === 0 ? [] : undefined;
    return this.#reader.receipts(n).map((r) => receiptOf(r, block));
  }

  logs(q: LogQuery): EvmLog[] | Promise<EvmLog[]> {
    return this.#pool === undefined
      ? this.#reader.logs(logFilterOf(q)).map(logOf)
      : this.#pool.logs(logFilterOf(q)).then((logs) => logs.map(logOf));
  }

  #blockOf(b: AppBlock): EvmBlock {
    const transactions: EvmTx[] = [];
    for (const h of b.txHashes) {
      const tx = this.#reader.transaction(h);
      if (tx !== undefined) transactions.push(tx);
    }
    return {
      number: b.height,
      hash: b.hash,
      // The first block has no parent: geth and Cosmos EVM show the zero hash.
      parentHash: b.parentHash.length === 32 ? b.parentHash : new Uint8Array(32),
      timestamp: Number(b.timestamp),
      // Cosmos EVM (BlockMaxGasFromConsensusParams): no block gas limit (max_gas -1) shows as max
      // uint32, "to not error with javascript dev tooling" that only handles 53-bit numbers.
      gasLimit: b.gasLimit >= 1n << 63n ? 0xffffffffn : b.gasLimit,
      gasUsed: b.gasUsed,
      baseFeePerGas: b.baseFee,
      miner: b.coinbase,
      logsBloom: b.logsBloom,
      stateRoot: b.appHash,
      transactionsRoot: b.transactionsRoot,
      receiptsRoot: b.receiptsRoot,
      size: this.#blockStore.loadBlockMeta(b.height)?.blockSize ?? 0,
      transactions,
    };
  }

  /**
   * Block 0 (`earliest`, and `latest` before the first block): the genesis, synthesized. Its hash is
   * the zero hash, which is also what block 1 shows as its parent.
   */
  #genesisBlock(): EvmBlock {
    const genesis = this.#genesis;
    const maxGas = genesis.consensusParams.block.maxGas;
    return {
      number: 0,
      hash: new Uint8Array(32),
      parentHash: new Uint8Array(32),
      timestamp: Number(genesis.genesisTime / 1_000_000_000n),
      gasLimit: maxGas < 0n ? 0xffffffffn : maxGas,
      gasUsed: 0n,
      baseFeePerGas: this.#reader.baseFee(0) ?? this.#reader.nextBaseFee(),
      miner: this.#genesisMiner,
      logsBloom: new Uint8Array(256),
      stateRoot: genesis.appHash.length === 32 ? genesis.appHash : new Uint8Array(32),
      transactionsRoot: EMPTY_TRIE_ROOT,
      receiptsRoot: EMPTY_TRIE_ROOT,
      size: 0,
      transactions: [],
    };
  }
}

/**
 * Block 0's miner: the genesis' fee recipient (`app_state.evm.coinbase`), as geth's genesis block
 * shows its genesis file's coinbase; the zero address when the genesis names none.
 */
function genesisCoinbase(appState: unknown): Uint8Array {
  try {
    const text = typeof appState === "string" ? appState : JSON.stringify(appState ?? null);
    const coinbase = (JSON.parse(text === "" ? "null" : text) as { evm?: { coinbase?: unknown } } | null)?.evm
      ?.coinbase;
    if (typeof coinbase === "string" && /^0x[0-9a-fA-F]{40}$/.test(coinbase)) {
      return Uint8Array.from(Buffer.from(coinbase.slice(2), "hex"));
    }
  } catch {
    // The app refuses a genesis it cannot read; block 0 just shows no miner.
  }
  return new Uint8Array(20);
}

function isZeroHash(h: Uint8Array): boolean {
  return h.length === 32 && h.every((b) => b === 0);
}

function logOf(l: EvmLogView): EvmLog {
  return {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: l.height,
    blockHash: l.blockHash,
    blockTimestamp: Number(l.blockTimestamp),
    transactionHash: l.txHash,
    transactionIndex: l.txIndex,
    logIndex: l.logIndex,
  };
}

function receiptOf(r: AppReceipt, block: Pick<AppBlock, "hash" | "timestamp">): EvmReceipt {
  return {
    transactionHash: r.txHash,
    transactionIndex: r.txIndex,
    blockHash: block.hash,
    blockNumber: r.height,
    from: r.from,
    to: r.to,
    type: r.type,
    status: r.status,
    gasUsed: r.gasUsed,
    cumulativeGasUsed: r.cumulativeGasUsed,
    effectiveGasPrice: r.effectiveGasPrice,
    contractAddress: r.contractAddress,
    logs: r.logs.map((l) => ({
      address: l.address,
      topics: l.topics,
      data: l.data,
      blockNumber: r.height,
      blockHash: block.hash,
      blockTimestamp: Number(block.timestamp),
      transactionHash: r.txHash,
      transactionIndex: r.txIndex,
      logIndex: l.logIndex,
    })),
    logsBloom: r.logsBloom,
  };
}

function logFilterOf(q: LogQuery): LogFilter {
  return {
    fromHeight: q.fromBlock,
    toHeight: q.toBlock,
    addresses: [...q.addresses],
    topics: q.topics.map((t) => (t === null ? null : [...t])),
    limit: q.limit,
  };
}
