import { secp256k1 } from "@noble/curves/secp256k1.js";
import {
  type EvmBlock as AppBlock,
  type CallFrame as AppCallFrame,
  type CallOptions as AppCallOptions,
  type EvmReceipt as AppReceipt,
  baseFeeWei,
  type CallArgs,
  createTracer,
  type DevAccount,
  EMPTY_TRIE_ROOT,
  type EvmLogView,
  type EvmReadPool,
  type EvmTxView,
  GasEstimationError,
  keccak256,
  type LogFilter,
  type PrestateResult,
  type StateOverride,
  type StructLoggerResult,
  type TracerSpec,
} from "../app/evm/index.js";
import type { EvmApplication } from "../app/index.js";
import { type NodeConfig, type NodeKey, packageVersion } from "../config/index.js";
import type { Mempool } from "../mempool/index.js";
import type {
  CallFrame,
  CallRequest,
  CallResult,
  DevControl,
  EvmBlock,
  EvmLog,
  EvmReceipt,
  EvmServices,
  EvmTx,
  LogQuery,
  StateOverrides,
  TraceConfig,
  TraceResult,
  TxLocation,
} from "../rpc/evm/index.js";
import type { BlockStore } from "../store/index.js";
import type { GenesisDoc } from "../types/index.js";
import { NodeServiceError } from "./errors.js";

/** Listeners the node calls: new committed blocks and txs admitted to the mempool. */
export class EvmFeed {
  readonly #blocks = new Set<(height: number) => void>();
  readonly #pending = new Set<(hash: Uint8Array) => void>();
  readonly #rollbacks = new Set<(height: number) => void>();

  onRollback(listener: (height: number) => void): () => void {
    this.#rollbacks.add(listener);
    return () => this.#rollbacks.delete(listener);
  }
  /** A dev chain was rolled back to `height` (evm_revert, hardhat_reset). */
  rollback(height: number): void {
    for (const l of this.#rollbacks) l(height);
  }

  onNewBlock(listener: (height: number) => void): () => void {
    this.#blocks.add(listener);
    return () => this.#blocks.delete(listener);
  }
  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void {
    this.#pending.add(listener);
    return () => this.#pending.delete(listener);
  }
  newBlock(height: number): void {
    for (const l of this.#blocks) l(height);
  }
  pendingTransaction(hash: Uint8Array): void {
    for (const l of this.#pending) l(hash);
  }
}

export interface EvmServiceParts {
  config: NodeConfig;
  genesis: GenesisDoc;
  nodeKey: NodeKey;
  app: EvmApplication;
  mempool: Mempool;
  blockStore: BlockStore;
  feed: EvmFeed;
  /** A dev chain's controls, when the node runs one. */
  dev?: DevControl | undefined;
  /** Worker threads for eth_call, eth_estimateGas, debug_traceCall and eth_getLogs (`[json-rpc] read-workers`). */
  readPool?: EvmReadPool | undefined;
}

function hexKey(b: Uint8Array): string {
  return Buffer.from(b).toString("hex");
}

/** The Ethereum JSON-RPC's view of the node (rpc/evm/services.ts), over the EVM app's reader. */
export function buildEvmServices(p: EvmServiceParts): EvmServices {
  const reader = p.app.reader;
  const pool = p.readPool;
  const version = packageVersion();
  /** The latest block's base fee; before the first block, the first block's. */
  const headBaseFee = (): bigint => reader.baseFee(reader.latestHeight()) ?? reader.nextBaseFee();

  const txOf = (v: EvmTxView): EvmTx => ({
    hash: v.hash,
    type: v.type,
    from: v.from,
    to: v.to,
    nonce: v.nonce,
    gasLimit: v.gasLimit,
    value: v.value,
    input: v.input,
    ...(v.gasPrice === undefined ? {} : { gasPrice: v.gasPrice }),
    ...(v.maxFeePerGas === undefined ? {} : { maxFeePerGas: v.maxFeePerGas }),
    ...(v.maxPriorityFeePerGas === undefined ? {} : { maxPriorityFeePerGas: v.maxPriorityFeePerGas }),
    chainId: v.chainId,
    ...(v.accessList === undefined ? {} : { accessList: v.accessList }),
    ...(v.authorizationList === undefined ? {} : { authorizationList: v.authorizationList }),
    v: v.v,
    r: v.r,
    s: v.s,
  });

  const blockOf = (b: AppBlock): EvmBlock => {
    const transactions: EvmTx[] = [];
    for (const h of b.txHashes) {
      const v = reader.transaction(h);
      if (v !== undefined) transactions.push(txOf(v));
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
      size: p.blockStore.loadBlockMeta(b.height)?.blockSize ?? 0,
      transactions,
    };
  };

  const logOf = (l: EvmLogView): EvmLog => ({
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: l.height,
    blockHash: l.blockHash,
    blockTimestamp: Number(l.blockTimestamp),
    transactionHash: l.txHash,
    transactionIndex: l.txIndex,
    logIndex: l.logIndex,
  });

  const receiptOf = (r: AppReceipt, block: Pick<AppBlock, "hash" | "timestamp">): EvmReceipt => ({
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
  });

  const callOptions = (opts: {
    height: number;
    gasCap: bigint;
    timeoutMs: number;
    overrides?: StateOverrides;
    quietConsole?: boolean;
  }): AppCallOptions => ({
    height: opts.height,
    gasCap: opts.gasCap,
    timeoutMs: opts.timeoutMs,
    ...(opts.quietConsole === true ? { quietConsole: true } : {}),
    ...(opts.overrides === undefined ? {} : { overrides: overridesOf(opts.overrides) }),
  });

  const argsOf = (r: CallRequest): CallArgs => ({
    ...(r.from === undefined ? {} : { from: r.from }),
    ...(r.to === undefined ? {} : { to: r.to }),
    ...(r.gas === undefined ? {} : { gas: r.gas }),
    ...(r.gasPrice === undefined ? {} : { gasPrice: r.gasPrice }),
    ...(r.maxFeePerGas === undefined ? {} : { maxFeePerGas: r.maxFeePerGas }),
    ...(r.maxPriorityFeePerGas === undefined ? {} : { maxPriorityFeePerGas: r.maxPriorityFeePerGas }),
    ...(r.value === undefined ? {} : { value: r.value }),
    ...(r.data === undefined ? {} : { data: r.data }),
    ...(r.accessList === undefined
      ? {}
      : { accessList: r.accessList.map((e) => ({ address: e.address, storageKeys: [...e.storageKeys] })) }),
    ...(r.authorizationList === undefined ? {} : { authorizationList: [...r.authorizationList] }),
  });

  const mempoolTxs = (): EvmTxView[] => {
    const out: EvmTxView[] = [];
    for (const raw of p.mempool.txs()) {
      try {
        out.push(reader.decodeTransaction(raw));
      } catch {
        // Not an Ethereum tx (cannot be admitted by the EVM app); skip.
      }
    }
    return out;
  };

  /**
   * Runs one trace with the tracer `config` names: `run` replays the tx or call with that tracer (a
   * spec, so that a read worker can build it too) and resolves with the tracer's result.
   */
  const traceWith = async (config: TraceConfig, run: (spec: TracerSpec) => Promise<unknown>): Promise<TraceResult> => {
    switch (config.tracer) {
      case "noopTracer":
        await run({ kind: "noop" });
        return { kind: "noop" };
      case "4byteTracer":
        return { kind: "fourByte", counts: (await run({ kind: "fourByte" })) as Map<string, number> };
      case "prestateTracer": {
        const r = (await run({
          kind: "prestate",
          options: {
            diffMode: config.diffMode,
            disableCode: config.tracerDisableCode,
            disableStorage: config.tracerDisableStorage,
          },
        })) as PrestateResult;
        return { kind: "prestate", ...r };
      }
      case "callTracer": {
        const frame = (await run({
          kind: "call",
          options: { onlyTopCall: config.onlyTopCall, withLog: config.withLog },
        })) as AppCallFrame | undefined;
        if (frame === undefined) throw new NodeServiceError("the call tracer recorded no call frame");
        return { kind: "call", frame: frameOf(frame) };
      }
      case undefined: {
        const r = (await run({
          kind: "struct",
          options: {
            disableStack: config.disableStack,
            disableStorage: config.disableStorage,
            enableMemory: config.enableMemory,
            enableReturnData: config.enableReturnData,
            limit: config.limit,
          },
        })) as StructLoggerResult;
        return { kind: "struct", ...r };
      }
    }
  };

  const logFilterOf = (q: LogQuery): LogFilter => ({
    fromHeight: q.fromBlock,
    toHeight: q.toBlock,
    addresses: [...q.addresses],
    topics: q.topics.map((t) => (t === null ? null : [...t])),
    limit: q.limit,
  });

  const keyring = p.app.devAccounts().length > 0 ? new DevKeys(p.app.devAccounts()) : undefined;

  /**
   * Block 0 (`earliest`, and `latest` before the first block): the genesis, synthesized. Its hash is
   * the zero hash, which is also what block 1 shows as its parent.
   */
  const genesisBlock = (): EvmBlock => {
    const maxGas = p.genesis.consensusParams.block.maxGas;
    return {
      number: 0,
      hash: new Uint8Array(32),
      parentHash: new Uint8Array(32),
      timestamp: Number(p.genesis.genesisTime / 1_000_000_000n),
      gasLimit: maxGas < 0n ? 0xffffffffn : maxGas,
      gasUsed: 0n,
      baseFeePerGas: reader.baseFee(0) ?? reader.nextBaseFee(),
      miner: new Uint8Array(20),
      logsBloom: new Uint8Array(256),
      stateRoot: p.genesis.appHash.length === 32 ? p.genesis.appHash : new Uint8Array(32),
      transactionsRoot: EMPTY_TRIE_ROOT,
      receiptsRoot: EMPTY_TRIE_ROOT,
      size: 0,
      transactions: [],
    };
  };
  const isZeroHash = (h: Uint8Array) => h.length === 32 && h.every((b) => b === 0);

  return {
    chain: {
      latestHeight: () => Math.max(0, reader.latestHeight()),
      blockByNumber: (n) => {
        const b = reader.block(n);
        if (b === undefined) return n === 0 ? genesisBlock() : undefined;
        return blockOf(b);
      },
      blockByHash: (h) => {
        const b = reader.blockByHash(h);
        if (b === undefined) return isZeroHash(h) ? genesisBlock() : undefined;
        return blockOf(b);
      },
      transactionByHash: (h) => {
        const v = reader.transaction(h);
        if (v === undefined || v.location === undefined) return undefined;
        const block = reader.block(v.location.height);
        const location: TxLocation = {
          blockHash: v.location.blockHash,
          blockNumber: v.location.height,
          blockTimestamp: Number(block?.timestamp ?? 0n),
          index: v.location.index,
          baseFeePerGas: block?.baseFee,
        };
        return { tx: txOf(v), location };
      },
      receiptByHash: (h) => {
        const r = reader.receiptByHash(h);
        if (r === undefined) return undefined;
        // Hash and timestamp only: the block's roots are a trie over all its receipts.
        const block = reader.blockStamp(r.height);
        return block === undefined ? undefined : receiptOf(r, block);
      },
      blockReceipts: (n) => {
        const block = reader.block(n);
        if (block === undefined) return n === 0 ? [] : undefined;
        return reader.receipts(n).map((r) => receiptOf(r, block));
      },
      logs: (q) =>
        pool === undefined
          ? reader.logs(logFilterOf(q)).map(logOf)
          : pool.logs(logFilterOf(q)).then((logs) => logs.map(logOf)),
    },
    state: {
      balance: (a, h) => reader.balance(a, h),
      nonce: (a, h) => reader.nonce(a, h),
      code: (a, h) => reader.code(a, h),
      storage: (a, slot, h) => reader.storageAt(a, slot, h),
      proof: (a, slots, h) => reader.proof(a, slots, h),
    },
    execution: {
      call: async (request, opts) =>
        resultOf(
          await (pool === undefined
            ? reader.call(argsOf(request), callOptions(opts))
            : pool.call(argsOf(request), callOptions(opts), opts.signal)),
        ),
      peekCall: (request, opts) => {
        if (opts.overrides !== undefined) return undefined;
        const kept = reader.peekCall(argsOf(request), callOptions(opts));
        return kept === undefined ? undefined : resultOf(kept);
      },
      estimateGas: async (request, opts) => {
        try {
          return await (pool === undefined
            ? reader.estimateGas(argsOf(request), callOptions(opts))
            : pool.estimateGas(argsOf(request), callOptions(opts), opts.signal));
        } catch (err) {
          if (err instanceof GasEstimationError) {
            if (err.revertData !== undefined) {
              return { status: "reverted", returnData: err.revertData, gasUsed: opts.gasCap };
            }
            return { status: "failed", returnData: new Uint8Array(0), gasUsed: opts.gasCap, error: err.message };
          }
          throw err;
        }
      },
    },
    mempool: {
      submit: async (raw) => {
        let res: { code: number; log: string };
        try {
          res = await p.mempool.checkTx(raw);
        } catch (err) {
          // Pre-CheckTx refusals: duplicate in cache, too large, mempool full.
          const msg = err instanceof Error ? err.message : String(err);
          return { accepted: false, code: -1, log: msg === "tx already exists in cache" ? "already known" : msg };
        }
        if (res.code !== 0) return { accepted: false, code: res.code, log: res.log };
        const hash = keccak256(raw);
        p.feed.pendingTransaction(hash);
        return { accepted: true, hash };
      },
      content: () => {
        const bySender = new Map<string, EvmTxView[]>();
        for (const v of mempoolTxs()) {
          const k = hexKey(v.from);
          const list = bySender.get(k) ?? [];
          list.push(v);
          bySender.set(k, list);
        }
        const pending: EvmTx[] = [];
        const queued: EvmTx[] = [];
        for (const list of bySender.values()) {
          list.sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
          const first = list[0];
          if (first === undefined) continue;
          let next = reader.nonce(first.from);
          for (const v of list) {
            if (v.nonce === next) {
              pending.push(txOf(v));
              next++;
            } else {
              queued.push(txOf(v));
            }
          }
        }
        return { pending, queued };
      },
      transactionByHash: (hash) => {
        const v = mempoolTxs().find((t) => Buffer.from(t.hash).equals(Buffer.from(hash)));
        return v === undefined ? undefined : txOf(v);
      },
    },
    fees: {
      nextBaseFee: () => reader.nextBaseFee(),
      headBaseFee: () => (p.app.feeMarketParams().noBaseFee ? undefined : headBaseFee()),
      // Cosmos EVM's SuggestGasTipCap(head.BaseFee): the most the base fee can rise in one block,
      // baseFee × (elasticity − 1) / change denominator.
      suggestTipCap: () => {
        const fm = p.app.feeMarketParams();
        if (fm.noBaseFee || fm.baseFeeChangeDenominator === 0n) return 0n;
        return (headBaseFee() * (fm.elasticityMultiplier - 1n)) / fm.baseFeeChangeDenominator;
      },
      // x/feemarket min_gas_price (a Dec) in wei.
      minGasPrice: () => baseFeeWei(p.app.feeMarketParams().minGasPrice),
    },
    events: p.feed,
    node: {
      chainId: () => reader.chainId(),
      version: () => version,
      syncStatus: () => {
        const h = Math.max(0, reader.latestHeight());
        return { catchingUp: false, startingBlock: 0, currentBlock: h, highestBlock: h };
      },
      peerCount: () => 0,
      listening: () => true,
      identity: () => ({
        id: p.nodeKey.id,
        name: p.config.base.moniker,
        listenAddr: p.config.p2p.externalAddress !== "" ? p.config.p2p.externalAddress : p.config.p2p.laddr,
        network: p.genesis.chainId,
      }),
      dataDir: () => p.config.home,
    },
    tracer: {
      traceTransaction: (hash, config) =>
        traceWith(config, (spec) => reader.traceTransaction(hash, createTracer(spec), { timeoutMs: config.timeoutMs })),
      traceBlock: async (height, config) => {
        const block = reader.block(height);
        if (block === undefined) throw new NodeServiceError(`block #${height} not found`);
        const out: { txHash: Uint8Array; result?: TraceResult; error?: string }[] = [];
        for (const txHash of block.txHashes) {
          try {
            const result = await traceWith(config, (spec) =>
              reader.traceTransaction(txHash, createTracer(spec), { timeoutMs: config.timeoutMs }),
            );
            out.push({ txHash, result });
          } catch (err) {
            out.push({ txHash, error: err instanceof Error ? err.message : String(err) });
          }
        }
        return out;
      },
      traceCall: (request, config, opts) =>
        traceWith(config, (spec) =>
          pool === undefined
            ? reader.traceCall(argsOf(request), createTracer(spec), callOptions(opts))
            : pool.traceCall(argsOf(request), spec, callOptions(opts), opts.signal),
        ),
    },
    ...(keyring === undefined ? {} : { keyring }),
    ...(p.dev === undefined ? {} : { dev: p.dev }),
  };
}

function resultOf(r: {
  status: CallResult["status"];
  returnData: Uint8Array;
  gasUsed: bigint;
  vmError: string;
}): CallResult {
  return {
    status: r.status,
    returnData: r.returnData,
    gasUsed: r.gasUsed,
    ...(r.vmError === "" ? {} : { error: r.vmError }),
  };
}

function overridesOf(o: StateOverrides): StateOverride[] {
  const out: StateOverride[] = [];
  for (const [addr, ov] of o) {
    const slots = (m: ReadonlyMap<string, Uint8Array>) =>
      [...m].map(([slot, value]) => ({ slot: Buffer.from(slot.replace(/^0x/, ""), "hex"), value }));
    out.push({
      address: Buffer.from(addr.replace(/^0x/, ""), "hex"),
      ...(ov.balance === undefined ? {} : { balance: ov.balance }),
      ...(ov.nonce === undefined ? {} : { nonce: ov.nonce }),
      ...(ov.code === undefined ? {} : { code: ov.code }),
      ...(ov.state === undefined ? {} : { state: slots(ov.state) }),
      ...(ov.stateDiff === undefined ? {} : { stateDiff: slots(ov.stateDiff) }),
    });
  }
  return out;
}

function frameOf(f: AppCallFrame): CallFrame {
  return {
    type: f.type,
    from: f.from,
    to: f.to,
    value: f.value,
    gas: f.gas,
    gasUsed: f.gasUsed,
    input: f.input,
    output: f.output,
    ...(f.error === undefined ? {} : { error: f.error }),
    ...(f.revertReason === undefined ? {} : { revertReason: f.revertReason }),
    ...(f.calls.length === 0 ? {} : { calls: f.calls.map(frameOf) }),
    ...(f.logs === undefined ? {} : { logs: f.logs.map((l) => ({ ...l, position: l.position ?? 0 })) }),
  };
}

/** The dev accounts' keys (and keys imported through personal_*), held in memory by this node. */
class DevKeys {
  readonly #keys = new Map<string, Uint8Array>();

  constructor(accounts: readonly DevAccount[]) {
    for (const a of accounts) this.#keys.set(hexKey(a.addressBytes), Buffer.from(a.privateKey.slice(2), "hex"));
  }

  accounts(): Uint8Array[] {
    return [...this.#keys.keys()].map((k) => Buffer.from(k, "hex"));
  }

  signDigest(address: Uint8Array, digest: Uint8Array): Uint8Array {
    const key = this.#keys.get(hexKey(address));
    if (key === undefined) throw new NodeServiceError(`unknown account 0x${hexKey(address)}`);
    const sig = secp256k1.sign(digest, key, { prehash: false, format: "recovered" });
    // noble's recovered format is recovery ‖ r ‖ s; the RPC wants r ‖ s ‖ yParity.
    const out = new Uint8Array(65);
    out.set(sig.subarray(1, 65), 0);
    out[64] = sig[0] as number;
    return out;
  }

  importRawKey(privateKey: Uint8Array): Uint8Array {
    const pub = secp256k1.getPublicKey(privateKey, false);
    const address = keccak256(pub.subarray(1)).subarray(12);
    this.#keys.set(hexKey(address), Uint8Array.from(privateKey));
    return address;
  }

  newAccount(): Uint8Array {
    return this.importRawKey(secp256k1.utils.randomSecretKey());
  }
}
