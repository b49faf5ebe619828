import {
  type CallOptions as AppCallOptions,
  type CallResult as AppCallResult,
  type CallArgs,
  type CallBlockOverrides,
  EvmCallTimeoutError,
  type EvmReader,
  type EvmReadPool,
  GasEstimationError,
  type SimulateBlockOverrides,
  type SimulatedBlock,
  SimulationError,
  type StateOverride,
} from "../../app/evm/index.js";
import {
  type AccessListEntry,
  type CallOptions,
  type CallRequest,
  type CallResult,
  type Executor,
  type SimulateInput,
  type SimulateOptions,
  SimulateRejectedError,
  type StateOverrides,
} from "../../rpc/evm/index.js";
import { CallCosts } from "./callCosts.js";

/**
 * Requests per worker past which an expensive call (up to callCosts.ts' MAIN_THREAD_MAX_GAS) runs on the main thread
 * instead of waiting for one: the workers are saturated (each is posted up to 8 at once, readPool.ts).
 */
const FULL_BACKLOG = 4;

/**
 * The RPC's `execution`: eth_call and eth_estimateGas on the EVM app, on the read workers when the
 * node has them (`[json-rpc] read-workers`), in process otherwise. With workers, an eth_call whose
 * target ran cheaply on the main thread before runs there again, and the expensive ones go to the
 * workers (callCosts.ts).
 */
export class EvmExecutionAdapter implements Executor {
  readonly #reader: EvmReader;
  readonly #pool: EvmReadPool | undefined;
  readonly #costs: CallCosts | undefined;
  /** Calls run in process (no read workers): synchronously, with the engine's own deadline. */
  readonly callNow: ((request: CallRequest, opts: CallOptions) => CallResult) | undefined;
  /** With read workers: a cheap call run in process now, undefined for an expensive one. */
  readonly callNowIfCheap: ((request: CallRequest, opts: CallOptions) => CallResult | undefined) | undefined;

  constructor(reader: EvmReader, pool: EvmReadPool | undefined, costs?: CallCosts) {
    this.#reader = reader;
    this.#pool = pool;
    this.#costs = pool === undefined ? undefined : (costs ?? new CallCosts());
    this.callNow =
      pool === undefined
        ? (request, opts) => resultOf(reader.callNow(argsOf(request), callOptionsOf(opts)))
        : undefined;
    this.callNowIfCheap = pool === undefined ? undefined : (request, opts) => this.#callIfCheap(request, opts);
  }

  #callIfCheap(request: CallRequest, opts: CallOptions): CallResult | undefined {
    const costs = this.#costs as CallCosts;
    const key = CallCosts.key(request.to, request.data);
    const args = argsOf(request);
    const o = callOptionsOf(opts);
    const kept = this.#reader.peekCall(args, o);
    if (kept !== undefined) return resultOf(kept);
    const where = costs.placement(key);
    // An expensive call goes to the workers unless they already have enough to do: then the main
    // thread is one more core's worth of calls (FULL_BACKLOG).
    if (where === "away" || (where === "either" && (this.#pool as EvmReadPool).backlog() < FULL_BACKLOG)) {
      return undefined;
    }
    let r: AppCallResult;
    try {
      r = this.#reader.callNow(args, o);
    } catch (err) {
      if (err instanceof EvmCallTimeoutError) costs.recordTimeout(key);
      throw err;
    }
    costs.record(key, request.to, request.data, r.gasUsed);
    return resultOf(r);
  }

  async call(request: CallRequest, opts: CallOptions): Promise<CallResult> {
    const pool = this.#pool;
    if (pool === undefined) return resultOf(await this.#reader.call(argsOf(request), callOptionsOf(opts)));
    const key = CallCosts.key(request.to, request.data);
    let r: AppCallResult;
    try {
      r = await pool.call(argsOf(request), callOptionsOf(opts), opts.signal);
    } catch (err) {
      if (err instanceof EvmCallTimeoutError) this.#costs?.recordTimeout(key);
      throw err;
    }
    this.#costs?.record(key, request.to, request.data, r.gasUsed);
    return resultOf(r);
  }

  peekCall(request: CallRequest, opts: CallOptions): CallResult | undefined {
    if (opts.overrides !== undefined) return undefined;
    const kept = this.#reader.peekCall(argsOf(request), callOptionsOf(opts));
    return kept === undefined ? undefined : resultOf(kept);
  }

  /**
   * eth_simulateV1 runs on the main thread (the read workers do not simulate yet): the app's
   * simulator on the state after the asked height.
   */
  async simulate(input: SimulateInput, opts: SimulateOptions): Promise<readonly SimulatedBlock[]> {
    try {
      return this.#reader.simulate({
        blocks: input.blocks,
        traceTransfers: input.traceTransfers,
        validation: input.validation,
        height: opts.height,
        gasCap: opts.gasCap,
        timeoutMs: opts.timeoutMs,
      });
    } catch (err) {
      if (err instanceof SimulationError) throw new SimulateRejectedError(err.reason, err.message, { cause: err });
      throw err;
    }
  }

  /** eth_createAccessList, on the main thread (the read workers do not trace access lists). */
  async createAccessList(
    request: CallRequest,
    opts: CallOptions,
  ): Promise<{ accessList: readonly AccessListEntry[]; gasUsed: bigint; error?: string }> {
    return this.#reader.createAccessList(argsOf(request), callOptionsOf(opts));
  }

  async estimateGas(request: CallRequest, opts: CallOptions): Promise<bigint | CallResult> {
    const pool = this.#pool;
    try {
      return await (pool === undefined
        ? this.#reader.estimateGas(argsOf(request), callOptionsOf(opts))
        : pool.estimateGas(argsOf(request), callOptionsOf(opts), opts.signal));
    } catch (err) {
      if (err instanceof GasEstimationError) {
        if (err.revertData !== undefined) {
          return { status: "reverted", returnData: err.revertData, gasUsed: opts.gasCap };
        }
        return { status: "failed", returnData: new Uint8Array(0), gasUsed: opts.gasCap, error: err.message };
      }
      throw err;
    }
  }
}

/** The app's call arguments for a decoded RPC request (fields assigned, not spread: eth_call's hot path). */
export function argsOf(r: CallRequest): CallArgs {
  const a: CallArgs = {};
  if (r.from !== undefined) a.from = r.from;
  if (r.to !== undefined) a.to = r.to;
  if (r.gas !== undefined) a.gas = r.gas;
  if (r.gasPrice !== undefined) a.gasPrice = r.gasPrice;
  if (r.maxFeePerGas !== undefined) a.maxFeePerGas = r.maxFeePerGas;
  if (r.maxPriorityFeePerGas !== undefined) a.maxPriorityFeePerGas = r.maxPriorityFeePerGas;
  if (r.value !== undefined) a.value = r.value;
  if (r.data !== undefined) a.data = r.data;
  if (r.accessList !== undefined) {
    a.accessList = r.accessList.map((e) => ({ address: e.address, storageKeys: [...e.storageKeys] }));
  }
  if (r.authorizationList !== undefined) a.authorizationList = [...r.authorizationList];
  return a;
}

/** The app's call options for the RPC's (the abort signal is passed to the read pool separately). */
export function callOptionsOf(opts: CallOptions): AppCallOptions {
  const o: AppCallOptions = {
    height: opts.height,
    gasCap: opts.gasCap,
    timeoutMs: opts.timeoutMs,
  };
  if (opts.quietConsole === true) o.quietConsole = true;
  if (opts.overrides !== undefined) o.overrides = overridesOf(opts.overrides);
  if (opts.block !== undefined) o.block = blockOf(opts.block);
  return o;
}

function blockOf(o: SimulateBlockOverrides): CallBlockOverrides {
  return {
    ...(o.number === undefined ? {} : { number: o.number }),
    ...(o.time === undefined ? {} : { time: o.time }),
    ...(o.gasLimit === undefined ? {} : { gasLimit: o.gasLimit }),
    ...(o.feeRecipient === undefined ? {} : { coinbase: o.feeRecipient }),
    ...(o.prevRandao === undefined ? {} : { prevRandao: o.prevRandao }),
    ...(o.baseFeePerGas === undefined ? {} : { baseFee: o.baseFeePerGas }),
    ...(o.blobBaseFee === undefined ? {} : { blobBaseFee: o.blobBaseFee }),
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
