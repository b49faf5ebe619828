import {
  type CallFrame as AppCallFrame,
  createTracer,
  type EvmReader,
  type EvmReadPool,
  type PrestateResult,
  type StructLoggerResult,
  type TracerSpec,
  type VmTrace,
} from "../../app/evm/index.js";
import type { CallFrame, CallOptions, CallRequest, TraceConfig, TraceResult, Tracer } from "../../rpc/evm/index.js";
import { NodeServiceError } from "../errors.js";
import { argsOf, callOptionsOf } from "./execution.js";

/** The RPC's `tracer` (debug_trace*): replays txs and runs calls on the EVM app with geth's tracers. */
export class EvmTraceAdapter implements Tracer {
  readonly #reader: EvmReader;
  readonly #pool: EvmReadPool | undefined;

  constructor(reader: EvmReader, pool: EvmReadPool | undefined) {
    this.#reader = reader;
    this.#pool = pool;
  }

  traceTransaction(hash: Uint8Array, config: TraceConfig): Promise<TraceResult> {
    return traceWith(config, (spec) =>
      this.#reader.traceTransaction(hash, createTracer(spec), { timeoutMs: config.timeoutMs }),
    );
  }

  async traceBlock(
    height: number,
    config: TraceConfig,
  ): Promise<{ txHash: Uint8Array; result?: TraceResult; error?: string }[]> {
    const block = this.#reader.block(height);
    if (block === undefined) throw new NodeServiceError(`block #${height} not found`);
    const out: { txHash: Uint8Array; result?: TraceResult; error?: string }[] = [];
    for (const txHash of block.txHashes) {
      try {
        const result = await traceWith(config, (spec) =>
          this.#reader.traceTransaction(txHash, createTracer(spec), { timeoutMs: config.timeoutMs }),
        );
        out.push({ txHash, result });
      } catch (err) {
        out.push({ txHash, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return out;
  }

  traceCall(request: CallRequest, config: TraceConfig, opts: CallOptions): Promise<TraceResult> {
    const pool = this.#pool;
    return traceWith(config, (spec) =>
      pool === undefined
        ? this.#reader.traceCall(argsOf(request), createTracer(spec), callOptionsOf(opts))
        : pool.traceCall(argsOf(request), spec, callOptionsOf(opts), opts.signal),
    );
  }
}

/**
 * Runs one trace with the tracer `config` names: `run` replays the tx or call with that tracer (a
 * spec, so that a read worker can build it too) and resolves with the tracer's result.
 */
async function traceWith(config: TraceConfig, run: (spec: TracerSpec) => Promise<unknown>): Promise<TraceResult> {
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
        options: {
          onlyTopCall: config.onlyTopCall,
          withLog: config.withLog,
          ...(config.frameGasAtTop === true ? { frameGasAtTop: true } : {}),
        },
      })) as AppCallFrame | undefined;
      if (frame === undefined) throw new NodeServiceError("the call tracer recorded no call frame");
      return { kind: "call", frame: frameOf(frame) };
    }
    case "vmTrace":
      return { kind: "vm", trace: (await run({ kind: "vm" })) as VmTrace | undefined };
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
    ...(f.logs === undefined
      ? {}
      : { logs: f.logs.map((l) => ({ ...l, index: l.index ?? 0, position: l.position ?? 0 })) }),
  };
}
