import { RLP } from "@ethereumjs/rlp";
import { encodeJson, type WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { encodeBlock } from "../encode/block.js";
import { bytesToBigint, toData } from "../encode/hex.js";
import { encodeTraceResult } from "../encode/trace.js";
import { serverError } from "../errors.js";
import { method, type Namespace, notImplemented } from "../method.js";
import { p } from "../params.js";
import type { EvmServices, TraceConfig, Tracer } from "../services.js";
import { callGas, checkCallArgs, withEvmTimeout } from "./execution.js";
import {
  freeOsMemory,
  gcStats,
  memStats,
  NO_GO_PROFILER,
  observeGc,
  requireProfiling,
  setGcPercent,
  stacks,
  startCpuProfile,
  stopCpuProfile,
  writeMemProfile,
} from "./profiling.js";
import { blockBySpec, stateHeight } from "./resolve.js";

/**
 * debug: tracing (struct logger, callTracer, prestateTracer, 4byteTracer, noopTracer) through the
 * node's Tracer, and profiling gated by enable-profiling (docs/ethereum-rpc.md "Namespaces"). Raw-encoding getters
 * answer "not implemented" (docs/ethereum-rpc.md "Methods that are not implemented").
 */

const DEFAULT_TRACE: TraceConfig = {
  tracer: undefined,
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
  timeoutMs: 5000,
};

function requireTracer(s: EvmServices): Tracer {
  if (s.tracer === undefined) throw serverError("tracing is not available on this node");
  return s.tracer;
}

/** Runs a trace under its own timeout (TraceConfig.timeout, geth default 5s). */
async function traced<T>(config: TraceConfig, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(serverError("execution timeout")), config.timeoutMs);
  });
  try {
    return await Promise.race([run(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function traceBlockAt(height: number, config: TraceConfig | undefined, s: EvmServices): Promise<WireValue> {
  const tracer = requireTracer(s);
  if (height === 0) throw serverError("genesis is not traceable");
  if (height > s.chain.latestHeight()) throw serverError(`block #${height} not found`);
  const cfg = config ?? DEFAULT_TRACE;
  const results = await traced(cfg, () => tracer.traceBlock(height, cfg));
  return results.map((r) =>
    r.result === undefined
      ? { txHash: toData(r.txHash), error: r.error ?? "trace failed" }
      : { txHash: toData(r.txHash), result: encodeTraceResult(r.result) },
  );
}

/** The block number inside an RLP-encoded block (header field 8); the rest is not used. */
function rlpBlockNumber(raw: Uint8Array): number {
  let decoded: unknown;
  try {
    decoded = RLP.decode(raw);
  } catch (err) {
    throw serverError(`could not decode block: ${(err as Error).message}`, err);
  }
  const header = Array.isArray(decoded) ? decoded[0] : undefined;
  const number = Array.isArray(header) ? header[8] : undefined;
  if (!(number instanceof Uint8Array)) throw serverError("could not decode block: not an RLP block");
  return Number(bytesToBigint(number));
}

function noGoProfiler(params: "file" | "fileSeconds" | "none") {
  const list = params === "file" ? [p.string] : params === "fileSeconds" ? [p.string, p.uint] : [];
  return method(list, (_args, _s, ctx: EvmCallContext) => {
    requireProfiling(ctx);
    throw serverError(`${ctx.method} is not supported: ${NO_GO_PROFILER}`);
  });
}

export const debug = {
  traceTransaction: method([p.hash, p.optional(p.traceConfig)], async ([hash, config], s) => {
    const tracer = requireTracer(s);
    const found = await s.chain.transactionByHash(hash);
    if (found === undefined) throw serverError("transaction not found");
    if (found.location.blockNumber === 0) throw serverError("genesis is not traceable");
    const cfg = config ?? DEFAULT_TRACE;
    return encodeTraceResult(await traced(cfg, () => tracer.traceTransaction(hash, cfg)));
  }),
  traceBlockByNumber: method([p.block, p.optional(p.traceConfig)], async ([spec, config], s) => {
    const block = await blockBySpec(spec, s);
    const height = spec.kind === "number" ? spec.number : s.chain.latestHeight();
    if (block === undefined && height !== 0) throw serverError(`block #${height} not found`);
    return traceBlockAt(height, config, s);
  }),
  traceBlockByHash: method([p.hash, p.optional(p.traceConfig)], async ([hash, config], s) => {
    const block = await s.chain.blockByHash(hash);
    if (block === undefined) throw serverError(`block ${toData(hash)} not found`);
    return traceBlockAt(block.number, config, s);
  }),
  traceBlock: method([p.data, p.optional(p.traceConfig)], ([raw, config], s) =>
    traceBlockAt(rlpBlockNumber(raw), config, s),
  ),
  traceCall: method(
    [p.callRequest, p.optional(p.blockRef), p.optional(p.traceConfig)],
    async ([req, ref, config], s, ctx) => {
      const tracer = requireTracer(s);
      checkCallArgs(req, s.node.chainId());
      const height = await stateHeight(ref, s);
      const gas = callGas(req, ctx.runtime.settings.gasCap);
      const cfg = config ?? DEFAULT_TRACE;
      // geth's BlockOverrides.Apply: a single call has no beacon root call and no withdrawals.
      for (const field of ["beaconRoot", "withdrawals"] as const) {
        if (cfg.blockOverrides?.[field] !== undefined) {
          throw serverError(`block override "${field}" is not supported for this RPC method`);
        }
      }
      const result = await withEvmTimeout(ctx, (signal, timeoutMs) =>
        traced(cfg, () =>
          tracer.traceCall({ ...req, gas }, cfg, {
            height,
            gasCap: gas,
            timeoutMs,
            signal,
            ...(cfg.stateOverrides === undefined ? {} : { overrides: cfg.stateOverrides }),
            ...(cfg.blockOverrides === undefined ? {} : { block: cfg.blockOverrides }),
          }),
        ),
      );
      return encodeTraceResult(result);
    },
  ),

  // Profiling (enable-profiling = true).
  cpuProfile: method([p.string, p.uint], async ([file, seconds], _s, ctx) => {
    const state = requireProfiling(ctx);
    await startCpuProfile(state, file);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    await stopCpuProfile(state);
    return null;
  }),
  startCPUProfile: method([p.string], async ([file], _s, ctx) => {
    await startCpuProfile(requireProfiling(ctx), file);
    return null;
  }),
  stopCPUProfile: method([], async (_, _s, ctx) => {
    await stopCpuProfile(requireProfiling(ctx));
    return null;
  }),
  writeMemProfile: method([p.string], ([file], _s, ctx) => {
    requireProfiling(ctx);
    writeMemProfile(file);
    return null;
  }),
  memStats: method([], (_, _s, ctx) => {
    requireProfiling(ctx);
    observeGc();
    return memStats();
  }),
  gcStats: method([], (_, _s, ctx) => {
    requireProfiling(ctx);
    observeGc();
    return gcStats();
  }),
  freeOSMemory: method([], (_, _s, ctx) => {
    requireProfiling(ctx);
    freeOsMemory();
    return null;
  }),
  setGCPercent: method([p.int], ([percent], _s, ctx) => setGcPercent(requireProfiling(ctx), percent)),
  setBlockProfileRate: method([p.int], ([rate], _s, ctx) => {
    requireProfiling(ctx).blockProfileRate = rate;
    return null;
  }),
  setMutexProfileFraction: method([p.int], ([rate], _s, ctx) => {
    requireProfiling(ctx).mutexProfileFraction = rate;
    return null;
  }),
  stacks: method([p.optional(p.any)], (_, _s, ctx) => {
    requireProfiling(ctx);
    return stacks();
  }),
  blockProfile: noGoProfiler("fileSeconds"),
  mutexProfile: noGoProfiler("fileSeconds"),
  writeBlockProfile: noGoProfiler("file"),
  writeMutexProfile: noGoProfiler("file"),
  goTrace: noGoProfiler("fileSeconds"),
  startGoTrace: noGoProfiler("file"),
  stopGoTrace: noGoProfiler("none"),
  printBlock: method([p.uint64], async ([number], s, ctx) => {
    requireProfiling(ctx);
    const block = await blockBySpec({ kind: "number", number: Number(number) }, s);
    if (block === undefined) throw serverError(`block #${number} not found`);
    return encodeJson(encodeBlock(block, true));
  }),

  // Raw encodings are not served (docs/ethereum-rpc.md "Methods that are not implemented").
  getRawBlock: notImplemented("cometh does not serve raw block encodings"),
  getRawHeader: notImplemented("cometh does not serve raw header encodings"),
  getRawTransaction: notImplemented("cometh does not serve raw transaction encodings"),
  getRawReceipts: notImplemented("cometh does not serve raw receipt encodings"),
  getBlockRlp: notImplemented("cometh does not serve raw block encodings"),
  getHeaderRlp: notImplemented("cometh does not serve raw header encodings"),
  getBadBlocks: notImplemented("CometBFT never stores bad blocks"),
  intermediateRoots: notImplemented("intermediate state roots are not kept"),
} satisfies Namespace;
