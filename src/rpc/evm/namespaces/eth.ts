import { crc32 } from "node:zlib";
import { bytesEqual } from "../../../util/bytes.js";
import { isPromise, type JsonNode, parseJson, type WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { encodeBlock, encodeHeader } from "../encode/block.js";
import { padBytes, toAddress, toData, toQuantity } from "../encode/hex.js";
import { encodeLog, encodeReceipt } from "../encode/receipt.js";
import { encodeTransaction, txLocationInBlock } from "../encode/transaction.js";
import { invalidParams, methodNotFound, serverError } from "../errors.js";
import { getLogsJson } from "../filters/getLogs.js";
import { fromForkSource } from "../forkHistory.js";
import { type Method, method, type Namespace, notImplemented } from "../method.js";
import { decodeStorageKey, type Param, ParamError, p } from "../params.js";
import type { AccessListEntry, EvmBlock, EvmReceipt, EvmServices, EvmTx, NamedAddress } from "../services.js";
import { subscribe, unsubscribe } from "../subscriptions/subscribe.js";
import { signTransaction } from "../tx/buildTx.js";
import { TypedDataError, typedDataHash } from "../tx/eip712.js";
import { personalMessageHash } from "../tx/signatures.js";
import { callGas, callHere, checkCallArgs, doCall, estimateGas, simulateV1, withEvmTimeout } from "./execution.js";
import { feeHistory } from "./feeHistory.js";
import { blockByRef, blockBySpec, stateHeight, stateHeightNow } from "./resolve.js";
import {
  checkTxFee,
  pendingNonce,
  requireKeyring,
  sendRawTransactionSync,
  sendUnsigned,
  sendWithKeyring,
  signDigest27,
  signWithKeyring,
  submitRawTransaction,
} from "./sending.js";

/**
 * The eth namespace (docs/ethereum-rpc.md, answers shaped by the execution-apis). Not-found
 * objects are `null` (docs/ethereum-rpc.md "Block parameters"), never errors.
 */

/** eth/65, as Cosmos EVM reports. */
const PROTOCOL_VERSION = "0x41";

function encodeBlockOrNull(b: EvmBlock | undefined, fullTx: boolean): WireValue {
  return b === undefined ? null : encodeBlock(b, fullTx);
}

/** A receipt, or on a forked dev chain one from before the fork (its source's answer), or null. */
function receiptAnswer(r: EvmReceipt | undefined, hash: Uint8Array, s: EvmServices): WireValue {
  return r === undefined ? fromForkSource(s, "eth_getTransactionReceipt", [toData(hash)]) : encodeReceipt(r);
}

function txAt(b: EvmBlock | undefined, index: number): WireValue {
  const tx = b?.transactions[index];
  return b === undefined || tx === undefined ? null : encodeTransaction(tx, txLocationInBlock(b, index));
}

/**
 * eth_gasPrice: the latest block's base fee + suggested tip, never below the node's minimum (Cosmos
 * EVM's GasPrice: head.BaseFee + SuggestGasTipCap(head.BaseFee)). At least the base fee calls and
 * estimates run with, and at most 12.5% below the next block's.
 */
async function gasPrice(s: EvmServices): Promise<bigint> {
  const [base, tip, min] = await Promise.all([s.fees.headBaseFee(), s.fees.suggestTipCap(), s.fees.minGasPrice()]);
  const price = (base ?? 0n) + tip;
  return price > min ? price : min;
}

/** geth's storageProof key echo: 32-byte keys as given, shorter ones as quantities. */
function proofKey(text: string, key: Uint8Array): string {
  const body = text.startsWith("0x") || text.startsWith("0X") ? text.slice(2) : text;
  if (body.length === 64) return toData(key);
  return toQuantity(BigInt(toData(key)));
}

/**
 * eth_sendRawTransactionSync's timeout in milliseconds: a JSON number, as geth (`*uint64`) and viem
 * send it, or a 0x quantity.
 */
const syncTimeoutMs: Param<number> = {
  optional: false,
  decode(node: JsonNode): number {
    const v = node.kind === "string" ? p.uint64.decode(node) : BigInt(p.uint.decode(node));
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
  },
};

/** A name → address map as geth writes a Go map: keys sorted. */
function namedAddresses(list: readonly NamedAddress[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    out[e.name] = toAddress(e.address);
  }
  return out;
}

/**
 * eth_config (EIP-7910). cometh runs one fork (Prague) from genesis, so `current` is it with activation
 * time 0 and `next` and `last` are null. The fork id (EIP-2124) is the CRC32 of the genesis hash: no
 * fork follows the genesis.
 */
async function ethConfig(s: EvmServices, method: string): Promise<WireValue> {
  const rules = s.node.chainRules?.();
  if (rules === undefined) throw methodNotFound(method, "this node does not describe its chain rules");
  const genesis = await s.chain.blockByNumber(0);
  if (genesis === undefined) throw serverError("unable to load genesis: block 0 is not available");
  const forkId = Buffer.alloc(4);
  forkId.writeUInt32BE(crc32(genesis.hash) >>> 0);
  return {
    current: {
      activationTime: 0,
      blobSchedule: {
        baseFeeUpdateFraction: Number(rules.blobSchedule.baseFeeUpdateFraction),
        max: rules.blobSchedule.max,
        target: rules.blobSchedule.target,
      },
      chainId: toQuantity(s.node.chainId()),
      forkId: toData(forkId),
      precompiles: namedAddresses(rules.precompiles),
      systemContracts: namedAddresses(rules.systemContracts),
    },
    next: null,
    last: null,
  };
}

async function findPending(s: EvmServices, from: Uint8Array, nonce: bigint): Promise<EvmTx | undefined> {
  const { pending, queued } = await s.mempool.content();
  return [...pending, ...queued].find((tx) => bytesEqual(tx.from, from) && tx.nonce === nonce);
}

/**
 * An eth_ method only a dev chain serves (Anvil's): elsewhere -32601 before its params are read, as
 * Cosmos EVM, which does not register it, answers.
 */
function devChainOnly(m: Method, alternative?: string): Method {
  const why = `it needs a dev chain: start one with \`cometh dev\`${alternative === undefined ? "" : ` (${alternative})`}`;
  return {
    ...m,
    guard: (s, ctx) => {
      if (s.dev === undefined) throw methodNotFound(ctx.method, why);
    },
  };
}

/**
 * eth_signTypedData and, on dev chains, its _v3/_v4 names: the EIP-712 digest of `typed` (an object, or
 * for the dev names also its JSON text) signed by a dev keyring account, V as 27/28.
 */
function signTyped(who: Uint8Array, typed: JsonNode, s: EvmServices, ctx: EvmCallContext, devName: boolean) {
  let digest: Uint8Array;
  try {
    let node = typed;
    if (devName && node.kind === "string") {
      try {
        node = parseJson(node.value);
      } catch {
        throw new TypedDataError("the typed data string is not JSON");
      }
    }
    digest = typedDataHash(node);
  } catch (err) {
    if (err instanceof TypedDataError) throw invalidParams(`invalid argument 1: ${err.message}`);
    throw err;
  }
  return signDigest27(s, ctx, who, digest);
}

/** eth_accounts: the dev keyring's addresses. */
const accounts = method([], async (_, s, ctx) => {
  if (!ctx.runtime.settings.allowInsecureUnlock) throw serverError("account unlock with HTTP access is forbidden");
  return ((await s.keyring?.accounts()) ?? []).map(toAddress);
});

/** eth_signTypedData_v4 and _v3, Anvil's and Hardhat's names (dev chains): the typed data also as JSON text. */
const signTypedDataDevName = devChainOnly(
  method([p.address, p.any], ([who, typed], s, ctx) => signTyped(who, typed, s, ctx, true)),
  "or call eth_signTypedData",
);

export const eth = {
  blockNumber: method([], (_, s) => toQuantity(s.chain.latestHeight())),
  chainId: method([], (_, s) => toQuantity(s.node.chainId())),
  protocolVersion: method([], () => PROTOCOL_VERSION),
  syncing: method([], async (_, s) => {
    const st = await s.node.syncStatus();
    if (!st.catchingUp) return false;
    return {
      startingBlock: toQuantity(st.startingBlock),
      currentBlock: toQuantity(st.currentBlock),
      highestBlock: toQuantity(st.highestBlock),
    };
  }),
  accounts,
  // EIP-1102's name, which Anvil answers as eth_accounts (viem's requestAddresses calls it).
  requestAccounts: devChainOnly(accounts),
  gasPrice: method([], async (_, s) => toQuantity(await gasPrice(s))),
  maxPriorityFeePerGas: method([], async (_, s) => toQuantity(await s.fees.suggestTipCap())),
  feeHistory: method([p.hexOrDecimal, p.block, p.floatList], ([count, newest, percentiles], s, ctx) =>
    feeHistory(count, newest, percentiles, s, ctx),
  ),
  config: method([], (_, s, ctx) => ethConfig(s, ctx.method)),

  // State
  getBalance: method([p.address, p.blockRef], ([who, ref], s) => {
    // Tags and numbers (nearly every call) are answered without a promise.
    const height = stateHeightNow(ref, s);
    if (height === undefined) return stateHeight(ref, s).then(async (h) => toQuantity(await s.state.balance(who, h)));
    const balance = s.state.balance(who, height);
    return isPromise(balance) ? balance.then(toQuantity) : toQuantity(balance);
  }),
  getCode: method([p.address, p.blockRef], async ([who, ref], s) =>
    toData(await s.state.code(who, await stateHeight(ref, s))),
  ),
  /** Anvil's eth_getAccountInfo: balance, nonce and code in one answer. */
  getAccountInfo: method([p.address, p.optional(p.blockRef)], async ([who, ref], s) => {
    const height = await stateHeight(ref, s);
    const [balance, nonce, code] = await Promise.all([
      s.state.balance(who, height),
      s.state.nonce(who, height),
      s.state.code(who, height),
    ]);
    return { balance: toQuantity(balance), nonce: toQuantity(nonce), code: toData(code) };
  }),
  getStorageAt: method([p.address, p.string, p.blockRef], async ([who, keyText, ref], s) => {
    let key: Uint8Array;
    try {
      key = decodeStorageKey(keyText);
    } catch (err) {
      if (err instanceof ParamError) throw invalidParams(`unable to decode storage key: ${err.message}`);
      throw err;
    }
    const value = await s.state.storage(who, key, await stateHeight(ref, s));
    return toData(padBytes(value, 32));
  }),
  getTransactionCount: method([p.address, p.blockRef], async ([who, ref], s) => {
    if (ref.kind === "tag" && ref.tag === "pending") return toQuantity(await pendingNonce(who, s));
    return toQuantity(await s.state.nonce(who, await stateHeight(ref, s)));
  }),
  getProof: method([p.address, p.stringList, p.blockRef], async ([who, keyTexts, ref], s) => {
    const keys = keyTexts.map((k, i) => {
      try {
        return decodeStorageKey(k);
      } catch (err) {
        if (err instanceof ParamError) throw invalidParams(`invalid argument 1: storage key ${i}: ${err.message}`);
        throw err;
      }
    });
    const proof = await s.state.proof(who, keys, await stateHeight(ref, s));
    return {
      address: toAddress(proof.address),
      accountProof: proof.accountProof.map(toData),
      balance: toQuantity(proof.balance),
      codeHash: toData(proof.codeHash),
      nonce: toQuantity(proof.nonce),
      storageHash: toData(proof.storageHash),
      storageProof: proof.storageProof.map((sp, i) => ({
        key: proofKey(keyTexts[i] ?? "", sp.key),
        value: toQuantity(sp.value),
        proof: sp.proof.map(toData),
      })),
    };
  }),

  // Execution
  call: method(
    [p.callRequest, p.optional(p.blockRef), p.optional(p.stateOverrides)],
    ([req, ref, overrides], s, ctx) => {
      // A call run in process, or one the node has already answered at this height (dApps polling a
      // view), needs no promise.
      const height = stateHeightNow(ref, s);
      const here = height === undefined ? undefined : callHere(req, height, overrides, s, ctx);
      if (here !== undefined) return toData(here);
      return stateHeight(ref, s).then((h) => doCall(req, h, overrides, s, ctx).then(toData));
    },
  ),
  estimateGas: method(
    [p.callRequest, p.optional(p.blockRef), p.optional(p.stateOverrides)],
    async ([req, ref, overrides], s, ctx) =>
      toQuantity(await estimateGas(req, await stateHeight(ref, s), overrides, s, ctx)),
  ),
  createAccessList: method(
    [p.callRequest, p.optional(p.blockRef), p.optional(p.stateOverrides)],
    async ([req, ref, overrides], s, ctx) => {
      checkCallArgs(req, s.node.chainId());
      const height = await stateHeight(ref, s);
      const gas = callGas(req, ctx.runtime.settings.gasCap);
      const opts = (signal: AbortSignal, timeoutMs: number) =>
        overrides === undefined
          ? { height, gasCap: gas, timeoutMs, signal }
          : { height, gasCap: gas, timeoutMs, signal, overrides };
      const encodeList = (list: readonly AccessListEntry[]) =>
        list.map((e) => ({ address: toAddress(e.address), storageKeys: e.storageKeys.map(toData) }));
      const create = s.execution.createAccessList;
      if (create !== undefined) {
        const r = await withEvmTimeout(ctx, (signal, t) => create.call(s.execution, { ...req, gas }, opts(signal, t)));
        return { accessList: encodeList(r.accessList), gasUsed: toQuantity(r.gasUsed), error: r.error };
      }
      // Cosmos EVM v0.5 does not trace accesses: the given list (or []) with the call's gas.
      const r = await withEvmTimeout(ctx, (signal, t) => s.execution.call({ ...req, gas }, opts(signal, t)));
      return {
        accessList: encodeList(req.accessList ?? []),
        gasUsed: toQuantity(r.gasUsed),
        error: r.status === "success" ? undefined : r.status === "reverted" ? "execution reverted" : r.error,
      };
    },
  ),

  simulateV1: method([p.simulateParams, p.optional(p.blockRef)], async ([params, ref], s, ctx) =>
    simulateV1(params, await stateHeight(ref, s), s, ctx),
  ),

  // Sending and signing
  sendRawTransaction: method([p.data], ([raw], s, ctx) => submitRawTransaction(raw, s, ctx)),
  sendRawTransactionSync: method([p.data, p.optional(syncTimeoutMs)], ([raw, timeoutMs], s, ctx) =>
    sendRawTransactionSync(raw, timeoutMs, s, ctx),
  ),
  sendTransaction: method([p.callRequest], ([req], s, ctx) => sendWithKeyring(req, s, ctx)),
  sendUnsignedTransaction: method([p.callRequest], ([req], s, ctx) => sendUnsigned(req, s, ctx)),
  sign: method([p.address, p.data], ([who, data], s, ctx) => signDigest27(s, ctx, who, personalMessageHash(data))),
  signTypedData: method([p.address, p.any], ([who, typed], s, ctx) => signTyped(who, typed, s, ctx, false)),
  // Anvil's and Hardhat's names, which ethers' and viem's JSON-RPC accounts call with the typed data as a
  // JSON string (Cosmos EVM registers only eth_signTypedData: elsewhere -32601).
  signTypedData_v4: signTypedDataDevName,
  signTypedData_v3: signTypedDataDevName,
  signTransaction: devChainOnly(method([p.callRequest], ([req], s, ctx) => signWithKeyring(req, s, ctx))),
  fillTransaction: notImplemented("cometh does not fill transactions (see docs/compatibility.md)"),
  resend: method(
    [p.callRequest, p.optional(p.quantity), p.optional(p.uint64)],
    async ([req, newPrice, newGas], s, ctx) => {
      if (req.nonce === undefined) throw serverError("missing transaction nonce in transaction spec");
      const keyring = requireKeyring(s, ctx);
      const from = req.from;
      if (from === undefined) throw serverError('missing "from": name the dev keyring account that signs');
      const old = await findPending(s, from, req.nonce);
      if (old === undefined) {
        throw serverError(`transaction from ${toAddress(from)} with nonce ${req.nonce} not found in the mempool`);
      }
      const gasLimit = newGas ?? old.gasLimit;
      const feeMarket = old.maxFeePerGas !== undefined;
      const price = newPrice ?? (feeMarket ? old.maxFeePerGas : old.gasPrice) ?? 0n;
      const tip = old.maxPriorityFeePerGas ?? 0n;
      checkTxFee(gasLimit, price, ctx.runtime.settings.txFeeCapWei);
      const raw = await signTransaction(
        {
          type: feeMarket ? 2 : old.type === 1 ? 1 : 0,
          chainId: s.node.chainId(),
          nonce: old.nonce,
          gasLimit,
          to: old.to,
          value: old.value,
          data: old.input,
          accessList: old.accessList ?? [],
          ...(feeMarket
            ? { maxFeePerGas: price, maxPriorityFeePerGas: tip < price ? tip : price }
            : { gasPrice: price }),
        },
        (digest) => keyring.signDigest(from, digest),
      );
      return submitRawTransaction(raw, s, ctx);
    },
  ),

  // Blocks
  getBlockByNumber: method([p.block, p.bool], async ([spec, full], s) =>
    encodeBlockOrNull(await blockBySpec(spec, s), full),
  ),
  getBlockByHash: method([p.hash, p.bool], async ([hash, full], s) => {
    const block = await s.chain.blockByHash(hash);
    if (block === undefined) return fromForkSource(s, "eth_getBlockByHash", [toData(hash), full]);
    return encodeBlockOrNull(block, full);
  }),
  getHeaderByNumber: method([p.block], async ([spec], s) => {
    const b = await blockBySpec(spec, s);
    return b === undefined ? null : encodeHeader(b);
  }),
  getHeaderByHash: method([p.hash], async ([hash], s) => {
    const b = await s.chain.blockByHash(hash);
    return b === undefined ? null : encodeHeader(b);
  }),
  getBlockTransactionCountByNumber: method([p.block], async ([spec], s) => {
    const b = await blockBySpec(spec, s);
    return b === undefined ? null : toQuantity(b.transactions.length);
  }),
  getBlockTransactionCountByHash: method([p.hash], async ([hash], s) => {
    const b = await s.chain.blockByHash(hash);
    return b === undefined ? null : toQuantity(b.transactions.length);
  }),
  getBlockReceipts: method([p.blockRef], async ([ref], s) => {
    const b = await blockByRef(ref, s);
    if (b === undefined) return null;
    const receipts = await s.chain.blockReceipts(b.number);
    return receipts === undefined ? null : receipts.map(encodeReceipt);
  }),
  getUncleCountByBlockHash: method([p.hash], async ([hash], s) =>
    (await s.chain.blockByHash(hash)) === undefined ? null : "0x0",
  ),
  getUncleCountByBlockNumber: method([p.block], async ([spec], s) =>
    (await blockBySpec(spec, s)) === undefined ? null : "0x0",
  ),
  getUncleByBlockHashAndIndex: method([p.hash, p.index], () => null),
  getUncleByBlockNumberAndIndex: method([p.block, p.index], () => null),

  // Transactions
  getTransactionByHash: method([p.hash], async ([hash], s) => {
    const mined = await s.chain.transactionByHash(hash);
    if (mined !== undefined) return encodeTransaction(mined.tx, mined.location);
    const pending = await s.mempool.transactionByHash(hash);
    if (pending === undefined) return fromForkSource(s, "eth_getTransactionByHash", [toData(hash)]);
    return encodeTransaction(pending, undefined);
  }),
  getTransactionByBlockHashAndIndex: method([p.hash, p.index], async ([hash, index], s) =>
    txAt(await s.chain.blockByHash(hash), index),
  ),
  getTransactionByBlockNumberAndIndex: method([p.block, p.index], async ([spec, index], s) =>
    txAt(await blockBySpec(spec, s), index),
  ),
  getTransactionReceipt: method([p.hash], ([hash], s) => {
    // The node's receipts answer synchronously, and so does this (a test polls it once per tx).
    const r = s.chain.receiptByHash(hash);
    return isPromise(r) ? r.then((x) => receiptAnswer(x, hash, s)) : receiptAnswer(r, hash, s);
  }),
  getTransactionLogs: method([p.hash], async ([hash], s) => {
    const r = await s.chain.receiptByHash(hash);
    return r === undefined ? null : r.logs.map(encodeLog);
  }),

  // Logs and filters
  getLogs: method([p.filter], ([criteria], s, ctx) =>
    getLogsJson(criteria, s, ctx.runtime.settings, ctx.runtime.logsMemo),
  ),
  newFilter: method([p.filter], ([criteria], _s, ctx) => ctx.runtime.filters.newLogFilter(criteria)),
  newBlockFilter: method([], (_, _s, ctx) => ctx.runtime.filters.newBlockFilter()),
  newPendingTransactionFilter: method([p.optional(p.bool)], (_, _s, ctx) =>
    ctx.runtime.filters.newPendingTransactionFilter(),
  ),
  getFilterChanges: method([p.string], ([id], _s, ctx) => ctx.runtime.filters.changes(id)),
  getFilterLogs: method([p.string], async ([id], _s, ctx) => (await ctx.runtime.filters.logs(id)).map(encodeLog)),
  uninstallFilter: method([p.string], ([id], _s, ctx) => ctx.runtime.filters.uninstall(id)),
  subscribe: method(
    [p.optional(p.string), p.optional(p.any)],
    ([kind, options], s, ctx) => {
      if (kind === undefined) throw invalidParams("expected subscription name as first argument");
      return subscribe(kind, options, s, ctx);
    },
    { wsOnly: true },
  ),
  unsubscribe: method([p.string], ([id], _s, ctx) => {
    if (ctx.sink === undefined) throw serverError("subscription not found");
    return unsubscribe(id, ctx);
  }),
} satisfies Namespace;
