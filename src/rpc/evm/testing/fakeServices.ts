import { createHash } from "node:crypto";
import { createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { createTx, createTxFromRLP, type TypedTransaction, type TypedTxData } from "@ethereumjs/tx";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { ComethError } from "../../../util/errors.js";
import { bigintToBytes, EMPTY_BLOOM, padBytes, toData, ZERO_ADDRESS, ZERO_HASH } from "../encode/hex.js";
import { logMatches } from "../filters/match.js";
import type {
  AccountProof,
  CallOptions,
  CallRequest,
  CallResult,
  DevKeyring,
  EvmBlock,
  EvmLog,
  EvmReceipt,
  EvmServices,
  EvmTx,
  LogQuery,
  SubmitResult,
  TraceConfig,
  TraceResult,
  TxLocation,
} from "../services.js";
import { publicKeyToAddress } from "../tx/signatures.js";

/**
 * A small in-memory EVM chain behind EvmServices, for tests (no vitest import here). Transactions
 * are real signed Ethereum transactions (@ethereumjs/tx), so clients decode and verify them.
 * Execution is a toy with a few well-known contracts:
 * - ECHO returns its calldata (gas 21000 + calldata + 5000),
 * - REVERTER reverts with Error("boom"), PANICKER with Panic(0x11), FAILER runs out of gas,
 * - SLOW waits 10 s (honouring the abort signal),
 * - LOGGER emits Transfer(from, to, value) when a mined tx calls it.
 */

/** A failure inside the fake node (shown to clients as a -32000 error). */
export class FakeNodeError extends ComethError {}

export const CHAIN_ID = 262144n;
export const GWEI = 1_000_000_000n;
export const ETHER = 10n ** 18n;
export const BASE_FEE = GWEI;
export const BLOCK_GAS_LIMIT = 30_000_000n;
export const GENESIS_TIME = 1_700_000_000;

const addr = (last: number) => {
  const a = new Uint8Array(20);
  a[18] = 0xc0;
  a[19] = last;
  return a;
};
export const ECHO = addr(1);
export const REVERTER = addr(2);
export const PANICKER = addr(3);
export const FAILER = addr(4);
export const SLOW = addr(5);
export const LOGGER = addr(6);
export const TRANSFER_TOPIC = keccak_256(Buffer.from("Transfer(address,address,uint256)"));

export interface DevAccount {
  readonly privateKey: Uint8Array;
  readonly address: Uint8Array;
}

export function devAccount(seed: string): DevAccount {
  const privateKey = keccak_256(Buffer.from(seed));
  return { privateKey, address: publicKeyToAddress(secp256k1.getPublicKey(privateKey, false)) };
}

export const COMMON = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: Hardfork.Prague });

interface Account {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array;
  storage: Map<string, Uint8Array>;
}

type State = Map<string, Account>;

function cloneState(s: State): State {
  const out: State = new Map();
  for (const [k, a] of s) out.set(k, { ...a, storage: new Map(a.storage) });
  return out;
}

function account(s: State, who: Uint8Array): Account {
  const k = toData(who);
  let a = s.get(k);
  if (a === undefined) {
    a = { balance: 0n, nonce: 0n, code: new Uint8Array(0), storage: new Map() };
    s.set(k, a);
  }
  return a;
}

/** An @ethereumjs/tx transaction as the RPC's domain object. */
export function toEvmTx(tx: TypedTransaction): EvmTx {
  const t = tx as TypedTransaction & {
    gasPrice?: bigint;
    maxFeePerGas?: bigint;
    maxPriorityFeePerGas?: bigint;
    accessList?: [Uint8Array, Uint8Array[]][];
    chainId?: bigint;
  };
  const v = tx.v ?? 0n;
  const out: EvmTx = {
    hash: tx.hash(),
    type: tx.type,
    from: tx.getSenderAddress().bytes,
    to: tx.to?.bytes,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    value: tx.value,
    input: tx.data,
    chainId: tx.type === 0 ? (v >= 35n ? (v - 35n) / 2n : undefined) : t.chainId,
    v,
    r: tx.r ?? 0n,
    s: tx.s ?? 0n,
    ...(t.gasPrice === undefined ? {} : { gasPrice: t.gasPrice }),
    ...(t.maxFeePerGas === undefined ? {} : { maxFeePerGas: t.maxFeePerGas }),
    ...(t.maxPriorityFeePerGas === undefined ? {} : { maxPriorityFeePerGas: t.maxPriorityFeePerGas }),
    ...(tx.type === 1 || tx.type === 2
      ? { accessList: (t.accessList ?? []).map(([a, keys]) => ({ address: a, storageKeys: keys })) }
      : {}),
  };
  return out;
}

/** Signs tx data with a dev key (EIP-155 for legacy). */
export function signTx(data: TypedTxData, key: DevAccount): { raw: Uint8Array; tx: TypedTransaction } {
  const tx = createTx(data, { common: COMMON }).sign(key.privateKey);
  return { raw: tx.serialize(), tx };
}

/** A pre-EIP-155 legacy tx (v = 27/28). */
export function signUnprotectedLegacy(
  fields: { nonce: bigint; gasPrice: bigint; gasLimit: bigint; to: Uint8Array; value: bigint },
  key: DevAccount,
): Uint8Array {
  const body = [fields.nonce, fields.gasPrice, fields.gasLimit, fields.to, fields.value, new Uint8Array(0)];
  const digest = keccak_256(RLP.encode(body));
  const sig = secp256k1.sign(digest, key.privateKey, { prehash: false, format: "recovered" });
  const v = BigInt(27 + (sig[0] as number));
  return RLP.encode([...body, v, sig.subarray(1, 33), sig.subarray(33, 65)]);
}

function intrinsicGas(data: Uint8Array, creation: boolean): bigint {
  let gas = creation ? 53000n : 21000n;
  for (const b of data) gas += b === 0 ? 4n : 16n;
  return gas;
}

function abiError(message: string): Uint8Array {
  const text = Buffer.from(message, "utf8");
  const padded = Buffer.alloc(Math.ceil(text.length / 32) * 32);
  text.copy(padded);
  return Buffer.concat([
    Buffer.from("08c379a0", "hex"),
    padBytes(bigintToBytes(32n), 32),
    padBytes(bigintToBytes(BigInt(text.length)), 32),
    padded,
  ]);
}

function bloomAdd(bloom: Uint8Array, data: Uint8Array): void {
  const h = keccak_256(data);
  for (let i = 0; i < 6; i += 2) {
    const bit = (((h[i] as number) << 8) | (h[i + 1] as number)) & 2047;
    const byte = 255 - Math.floor(bit / 8);
    bloom[byte] = (bloom[byte] as number) | (1 << (bit % 8));
  }
}

function logsBloom(logs: readonly EvmLog[]): Uint8Array {
  const bloom = new Uint8Array(256);
  for (const l of logs) {
    bloomAdd(bloom, l.address);
    for (const t of l.topics) bloomAdd(bloom, t);
  }
  return bloom;
}

function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function contractAddress(from: Uint8Array, nonce: bigint): Uint8Array {
  return keccak_256(RLP.encode([from, nonce])).subarray(12);
}

export interface FakeChainOptions {
  /** Number of blocks after genesis at start (default 3, with transactions in blocks 1 and 2). */
  readonly blocks?: number;
  /** Omit the keyring (eth_accounts → []). */
  readonly noKeyring?: boolean;
  /** Omit the tracer. */
  readonly noTracer?: boolean;
}

/** The fake chain plus handles for tests. */
export interface FakeNode {
  readonly services: EvmServices;
  readonly keys: readonly DevAccount[];
  /** Moves the executable mempool txs into a new block and announces it. */
  mine(): Promise<EvmBlock>;
  /** Submits signed tx bytes through the fake mempool. */
  submit(raw: Uint8Array): Promise<SubmitResult>;
  /** Announces a pending tx hash without a tx (for filter tests). */
  announcePending(hash: Uint8Array): void;
  /** Blocks by height (0 = genesis). */
  readonly blocks: EvmBlock[];
  readonly receipts: Map<number, EvmReceipt[]>;
  /** Set syncing state for eth_syncing. */
  syncing: boolean;
  /** Calls to Executor.call (to count estimateGas probes). */
  callCount: number;
  /** Last CallOptions passed to call/trace. */
  lastCall: { request: CallRequest; opts: CallOptions } | undefined;
}

export function createFakeNode(opts: FakeChainOptions = {}): FakeNode {
  const keys = [devAccount("cometh-dev-0"), devAccount("cometh-dev-1"), devAccount("cometh-dev-2")];
  const blocks: EvmBlock[] = [];
  const receipts = new Map<number, EvmReceipt[]>();
  const states: State[] = [];
  const txIndex = new Map<string, { height: number; index: number }>();
  const pending: EvmTx[] = [];
  const queued: EvmTx[] = [];
  const blockListeners = new Set<(h: number) => void>();
  const pendingListeners = new Set<(hash: Uint8Array) => void>();
  const extraKeys: DevAccount[] = [];

  const genesis: State = new Map();
  for (const k of keys) account(genesis, k.address).balance = 1000n * ETHER;
  account(genesis, ECHO).code = Uint8Array.from([0x60, 0x00, 0xf3]);
  account(genesis, LOGGER).code = Uint8Array.from([0x60, 0x01, 0xf3]);
  account(genesis, LOGGER).storage.set(toData(ZERO_HASH), padBytes(Uint8Array.from([42]), 32));
  states.push(genesis);

  const makeBlock = (height: number, txs: EvmTx[], state: State): EvmBlock => {
    const parent = blocks[height - 1];
    const parentHash = parent === undefined ? ZERO_HASH : parent.hash;
    const timestamp = GENESIS_TIME + height;
    const hash = sha256(Uint8Array.from(Buffer.from(`block-${height}`)), parentHash, ...txs.map((t) => t.hash));
    const blockReceipts: EvmReceipt[] = [];
    let cumulative = 0n;
    let logIndex = 0;
    txs.forEach((tx, index) => {
      const from = account(state, tx.from);
      const creation = tx.to === undefined;
      const gasUsed =
        intrinsicGas(tx.input, creation) + (tx.to !== undefined && toData(tx.to) === toData(ECHO) ? 5000n : 0n);
      const price =
        tx.maxFeePerGas === undefined
          ? (tx.gasPrice ?? 0n)
          : BASE_FEE + (tx.maxPriorityFeePerGas ?? 0n) < tx.maxFeePerGas
            ? BASE_FEE + (tx.maxPriorityFeePerGas ?? 0n)
            : tx.maxFeePerGas;
      from.balance -= gasUsed * price + tx.value;
      from.nonce = tx.nonce + 1n;
      let created: Uint8Array | undefined;
      if (tx.to === undefined) {
        created = contractAddress(tx.from, tx.nonce);
        account(state, created).code = tx.input;
      } else account(state, tx.to).balance += tx.value;
      cumulative += gasUsed;
      const logs: EvmLog[] = [];
      if (tx.to !== undefined && toData(tx.to) === toData(LOGGER)) {
        logs.push({
          address: LOGGER,
          topics: [
            TRANSFER_TOPIC,
            padBytes(tx.from, 32),
            padBytes(tx.input.length >= 20 ? tx.input.subarray(0, 20) : LOGGER, 32),
          ],
          data: padBytes(bigintToBytes(tx.value), 32),
          blockNumber: height,
          blockHash: hash,
          blockTimestamp: timestamp,
          transactionHash: tx.hash,
          transactionIndex: index,
          logIndex: logIndex++,
        });
      }
      blockReceipts.push({
        transactionHash: tx.hash,
        transactionIndex: index,
        blockHash: hash,
        blockNumber: height,
        from: tx.from,
        to: tx.to,
        type: tx.type,
        status: 1,
        gasUsed,
        cumulativeGasUsed: cumulative,
        effectiveGasPrice: price,
        contractAddress: created,
        logs,
        logsBloom: logsBloom(logs),
      });
      txIndex.set(toData(tx.hash), { height, index });
    });
    receipts.set(height, blockReceipts);
    const allLogs = blockReceipts.flatMap((r) => r.logs);
    const block: EvmBlock = {
      number: height,
      hash,
      parentHash,
      timestamp,
      gasLimit: BLOCK_GAS_LIMIT,
      gasUsed: cumulative,
      baseFeePerGas: BASE_FEE,
      miner: keys[0]?.address ?? ZERO_ADDRESS,
      logsBloom: allLogs.length === 0 ? EMPTY_BLOOM : logsBloom(allLogs),
      stateRoot: sha256(Uint8Array.from(Buffer.from(`state-${height}`))),
      transactionsRoot: sha256(Uint8Array.from(Buffer.from(`txs-${height}`))),
      receiptsRoot: sha256(Uint8Array.from(Buffer.from(`receipts-${height}`))),
      size: 600 + txs.reduce((n, t) => n + 110 + t.input.length, 0),
      transactions: txs,
    };
    blocks[height] = block;
    return block;
  };

  // Genesis is block 0 (earliest = genesis: docs/ethereum-rpc.md "Block parameters").
  makeBlock(0, [], genesis);

  const nonces = new Map<string, bigint>();
  const nextNonce = (k: DevAccount) => {
    const n = nonces.get(toData(k.address)) ?? 0n;
    nonces.set(toData(k.address), n + 1n);
    return n;
  };
  const [k0, k1, k2] = keys as [DevAccount, DevAccount, DevAccount];
  const seedTxs: EvmTx[][] = [
    [
      toEvmTx(
        signTx(
          { type: 0, nonce: nextNonce(k0), gasPrice: 2n * GWEI, gasLimit: 21000n, to: k1.address, value: ETHER },
          k0,
        ).tx,
      ),
      toEvmTx(
        signTx(
          {
            type: 1,
            nonce: nextNonce(k1),
            gasPrice: 2n * GWEI,
            gasLimit: 50000n,
            to: ECHO,
            value: 0n,
            data: Uint8Array.from([1, 2, 3]),
            accessList: [[ECHO, [ZERO_HASH]]],
          },
          k1,
        ).tx,
      ),
      toEvmTx(
        signTx(
          {
            type: 2,
            nonce: nextNonce(k2),
            maxFeePerGas: 3n * GWEI,
            maxPriorityFeePerGas: GWEI,
            gasLimit: 60000n,
            to: LOGGER,
            value: 5n,
            data: k1.address,
          },
          k2,
        ).tx,
      ),
    ],
    [
      toEvmTx(
        signTx(
          {
            type: 2,
            nonce: nextNonce(k0),
            maxFeePerGas: 3n * GWEI,
            maxPriorityFeePerGas: 2n * GWEI,
            gasLimit: 200000n,
            value: 0n,
            data: Uint8Array.from([0x60, 0x80, 0x60, 0x40, 0x52]),
          },
          k0,
        ).tx,
      ),
      toEvmTx(
        signTx(
          {
            type: 0,
            nonce: nextNonce(k1),
            gasPrice: 3n * GWEI,
            gasLimit: 60000n,
            to: LOGGER,
            value: 7n,
            data: k2.address,
          },
          k1,
        ).tx,
      ),
    ],
  ];
  const initialBlocks = opts.blocks ?? 3;
  for (let h = 1; h <= initialBlocks; h++) {
    const state = cloneState(states[h - 1] as State);
    makeBlock(h, seedTxs[h - 1] ?? [], state);
    states.push(state);
  }

  const latest = () => blocks.length - 1;
  const stateAt = (height: number): State => {
    const s = states[height];
    if (s === undefined) throw new FakeNodeError(`missing trie node for height ${height}`);
    return s;
  };
  const location = (height: number, index: number): TxLocation => {
    const b = blocks[height] as EvmBlock;
    return {
      blockHash: b.hash,
      blockNumber: height,
      blockTimestamp: b.timestamp,
      index,
      baseFeePerGas: b.baseFeePerGas,
    };
  };

  const node: FakeNode = {
    services: undefined as unknown as EvmServices,
    keys,
    blocks,
    receipts,
    syncing: false,
    callCount: 0,
    lastCall: undefined,
    async mine() {
      const height = latest() + 1;
      const state = cloneState(stateAt(height - 1));
      const txs = pending.splice(0);
      const block = makeBlock(height, txs, state);
      states.push(state);
      // Promote queued txs whose nonce is now next.
      for (let i = 0; i < queued.length; ) {
        const tx = queued[i] as EvmTx;
        if (account(state, tx.from).nonce === tx.nonce) {
          pending.push(tx);
          queued.splice(i, 1);
        } else i++;
      }
      for (const l of [...blockListeners]) l(height);
      return block;
    },
    submit: async (raw) => submit(raw),
    announcePending(hash) {
      for (const l of [...pendingListeners]) l(hash);
    },
  };

  const submit = (raw: Uint8Array): SubmitResult => {
    let tx: TypedTransaction;
    try {
      tx = createTxFromRLP(raw, { common: COMMON });
    } catch (err) {
      return { accepted: false, code: 2, log: `tx parse error: ${(err as Error).message}` };
    }
    if (!tx.isSigned() || !tx.verifySignature()) return { accepted: false, code: 4, log: "invalid sender" };
    const evm = toEvmTx(tx);
    const key = toData(evm.hash);
    if ([...pending, ...queued].some((p) => toData(p.hash) === key) || txIndex.has(key)) {
      return { accepted: false, code: 19, log: "already known" };
    }
    const state = stateAt(latest());
    const acct = account(state, evm.from);
    if (evm.nonce < acct.nonce) {
      return { accepted: false, code: 3, log: `nonce too low: next nonce ${acct.nonce}, tx nonce ${evm.nonce}` };
    }
    const price = evm.maxFeePerGas ?? evm.gasPrice ?? 0n;
    const cost = evm.gasLimit * price + evm.value;
    if (acct.balance < cost) {
      return {
        accepted: false,
        code: 5,
        log: `insufficient funds for gas * price + value: address ${toData(evm.from)} have ${acct.balance} want ${cost}`,
      };
    }
    // Same sender and nonce: a replacement, which must pay at least 10 % more.
    for (const list of [pending, queued]) {
      const i = list.findIndex((p) => toData(p.from) === toData(evm.from) && p.nonce === evm.nonce);
      if (i < 0) continue;
      const old = list[i] as EvmTx;
      const oldPrice = old.maxFeePerGas ?? old.gasPrice ?? 0n;
      if (price * 10n < oldPrice * 11n) return { accepted: false, code: 6, log: "replacement transaction underpriced" };
      list[i] = evm;
      for (const l of [...pendingListeners]) l(evm.hash);
      return { accepted: true, hash: evm.hash };
    }
    const mine = pending.filter((p) => toData(p.from) === toData(evm.from));
    const next = mine.reduce((n, p) => (p.nonce >= n ? p.nonce + 1n : n), acct.nonce);
    if (evm.nonce === next) pending.push(evm);
    else queued.push(evm);
    for (const l of [...pendingListeners]) l(evm.hash);
    return { accepted: true, hash: evm.hash };
  };

  const execute = async (req: CallRequest, o: CallOptions): Promise<CallResult> => {
    node.callCount++;
    node.lastCall = { request: req, opts: o };
    if (o.signal.aborted) throw new FakeNodeError("execution aborted");
    const gas = req.gas ?? o.gasCap;
    const data = req.data ?? new Uint8Array(0);
    const creation = req.to === undefined;
    const intrinsic = intrinsicGas(data, creation);
    if (gas < intrinsic) throw new FakeNodeError(`intrinsic gas too low: gas ${gas}, minimum needed ${intrinsic}`);
    const state = stateAt(o.height);
    const from = req.from ?? ZERO_ADDRESS;
    const override = o.overrides?.get(toData(from));
    const balance = override?.balance ?? account(state, from).balance;
    const price = req.gasPrice ?? req.maxFeePerGas ?? 0n;
    const value = req.value ?? 0n;
    if (price > 0n && balance < gas * price + value) {
      throw new FakeNodeError(
        `insufficient funds for gas * price + value: address ${toData(from)} have ${balance} want ${gas * price + value}`,
      );
    }
    if (price === 0n && value > balance) throw new FakeNodeError("insufficient funds for transfer");
    const to = req.to === undefined ? "" : toData(req.to);
    const codeOverride = req.to === undefined ? undefined : o.overrides?.get(to)?.code;
    if (codeOverride !== undefined) return { status: "success", returnData: codeOverride, gasUsed: intrinsic };
    if (to === toData(REVERTER)) return { status: "reverted", returnData: abiError("boom"), gasUsed: intrinsic + 100n };
    if (to === toData(PANICKER)) {
      return {
        status: "reverted",
        returnData: Buffer.concat([Buffer.from("4e487b71", "hex"), padBytes(Uint8Array.from([0x11]), 32)]),
        gasUsed: intrinsic + 100n,
      };
    }
    if (to === toData(FAILER))
      return { status: "failed", returnData: new Uint8Array(0), gasUsed: gas, error: "out of gas" };
    if (to === toData(SLOW)) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 10_000);
        o.signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        });
      });
      return { status: "success", returnData: new Uint8Array(0), gasUsed: intrinsic };
    }
    if (to === toData(ECHO)) {
      const need = intrinsic + 5000n;
      if (gas < need) return { status: "failed", returnData: new Uint8Array(0), gasUsed: gas, error: "out of gas" };
      return { status: "success", returnData: data, gasUsed: need };
    }
    return { status: "success", returnData: new Uint8Array(0), gasUsed: intrinsic };
  };

  const trace = (tx: EvmTx, config: TraceConfig, gasUsed: bigint): TraceResult => {
    if (config.tracer === "callTracer") {
      return {
        kind: "call",
        frame: {
          type: tx.to === undefined ? "CREATE" : "CALL",
          from: tx.from,
          to: tx.to,
          value: tx.value,
          gas: tx.gasLimit,
          gasUsed,
          input: tx.input,
          output: new Uint8Array(0),
          ...(config.onlyTopCall
            ? {}
            : {
                calls: [
                  {
                    type: "STATICCALL",
                    from: ECHO,
                    to: LOGGER,
                    value: undefined,
                    gas: 1000n,
                    gasUsed: 100n,
                    input: Uint8Array.from([1]),
                  },
                ],
              }),
        },
      };
    }
    const steps = [
      { pc: 0, op: "PUSH1", gas: 1000n, gasCost: 3n, depth: 1, stackItems: [] as bigint[] },
      { pc: 2, op: "PUSH1", gas: 997n, gasCost: 3n, depth: 1, stackItems: [0x80n] },
      { pc: 4, op: "SSTORE", gas: 994n, gasCost: 20000n, depth: 1, stackItems: [0x80n, 0x40n] },
    ];
    const limited = config.limit > 0 ? steps.slice(0, config.limit) : steps;
    return {
      kind: "struct",
      gas: gasUsed,
      failed: false,
      returnValue: new Uint8Array(0),
      structLogs: limited.map((st) => ({
        pc: st.pc,
        op: st.op,
        gas: st.gas,
        gasCost: st.gasCost,
        depth: st.depth,
        refund: 0n,
        ...(config.disableStack ? {} : { stack: st.stackItems }),
        ...(config.enableMemory ? { memory: [new Uint8Array(32)] } : {}),
        ...(st.op === "SSTORE" && !config.disableStorage
          ? {
              storage: new Map([
                [toData(padBytes(Uint8Array.from([0x40]), 32)), padBytes(Uint8Array.from([0x80]), 32)],
              ]),
            }
          : {}),
      })),
    };
  };

  const keyring: DevKeyring = {
    accounts: () => [...keys, ...extraKeys].map((k) => k.address),
    signDigest(address, digest) {
      const k = [...keys, ...extraKeys].find((x) => toData(x.address) === toData(address));
      if (k === undefined)
        throw new FakeNodeError("failed to find key in the node's keyring; no key for given address or file");
      const sig = secp256k1.sign(digest, k.privateKey, { prehash: false, format: "recovered" });
      return Uint8Array.from([...sig.subarray(1), sig[0] as number]);
    },
    importRawKey(privateKey) {
      const k = { privateKey, address: publicKeyToAddress(secp256k1.getPublicKey(privateKey, false)) };
      extraKeys.push(k);
      return k.address;
    },
    newAccount(password) {
      const k = devAccount(`new-${extraKeys.length}-${password}`);
      extraKeys.push(k);
      return k.address;
    },
  };

  const services: EvmServices = {
    chain: {
      latestHeight: latest,
      blockByNumber: (n) => blocks[n],
      blockByHash: (hash) => blocks.find((b) => toData(b.hash) === toData(hash)),
      transactionByHash(hash) {
        const at = txIndex.get(toData(hash));
        if (at === undefined) return undefined;
        const tx = blocks[at.height]?.transactions[at.index] as EvmTx;
        return { tx, location: location(at.height, at.index) };
      },
      receiptByHash(hash) {
        const at = txIndex.get(toData(hash));
        return at === undefined ? undefined : receipts.get(at.height)?.[at.index];
      },
      blockReceipts: (n) => receipts.get(n),
      logs(q: LogQuery) {
        const out: EvmLog[] = [];
        for (let h = q.fromBlock; h <= q.toBlock && h < blocks.length; h++) {
          for (const r of receipts.get(h) ?? []) {
            for (const l of r.logs) {
              if (!logMatches(l, q.addresses, q.topics)) continue;
              out.push(l);
              if (out.length >= q.limit) return out;
            }
          }
        }
        return out;
      },
    },
    state: {
      balance: (who, h) => account(stateAt(h), who).balance,
      nonce: (who, h) => account(stateAt(h), who).nonce,
      code: (who, h) => account(stateAt(h), who).code,
      storage: (who, slot, h) => account(stateAt(h), who).storage.get(toData(slot)) ?? new Uint8Array(32),
      proof(who, slots, h): AccountProof {
        const a = account(stateAt(h), who);
        return {
          address: who,
          accountProof: [RLP.encode([a.nonce, a.balance]), Uint8Array.from([0xc0])],
          balance: a.balance,
          codeHash: keccak_256(a.code),
          nonce: a.nonce,
          storageHash: keccak_256(Uint8Array.from([0x80])),
          storageProof: slots.map((key) => ({
            key,
            value: BigInt(toData(a.storage.get(toData(key)) ?? new Uint8Array(1))),
            proof: [Uint8Array.from([0xc0])],
          })),
        };
      },
    },
    execution: { call: execute },
    mempool: {
      submit: async (raw) => submit(raw),
      content: () => ({ pending: [...pending], queued: [...queued] }),
      transactionByHash: (hash) => [...pending, ...queued].find((t) => toData(t.hash) === toData(hash)),
    },
    fees: {
      nextBaseFee: () => BASE_FEE,
      headBaseFee: () => BASE_FEE,
      suggestTipCap: () => BASE_FEE / 8n,
      minGasPrice: () => 0n,
    },
    events: {
      onNewBlock(l) {
        blockListeners.add(l);
        return () => blockListeners.delete(l);
      },
      onPendingTransaction(l) {
        pendingListeners.add(l);
        return () => pendingListeners.delete(l);
      },
    },
    node: {
      chainId: () => CHAIN_ID,
      version: () => "0.1.0",
      syncStatus: () => ({
        catchingUp: node.syncing,
        startingBlock: 1,
        currentBlock: latest(),
        highestBlock: latest() + 5,
      }),
      peerCount: () => 2,
      listening: () => true,
      identity: () => ({
        id: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
        name: "test-node",
        listenAddr: "tcp://0.0.0.0:26656",
        network: "cometh-test",
      }),
      dataDir: () => "/tmp/cometh-test",
    },
    p2p: {
      peers: () => [
        {
          id: "ffeeddccbbaa00112233445566778899aabbccdd",
          name: "peer-1",
          remoteAddress: "10.0.0.2:26656",
          inbound: false,
        },
      ],
      addPeer: (url) => url.includes("@"),
      removePeer: (url) => url.includes("@"),
    },
    miner: { setEtherbase: () => true, setGasPrice: () => true },
  };
  if (opts.noKeyring !== true) services.keyring = keyring;
  if (opts.noTracer !== true) {
    services.tracer = {
      async traceTransaction(hash, config) {
        const at = txIndex.get(toData(hash));
        if (at === undefined) throw new FakeNodeError(`transaction ${toData(hash)} not found`);
        const r = receipts.get(at.height)?.[at.index] as EvmReceipt;
        return trace(blocks[at.height]?.transactions[at.index] as EvmTx, config, r.gasUsed);
      },
      async traceBlock(height, config) {
        const b = blocks[height] as EvmBlock;
        return b.transactions.map((tx, i) => ({
          txHash: tx.hash,
          result: trace(tx, config, receipts.get(height)?.[i]?.gasUsed ?? 0n),
        }));
      },
      async traceCall(request, config, o) {
        node.lastCall = { request, opts: o };
        const from = request.from ?? ZERO_ADDRESS;
        const pseudo: EvmTx = {
          hash: ZERO_HASH,
          type: 2,
          from,
          to: request.to,
          nonce: 0n,
          gasLimit: request.gas ?? o.gasCap,
          value: request.value ?? 0n,
          input: request.data ?? new Uint8Array(0),
          chainId: CHAIN_ID,
          v: 0n,
          r: 0n,
          s: 0n,
        };
        return trace(pseudo, config, 21000n);
      },
    };
  }
  (node as { services: EvmServices }).services = services;
  return node;
}
