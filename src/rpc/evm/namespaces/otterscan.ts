import type { JsonNode, WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { encodeHeader } from "../encode/block.js";
import { toAddress, toData, toQuantity, ZERO_ADDRESS } from "../encode/hex.js";
import { encodeParityTraces, encodeStateDiff, encodeVmTrace, type TraceLocation } from "../encode/parity.js";
import { encodeReceipt } from "../encode/receipt.js";
import { encodeTransaction, txLocationInBlock } from "../encode/transaction.js";
import { invalidParams, methodNotFound, notImplemented, serverError } from "../errors.js";
import { type Method, method, type Namespace } from "../method.js";
import { type BlockSpec, type Param, ParamError, p } from "../params.js";
import type { CallFrame, EvmBlock, EvmReceipt, EvmServices, TraceConfig, TraceResult, Tracer } from "../services.js";
import { blockBySpec, specHeight } from "./resolve.js";

/**
 * What Otterscan asks of a node, on dev chains: the `ots_*` methods (API level 8, as Erigon serves
 * them), `erigon_getHeaderByNumber`, and the `trace_*` methods its trace and state-diff tabs use, built
 * on the node's callTracer and prestateTracer. On any other chain `ots_*` and `erigon_*` answer -32601
 * needing a dev chain, and `trace_*` "not implemented", as Cosmos EVM does (docs/ethereum-rpc.md
 * "Otterscan on dev chains"). Searches walk the chain and trace blocks: fine for a dev chain, not
 * for a long one.
 */

/** The Otterscan API level (ots_getApiLevel) these methods implement; Otterscan needs at least 8. */
export const OTS_API_LEVEL = 8;

const TRACE_NOT_SERVED =
  "cometh serves the trace namespace on dev chains only (for Otterscan); use debug_traceTransaction or debug_traceBlockByNumber";

function requireDevTracer(s: EvmServices, ctx: EvmCallContext, namespace: "ots" | "erigon" | "trace"): Tracer {
  if (s.dev === undefined || s.tracer === undefined) {
    if (namespace === "trace") throw notImplemented(ctx.method, TRACE_NOT_SERVED);
    throw methodNotFound(ctx.method, "Otterscan's methods need a dev chain: start one with `cometh dev`");
  }
  return s.tracer;
}

/** A method of one of these namespaces: refused before its params are read when the chain cannot serve it. */
function devOnly(namespace: "ots" | "erigon" | "trace", m: Method): Method {
  return { ...m, guard: (s, ctx) => void requireDevTracer(s, ctx, namespace) };
}

/** A block number as Otterscan sends it: a JSON number, or any block parameter eth_ takes. */
const looseBlock: Param<BlockSpec> = {
  optional: false,
  decode(node: JsonNode): BlockSpec {
    if (node.kind === "number") {
      if (!/^\d+$/.test(node.raw) || !Number.isSafeInteger(Number(node.raw))) {
        throw new ParamError(`${node.raw} is not a block number`);
      }
      return { kind: "number", number: Number(node.raw) };
    }
    return p.block.decode(node);
  },
};

/** A count or nonce: a JSON number or a 0x quantity. */
const looseUint: Param<number> = {
  optional: false,
  decode(node: JsonNode): number {
    const v = node.kind === "string" ? p.uint64.decode(node) : BigInt(p.uint.decode(node));
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ParamError(`${v} is too large`);
    return Number(v);
  },
};

const CALL_TRACE: TraceConfig = {
  tracer: "callTracer",
  onlyTopCall: false,
  withLog: false,
  diffMode: false,
  tracerDisableCode: false,
  tracerDisableStorage: false,
  disableStack: false,
  disableStorage: false,
  enableMemory: false,
  enableReturnData: false,
  limit: 0,
  timeoutMs: 30_000,
};

const DIFF_TRACE: TraceConfig = { ...CALL_TRACE, tracer: "prestateTracer", diffMode: true };
/** OpenEthereum's traces give the top frame's own gas (without the intrinsic gas) and gas used. */
const PARITY_TRACE: TraceConfig = { ...CALL_TRACE, frameGasAtTop: true };

async function callTree(tracer: Tracer, hash: Uint8Array, config: TraceConfig = CALL_TRACE): Promise<CallFrame> {
  const r: TraceResult = await tracer.traceTransaction(hash, config);
  if (r.kind !== "call") throw serverError("the call tracer gave no call frame");
  return r.frame;
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString("hex");
}

/** Every frame of the tree with its depth, depth first (the top frame at depth 0). */
function framesOf(root: CallFrame): { frame: CallFrame; depth: number; failed: boolean }[] {
  const out: { frame: CallFrame; depth: number; failed: boolean }[] = [];
  const walk = (f: CallFrame, depth: number, parentFailed: boolean): void => {
    const failed = parentFailed || f.error !== undefined;
    out.push({ frame: f, depth, failed });
    for (const c of f.calls ?? []) walk(c, depth + 1, failed);
  };
  walk(root, 0, false);
  return out;
}

// ---- blocks ------------------------------------------------------------------------------------

async function requireBlock(spec: BlockSpec, s: EvmServices): Promise<EvmBlock> {
  const b = await blockBySpec(spec, s);
  if (b === undefined) throw serverError(`block #${specHeight(spec, s)} not found`);
  return b;
}

async function receiptsOf(b: EvmBlock, s: EvmServices): Promise<readonly EvmReceipt[]> {
  return (await s.chain.blockReceipts(b.number)) ?? [];
}

/** Erigon's slim block: the header, size and transaction count, no transactions, logsBloom null. */
function slimBlock(b: EvmBlock): { [key: string]: WireValue | undefined } {
  return {
    ...encodeHeader(b),
    logsBloom: null,
    size: toQuantity(b.size),
    uncles: [],
    withdrawals: [],
    transactionCount: b.transactions.length,
  };
}

/** ots_getBlockDetails: the slim block, no issuance (no block reward), the fees its txs paid. */
async function blockDetails(b: EvmBlock, s: EvmServices): Promise<WireValue> {
  let fees = 0n;
  for (const r of await receiptsOf(b, s)) fees += r.gasUsed * r.effectiveGasPrice;
  return {
    block: slimBlock(b),
    issuance: { blockReward: "0x0", uncleReward: "0x0", issuance: "0x0" },
    totalFees: toQuantity(fees),
  };
}

/**
 * A receipt as Otterscan's lists take it, with the block's timestamp. A block page's receipts carry no
 * logs or bloom (Erigon caps them); a search's keep their logs, which Otterscan's formatter requires.
 */
function listReceipt(r: EvmReceipt, timestamp: number, withLogs: boolean): WireValue {
  const base = encodeReceipt(r) as object;
  return withLogs
    ? { ...base, timestamp: toQuantity(timestamp) }
    : { ...base, logs: null, logsBloom: null, timestamp: toQuantity(timestamp) };
}

async function blockTransactions(b: EvmBlock, page: number, pageSize: number, s: EvmServices): Promise<WireValue> {
  const receipts = await receiptsOf(b, s);
  const start = page * pageSize;
  const end = Math.min(b.transactions.length, start + pageSize);
  const txs: WireValue[] = [];
  const rs: WireValue[] = [];
  for (let i = start; i < end; i++) {
    const tx = b.transactions[i];
    const r = receipts[i];
    if (tx === undefined || r === undefined) continue;
    // Erigon's page carries only the 4-byte selector of each input (Otterscan shows the method).
    txs.push({ ...(encodeTransaction(tx, txLocationInBlock(b, i)) as object), input: toData(tx.input.subarray(0, 4)) });
    rs.push(listReceipt(r, b.timestamp, false));
  }
  return {
    fullblock: {
      ...encodeHeader(b),
      logsBloom: null,
      size: toQuantity(b.size),
      uncles: [],
      withdrawals: [],
      transactions: txs,
      transactionCount: b.transactions.length,
    },
    receipts: rs,
  };
}

// ---- address search ------------------------------------------------------------------------------

/** The addresses each tx of a block touches (sender, recipient, every frame's from and to), by block hash. */
const touchedMemo = new WeakMap<EvmServices, Map<string, Map<string, Set<string>>>>();
const TOUCHED_MEMO_BLOCKS = 4096;

async function touchedInBlock(b: EvmBlock, s: EvmServices, tracer: Tracer): Promise<Map<string, Set<string>>> {
  let memo = touchedMemo.get(s);
  if (memo === undefined) {
    memo = new Map();
    touchedMemo.set(s, memo);
  }
  // Keyed by block hash: a height reused after a dev-chain revert is another block.
  const key = hex(b.hash);
  const known = memo.get(key);
  if (known !== undefined) return known;
  const out = new Map<string, Set<string>>();
  for (const tx of b.transactions) {
    const set = new Set<string>([hex(tx.from)]);
    if (tx.to !== undefined) set.add(hex(tx.to));
    for (const { frame } of framesOf(await callTree(tracer, tx.hash))) {
      set.add(hex(frame.from));
      if (frame.to !== undefined) set.add(hex(frame.to));
    }
    out.set(hex(tx.hash), set);
  }
  if (memo.size >= TOUCHED_MEMO_BLOCKS) memo.delete(memo.keys().next().value as string);
  memo.set(key, out);
  return out;
}

interface Found {
  readonly block: EvmBlock;
  readonly index: number;
}

/** The txs of block `height` that touch `address`, last first. */
async function matchesAt(height: number, address: string, s: EvmServices, tracer: Tracer): Promise<Found[]> {
  const b = await s.chain.blockByNumber(height);
  if (b === undefined || b.transactions.length === 0) return [];
  const touched = await touchedInBlock(b, s, tracer);
  const out: Found[] = [];
  for (let i = b.transactions.length - 1; i >= 0; i--) {
    const tx = b.transactions[i];
    if (tx !== undefined && touched.get(hex(tx.hash))?.has(address) === true) out.push({ block: b, index: i });
  }
  return out;
}

async function searchResult(found: Found[], firstPage: boolean, lastPage: boolean, s: EvmServices): Promise<WireValue> {
  const txs: WireValue[] = [];
  const receipts: WireValue[] = [];
  for (const f of found) {
    const tx = f.block.transactions[f.index];
    const r = (await receiptsOf(f.block, s))[f.index];
    if (tx === undefined || r === undefined) continue;
    txs.push(encodeTransaction(tx, txLocationInBlock(f.block, f.index)));
    receipts.push(listReceipt(r, f.block.timestamp, true));
  }
  return { txs, receipts, firstPage, lastPage };
}

/**
 * ots_searchTransactionsBefore: the txs touching `address` in blocks below `blockNumber` (0: from
 * the head, inclusive), newest first, whole blocks until at least `pageSize`; `firstPage` when the
 * search started at the head, `lastPage` when it reached the genesis.
 */
async function searchBefore(
  address: Uint8Array,
  blockNumber: number,
  pageSize: number,
  s: EvmServices,
  tracer: Tracer,
) {
  const head = s.chain.latestHeight();
  const from = blockNumber === 0 ? head : Math.min(blockNumber - 1, head);
  const found: Found[] = [];
  let h = from;
  for (; h >= 1 && found.length < pageSize; h--) found.push(...(await matchesAt(h, hex(address), s, tracer)));
  return searchResult(found, blockNumber === 0 || blockNumber > head, h < 1, s);
}

/**
 * ots_searchTransactionsAfter: the txs touching `address` in blocks above `blockNumber` (0: from the
 * genesis), whole blocks until at least `pageSize`, answered newest first; `lastPage` when the search
 * started at the genesis, `firstPage` when it reached the head.
 */
async function searchAfter(address: Uint8Array, blockNumber: number, pageSize: number, s: EvmServices, tracer: Tracer) {
  const head = s.chain.latestHeight();
  const found: Found[] = [];
  let h = blockNumber + 1;
  for (; h <= head && found.length < pageSize; h++) {
    found.unshift(...(await matchesAt(h, hex(address), s, tracer)));
  }
  return searchResult(found, h > head, blockNumber === 0, s);
}

/** The lowest height in [lo, hi] where `holds` is true, given that it stays true above it; undefined if none. */
async function firstHeight(
  lo: number,
  hi: number,
  holds: (h: number) => Promise<boolean>,
): Promise<number | undefined> {
  if (!(await holds(hi))) return undefined;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** ots_getTransactionBySenderAndNonce: the block where the nonce passed `nonce`, then its tx. */
async function txBySenderAndNonce(address: Uint8Array, nonce: number, s: EvmServices): Promise<WireValue> {
  const head = s.chain.latestHeight();
  const h = await firstHeight(0, head, async (height) => (await s.state.nonce(address, height)) > BigInt(nonce));
  if (h === undefined || h === 0) return null;
  const b = await s.chain.blockByNumber(h);
  const tx = b?.transactions.find((t) => hex(t.from) === hex(address) && t.nonce === BigInt(nonce));
  return tx === undefined ? null : toData(tx.hash);
}

/** ots_getContractCreator: the block where the code appeared, then the tx (and frame) that created it. */
async function contractCreator(address: Uint8Array, s: EvmServices, tracer: Tracer): Promise<WireValue> {
  const head = s.chain.latestHeight();
  const h = await firstHeight(0, head, async (height) => (await s.state.code(address, height)).length > 0);
  if (h === undefined || h === 0) return null;
  const b = await s.chain.blockByNumber(h);
  if (b === undefined) return null;
  const receipts = await receiptsOf(b, s);
  for (const [i, tx] of b.transactions.entries()) {
    const created = receipts[i]?.contractAddress;
    if (created !== undefined && hex(created) === hex(address))
      return { hash: toData(tx.hash), creator: toAddress(tx.from) };
    for (const { frame, failed } of framesOf(await callTree(tracer, tx.hash))) {
      if (failed || (frame.type !== "CREATE" && frame.type !== "CREATE2") || frame.to === undefined) continue;
      if (hex(frame.to) === hex(address)) return { hash: toData(tx.hash), creator: toAddress(frame.from) };
    }
  }
  // Set by a cheat (anvil_setCode) or anvil_loadState: no tx created it.
  return null;
}

// ---- one transaction ----------------------------------------------------------------------------

/** ots_traceTransaction: every frame, depth first, as Erigon's TransactionTracer lists them. */
function otsTraceEntries(root: CallFrame): WireValue[] {
  return framesOf(root).map(({ frame, depth }) => ({
    type: frame.type,
    depth,
    from: toAddress(frame.from),
    to: toAddress(frame.to ?? ZERO_ADDRESS),
    value: frame.type === "STATICCALL" || frame.type === "DELEGATECALL" ? null : toQuantity(frame.value ?? 0n),
    input: toData(frame.input),
    output: frame.output === undefined ? null : toData(frame.output),
  }));
}

const OP_TRANSFER = 0;
const OP_SELF_DESTRUCT = 1;
const OP_CREATE = 2;
const OP_CREATE2 = 3;

/**
 * ots_getInternalOperations: value moved by CALLs below the top frame, contracts created by CREATE and
 * CREATE2 below it, and SELFDESTRUCTs; operations in frames that failed (and were undone) are left out.
 */
function internalOperations(root: CallFrame): WireValue[] {
  const out: WireValue[] = [];
  for (const { frame, depth, failed } of framesOf(root)) {
    if (depth === 0 || failed) continue;
    const value = frame.value ?? 0n;
    let type: number;
    if (frame.type === "CALL" && value > 0n) type = OP_TRANSFER;
    else if (frame.type === "CREATE") type = OP_CREATE;
    else if (frame.type === "CREATE2") type = OP_CREATE2;
    else if (frame.type === "SELFDESTRUCT") type = OP_SELF_DESTRUCT;
    else continue;
    out.push({ type, from: toAddress(frame.from), to: toAddress(frame.to ?? ZERO_ADDRESS), value: toQuantity(value) });
  }
  return out;
}

async function requireMined(hash: Uint8Array, s: EvmServices): Promise<TraceLocation> {
  const mined = await s.chain.transactionByHash(hash);
  if (mined === undefined) throw serverError(`transaction ${toData(hash)} not found`);
  return {
    blockHash: mined.location.blockHash,
    blockNumber: mined.location.blockNumber,
    transactionHash: hash,
    transactionPosition: mined.location.index,
  };
}

/** trace_replayTransaction's trace types. */
function decodeTraceTypes(node: JsonNode): Set<string> {
  const list = p.stringList.decode(node);
  const out = new Set<string>();
  for (const t of list) {
    if (t !== "trace" && t !== "stateDiff" && t !== "vmTrace") {
      throw new ParamError(`unrecognized trace type: ${JSON.stringify(t)}; use "trace", "stateDiff" or "vmTrace"`);
    }
    out.add(t);
  }
  return out;
}

const traceTypes: Param<Set<string>> = { optional: false, decode: decodeTraceTypes };

async function replayTransaction(
  hash: Uint8Array,
  types: Set<string>,
  s: EvmServices,
  tracer: Tracer,
): Promise<WireValue> {
  await requireMined(hash, s);
  const root = await callTree(tracer, hash, PARITY_TRACE);
  let stateDiff: WireValue = null;
  if (types.has("stateDiff")) {
    const r = await tracer.traceTransaction(hash, DIFF_TRACE);
    if (r.kind !== "prestate") throw serverError("the prestate tracer gave no diff");
    stateDiff = encodeStateDiff(r.pre, r.post);
  }
  return {
    output: toData(
      root.error === undefined || root.error === "execution reverted"
        ? (root.output ?? new Uint8Array(0))
        : new Uint8Array(0),
    ),
    stateDiff,
    trace: types.has("trace") ? encodeParityTraces(root, undefined) : [],
    vmTrace: types.has("vmTrace") ? await vmTraceOf(hash, tracer) : null,
  };
}

const VM_TRACE: TraceConfig = { ...CALL_TRACE, tracer: "vmTrace" };

async function vmTraceOf(hash: Uint8Array, tracer: Tracer): Promise<WireValue> {
  const r = await tracer.traceTransaction(hash, VM_TRACE);
  if (r.kind !== "vm" || r.trace === undefined) throw serverError("the vm tracer recorded no frame");
  return encodeVmTrace(r.trace);
}

async function blockTraces(b: EvmBlock, tracer: Tracer): Promise<WireValue[]> {
  const out: WireValue[] = [];
  for (const [i, tx] of b.transactions.entries()) {
    const at = { blockHash: b.hash, blockNumber: b.number, transactionHash: tx.hash, transactionPosition: i };
    out.push(...encodeParityTraces(await callTree(tracer, tx.hash, PARITY_TRACE), at));
  }
  return out;
}

// ---- the tables ----------------------------------------------------------------------------------

export const ots = {
  getApiLevel: devOnly(
    "ots",
    method([], () => OTS_API_LEVEL),
  ),
  hasCode: devOnly(
    "ots",
    method([p.address, p.optional(looseBlock)], async ([address, spec], s) => {
      const height = spec === undefined ? s.chain.latestHeight() : specHeight(spec, s);
      if (height > s.chain.latestHeight()) throw serverError("header not found");
      return (await s.state.code(address, height)).length > 0;
    }),
  ),
  getInternalOperations: devOnly(
    "ots",
    method([p.hash], async ([hash], s, ctx) => {
      await requireMined(hash, s);
      return internalOperations(await callTree(requireDevTracer(s, ctx, "ots"), hash));
    }),
  ),
  getTransactionError: devOnly(
    "ots",
    method([p.hash], async ([hash], s, ctx) => {
      const r = await s.chain.receiptByHash(hash);
      if (r === undefined) return null;
      if (r.status === 1) return "0x";
      const root = await callTree(requireDevTracer(s, ctx, "ots"), hash);
      return root.error === "execution reverted" ? toData(root.output ?? new Uint8Array(0)) : "0x";
    }),
  ),
  traceTransaction: devOnly(
    "ots",
    method([p.hash], async ([hash], s, ctx) => {
      await requireMined(hash, s);
      return otsTraceEntries(await callTree(requireDevTracer(s, ctx, "ots"), hash));
    }),
  ),
  getBlockDetails: devOnly(
    "ots",
    method([looseBlock], async ([spec], s) => blockDetails(await requireBlock(spec, s), s)),
  ),
  getBlockDetailsByHash: devOnly(
    "ots",
    method([p.hash], async ([hash], s) => {
      const b = await s.chain.blockByHash(hash);
      if (b === undefined) throw serverError(`block ${toData(hash)} not found`);
      return blockDetails(b, s);
    }),
  ),
  getBlockTransactions: devOnly(
    "ots",
    method([looseBlock, looseUint, looseUint], async ([spec, page, pageSize], s) => {
      if (pageSize === 0) throw invalidParams("invalid argument 2: the page size must be at least 1");
      return blockTransactions(await requireBlock(spec, s), page, pageSize, s);
    }),
  ),
  searchTransactionsBefore: devOnly(
    "ots",
    method([p.address, looseUint, looseUint], ([address, blockNumber, pageSize], s, ctx) =>
      searchBefore(address, blockNumber, Math.max(1, pageSize), s, requireDevTracer(s, ctx, "ots")),
    ),
  ),
  searchTransactionsAfter: devOnly(
    "ots",
    method([p.address, looseUint, looseUint], ([address, blockNumber, pageSize], s, ctx) =>
      searchAfter(address, blockNumber, Math.max(1, pageSize), s, requireDevTracer(s, ctx, "ots")),
    ),
  ),
  getTransactionBySenderAndNonce: devOnly(
    "ots",
    method([p.address, looseUint], ([address, nonce], s) => txBySenderAndNonce(address, nonce, s)),
  ),
  getContractCreator: devOnly(
    "ots",
    method([p.address], ([address], s, ctx) => contractCreator(address, s, requireDevTracer(s, ctx, "ots"))),
  ),
} satisfies Namespace;

export const erigon = {
  /** Otterscan's probe and its latest-block view: the block's header fields (Erigon's header answer). */
  getHeaderByNumber: devOnly(
    "erigon",
    method([looseBlock], async ([spec], s) => {
      const b = await blockBySpec(spec, s);
      return b === undefined ? null : encodeHeader(b);
    }),
  ),
} satisfies Namespace;

export const trace = {
  transaction: devOnly(
    "trace",
    method([p.hash], async ([hash], s, ctx) => {
      const at = await requireMined(hash, s);
      return encodeParityTraces(await callTree(requireDevTracer(s, ctx, "trace"), hash, PARITY_TRACE), at);
    }),
  ),
  replayTransaction: devOnly(
    "trace",
    method([p.hash, traceTypes], ([hash, types], s, ctx) =>
      replayTransaction(hash, types, s, requireDevTracer(s, ctx, "trace")),
    ),
  ),
  block: devOnly(
    "trace",
    method([looseBlock], async ([spec], s, ctx) => {
      const b = await blockBySpec(spec, s);
      return b === undefined ? null : blockTraces(b, requireDevTracer(s, ctx, "trace"));
    }),
  ),
  get: devOnly(
    "trace",
    method([p.hash, p.stringList], async ([hash, indexes], s, ctx) => {
      const at = await requireMined(hash, s);
      const traces = encodeParityTraces(await callTree(requireDevTracer(s, ctx, "trace"), hash, PARITY_TRACE), at);
      // trace_get names a trace by its trace address (0x quantities, as OpenEthereum takes them); [] is the top call.
      for (const i of indexes) {
        if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(i))
          throw invalidParams(`invalid argument 1: ${JSON.stringify(i)} is not an index`);
      }
      const want = JSON.stringify(indexes.map((i) => Number(i)));
      return traces.find((t) => JSON.stringify((t as { traceAddress: number[] }).traceAddress) === want) ?? null;
    }),
  ),
} satisfies Namespace;

/** Why a trace_ method outside the table above is not served, on any chain. */
export const TRACE_METHOD_NOT_SERVED =
  "of the trace namespace cometh serves trace_transaction, trace_replayTransaction, trace_block and trace_get, on dev chains only (for Otterscan); use debug_traceTransaction or debug_traceBlockByNumber";

/** The namespaces Otterscan needs: always routed; each method says when the chain cannot serve it. */
export const OTTERSCAN_NAMESPACES: Readonly<Record<string, Namespace>> = { ots, erigon, trace };
