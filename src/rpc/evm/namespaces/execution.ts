import { formatDurationMs } from "../../../config/index.js";
import { RpcError, TxValidationError, type WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { toData } from "../encode/hex.js";
import { encodeSimulatedBlock } from "../encode/simulate.js";
import { executionReverted, internalError, invalidParams, methodNotFound, serverError } from "../errors.js";
import type { SimulateParams } from "../params.js";
import {
  type CallOptions,
  type CallRequest,
  type CallResult,
  type EvmServices,
  type Executor,
  SimulateRejectedError,
  type SimulationFailure,
  type StateOverrides,
} from "../services.js";

/**
 * eth_call, eth_estimateGas and eth_createAccessList on top of Executor.call: geth's call
 * defaults (gas from gas-cap), the evm-timeout, revert mapping (code 3 with data), and geth's
 * gas-estimation binary search when the node offers no estimator of its own.
 */

/** geth: with gas-cap 0 calls run with MaxUint64/2. */
const UNCAPPED_GAS = (1n << 63n) - 1n;
const TX_GAS = 21000n;
/** geth estimateGasErrorRatio: stop when hi and lo are within 1.5 %. */
const ERROR_RATIO_PER_MILLE = 15n;

export function effectiveGasCap(gasCap: bigint): bigint {
  return gasCap === 0n ? UNCAPPED_GAS : gasCap;
}

/** Checks that apply to every call-like request (geth TransactionArgs.CallDefaults). */
export function checkCallArgs(req: CallRequest, chainId: bigint): void {
  if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
    throw serverError("both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
  }
  if (req.chainId !== undefined && req.chainId !== chainId) {
    throw serverError(`chainId does not match node's (have=${req.chainId}, want=${chainId})`);
  }
  // A tip above the fee cap is the state transition's pre-check (geth 1.17's calls), with its text.
}

/**
 * Runs `fn` with an AbortSignal that fires after evm-timeout; a timeout is geth's "execution aborted".
 * When the executor runs calls in process (`callNow`), it enforces the deadline itself and no timer could
 * fire while a call runs: then nothing is armed.
 */
export async function withEvmTimeout<T>(
  ctx: EvmCallContext,
  fn: (signal: AbortSignal, timeoutMs: number) => Promise<T>,
  execution?: Executor,
): Promise<T> {
  const timeoutMs = ctx.runtime.settings.evmTimeoutMs;
  if (timeoutMs <= 0 || execution?.callNow !== undefined) return fn(NEVER_ABORTED, Math.max(timeoutMs, 0));
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(serverError(`execution aborted (timeout = ${formatDurationMs(timeoutMs)})`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([fn(controller.signal, timeoutMs), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function callOptions(
  height: number,
  gas: bigint,
  signal: AbortSignal,
  timeoutMs: number,
  overrides: StateOverrides | undefined,
): CallOptions {
  return overrides === undefined
    ? { height, gasCap: gas, timeoutMs, signal }
    : { height, gasCap: gas, timeoutMs, signal, overrides };
}

/** The gas a call runs with: the request's, capped by gas-cap; gas-cap when absent. */
export function callGas(req: CallRequest, gasCap: bigint): bigint {
  const cap = effectiveGasCap(gasCap);
  if (req.gas === undefined || req.gas > cap) return cap;
  return req.gas;
}

/** Throws the JSON-RPC error of a failed call (revert → code 3 with data). */
export function throwCallFailure(result: CallResult): never {
  if (result.status === "reverted") throw executionReverted(result.returnData);
  throw serverError(result.error ?? "execution failed");
}

/** eth_call: the return data, or the revert/VM error. */
export async function doCall(
  req: CallRequest,
  height: number,
  overrides: StateOverrides | undefined,
  s: EvmServices,
  ctx: EvmCallContext,
): Promise<Uint8Array> {
  checkCallArgs(req, s.node.chainId());
  const gas = callGas(req, ctx.runtime.settings.gasCap);
  let result: CallResult;
  try {
    result = await withEvmTimeout(
      ctx,
      (signal, timeoutMs) => s.execution.call({ ...req, gas }, callOptions(height, gas, signal, timeoutMs, overrides)),
      s.execution,
    );
  } catch (err) {
    throw withSuppliedGas(err, gas);
  }
  if (result.status !== "success") throwCallFailure(result);
  return result.returnData;
}

/** The checks a call fails before it runs (geth's state transition pre-checks). */
const PRECHECK_FAILURE =
  /^(insufficient funds|intrinsic gas too low|max priority fee per gas higher|max fee per gas less|nonce too)/;

/** geth's eth_call wraps a pre-check failure: `err: <what> (supplied gas <gas>)`. */
function withSuppliedGas(err: unknown, gas: bigint): unknown {
  if (!(err instanceof Error) || err instanceof RpcError || !PRECHECK_FAILURE.test(err.message)) return err;
  return serverError(`err: ${err.message} (supplied gas ${gas})`, err);
}

/**
 * eth_call's return data without a promise or the evm-timeout timer, when it can be had on this thread:
 * the executor runs calls in process (`callNow`: the call runs now, its memo first; `callNowIfCheap`: the
 * same when the executor judges the call cheap, else undefined), or the node already
 * knows the result (`peekCall`: a memoized call; without overrides only). Undefined when the call has to
 * run elsewhere (a read worker).
 */
export function callHere(
  req: CallRequest,
  height: number,
  overrides: StateOverrides | undefined,
  s: EvmServices,
  ctx: EvmCallContext,
): Uint8Array | undefined {
  const { callNow, callNowIfCheap, peekCall } = s.execution;
  const now = callNow ?? callNowIfCheap;
  if (now === undefined && (peekCall === undefined || overrides !== undefined)) return undefined;
  checkCallArgs(req, s.node.chainId());
  const gas = callGas(req, ctx.runtime.settings.gasCap);
  const opts = callOptions(height, gas, NEVER_ABORTED, ctx.runtime.settings.evmTimeoutMs, overrides);
  let result: CallResult | undefined;
  if (now !== undefined) {
    try {
      result = now.call(s.execution, { ...req, gas }, opts);
    } catch (err) {
      throw withSuppliedGas(err, gas);
    }
    // An expensive call: through `call` (a read worker), with the evm-timeout's timer.
    if (result === undefined) return undefined;
  } else {
    // Only height and gas name a memoized result; nothing runs, so no timer or abort signal is armed.
    result = peekCall?.call(s.execution, { ...req, gas }, opts);
    if (result === undefined) return undefined;
  }
  if (result.status !== "success") throwCallFailure(result);
  return result.returnData;
}

const NEVER_ABORTED = new AbortController().signal;

function isIntrinsicGasError(err: unknown): boolean {
  return err instanceof Error && /intrinsic gas too low/i.test(err.message);
}

async function balanceOf(
  who: Uint8Array,
  height: number,
  overrides: StateOverrides | undefined,
  s: EvmServices,
): Promise<bigint> {
  const o = overrides?.get(toData(who));
  if (o?.balance !== undefined) return o.balance;
  return s.state.balance(who, height);
}

async function codeOf(
  who: Uint8Array,
  height: number,
  overrides: StateOverrides | undefined,
  s: EvmServices,
): Promise<Uint8Array> {
  const o = overrides?.get(toData(who));
  if (o?.code !== undefined) return o.code;
  return s.state.code(who, height);
}

/** eth_estimateGas (geth gasestimator.Estimate). */
export async function estimateGas(
  req: CallRequest,
  height: number,
  overrides: StateOverrides | undefined,
  s: EvmServices,
  ctx: EvmCallContext,
  quietConsole = false,
): Promise<bigint> {
  checkCallArgs(req, s.node.chainId());
  const cap = effectiveGasCap(ctx.runtime.settings.gasCap);
  const nodeEstimate = s.execution.estimateGas;
  if (nodeEstimate !== undefined) {
    const gas = callGas(req, ctx.runtime.settings.gasCap);
    const out = await withEvmTimeout(
      ctx,
      (signal, timeoutMs) =>
        nodeEstimate.call(s.execution, req, {
          ...callOptions(height, gas, signal, timeoutMs, overrides),
          ...(quietConsole ? { quietConsole } : {}),
        }),
      s.execution,
    );
    if (typeof out === "bigint") return out;
    if (out.status === "failed" && (out.error === undefined || out.error === "out of gas")) {
      throw serverError(`gas required exceeds allowance (${gas})`);
    }
    throwCallFailure(out);
  }

  let hi: bigint;
  if (req.gas !== undefined && req.gas >= TX_GAS) hi = req.gas;
  else hi = (await s.chain.blockByNumber(height))?.gasLimit ?? cap;
  if (hi > cap) hi = cap;

  const feeCap = req.gasPrice ?? req.maxFeePerGas ?? 0n;
  if (feeCap > 0n && req.from !== undefined) {
    const balance = await balanceOf(req.from, height, overrides, s);
    const value = req.value ?? 0n;
    if (value > balance) throw serverError("insufficient funds for transfer");
    const allowance = (balance - value) / feeCap;
    if (hi > allowance) hi = allowance;
  }

  return withEvmTimeout(ctx, async (signal, timeoutMs) => {
    const run = async (gas: bigint): Promise<CallResult | "intrinsic"> => {
      try {
        return await s.execution.call({ ...req, gas }, callOptions(height, gas, signal, timeoutMs, overrides));
      } catch (err) {
        if (isIntrinsicGasError(err)) return "intrinsic";
        throw err;
      }
    };
    const failed = (r: CallResult | "intrinsic") => r === "intrinsic" || r.status !== "success";

    // A plain value transfer to an account without code costs exactly 21000.
    if (req.to !== undefined && (req.data === undefined || req.data.length === 0) && hi >= TX_GAS) {
      const code = await codeOf(req.to, height, overrides, s);
      if (code.length === 0) {
        const r = await run(TX_GAS);
        if (!failed(r)) return TX_GAS;
      }
    }

    const first = await run(hi);
    if (first === "intrinsic" || first.status !== "success") {
      if (first !== "intrinsic" && first.status === "reverted") throw executionReverted(first.returnData);
      // geth's gasestimator: only running out of gas means "more would do"; any other failure is the answer.
      if (first !== "intrinsic" && first.error !== undefined && first.error !== "out of gas") {
        throw serverError(first.error);
      }
      throw serverError(`gas required exceeds allowance (${hi})`);
    }
    let lo = first.gasUsed > 0n ? first.gasUsed - 1n : 0n;
    const optimistic = ((first.gasUsed + 2300n) * 64n) / 63n;
    if (optimistic < hi) {
      if (failed(await run(optimistic))) lo = optimistic;
      else hi = optimistic;
    }
    while (lo + 1n < hi) {
      if (((hi - lo) * 1000n) / hi < ERROR_RATIO_PER_MILLE) break;
      let mid = (hi + lo) / 2n;
      if (mid > lo * 2n) mid = lo * 2n;
      if (failed(await run(mid))) lo = mid;
      else hi = mid;
    }
    return hi;
  });
}

/** geth's codes for eth_simulateV1's errors (internal/ethapi/errors.go; docs/ethereum-rpc.md). */
const SIMULATE_CODES: Record<SimulationFailure, number> = {
  nonceTooHigh: -38011,
  nonceTooLow: -38010,
  baseFeeTooLow: -38012,
  intrinsicGas: -38013,
  insufficientFunds: -38014,
  blockGasLimitReached: -38015,
  blockNumberInvalid: -38020,
  blockTimestampInvalid: -38021,
  maxInitCodeSizeExceeded: -38025,
  clientLimitExceeded: -38026,
  invalidParams: -32602,
  internal: -32603,
  other: -32000,
};

function simulateError(err: SimulateRejectedError): Error {
  const code = SIMULATE_CODES[err.reason];
  if (code === -32602) return invalidParams(err.message);
  if (code === -32603) return internalError(err.message, err);
  if (code === -32000) return serverError(err.message, err);
  return new TxValidationError(code, err.message, { cause: err });
}

/** eth_simulateV1 on the state after `height`: geth's blocks with their calls' results. */
export async function simulateV1(
  params: SimulateParams,
  height: number,
  s: EvmServices,
  ctx: EvmCallContext,
): Promise<WireValue> {
  const simulate = s.execution.simulate;
  if (simulate === undefined) throw methodNotFound("eth_simulateV1", "this node does not simulate blocks");
  const { gasCap } = ctx.runtime.settings;
  try {
    const blocks = await withEvmTimeout(ctx, (signal, timeoutMs) =>
      simulate.call(
        s.execution,
        { blocks: params.blocks, traceTransfers: params.traceTransfers, validation: params.validation },
        { height, gasCap, timeoutMs, signal },
      ),
    );
    return blocks.map((b) => encodeSimulatedBlock(b, params.returnFullTransactions));
  } catch (err) {
    if (err instanceof SimulateRejectedError) throw simulateError(err);
    throw err;
  }
}
