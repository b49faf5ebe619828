import { intrinsicGas } from "../../evm/index.js";

/**
 * Where an eth_call runs when the node has read workers: on the main thread, or on a worker.
 *
 * A call handed to a worker costs the main thread about as much as a cheap call run in place (the
 * request and answer cross threads as messages, and a promise settles): an ERC-20 balanceOf ran at
 * about half the requests/s through one or two workers than on the main thread alone. A long call is
 * the other way round: on the main thread it holds up every other request and uses one core. So each
 * call target (its `to`, or contract creation, and the first 4 bytes of its data, a Solidity
 * function's selector) keeps the execution gas of its latest calls (gas used less the intrinsic gas:
 * 21000, a creation's 32000, the calldata), wherever they ran, and the calls of a target above
 * {@link EXPENSIVE_GAS} go to the workers, or, up to {@link MAIN_THREAD_MAX_GAS}, to the main thread when
 * the workers already have a queue (the main thread is then one more core's worth of calls). Targets
 * never seen run on the main thread first.
 *
 * Gas, not time: a time measured on the main thread depends on whether the engine's code is
 * optimized there yet (it is not, for the targets sent away) and on whether the machine preempted
 * the thread mid-call; the gas of a call is the same wherever and whenever it runs.
 */

/**
 * Execution gas above which a call goes to the workers: ~0.1-0.4 ms at the engine's speeds on the
 * bench workloads (docs/evm-engine.md, "The read rows with eth_call dispatched by gas"), more than
 * handing a call to a worker costs the main thread, while views (balanceOf, allowance, a pool's
 * reserves: a few thousand gas) stay on the main thread.
 */
export const EXPENSIVE_GAS = 50_000;
/**
 * Execution gas past which a call never runs on the main thread while workers run (~0.6-2.2 ms at the
 * same speeds): consensus and every other request wait while the main thread runs a call.
 */
export const MAIN_THREAD_MAX_GAS = 300_000;
/** Where a call runs (CallCosts.placement). */
export type Placement = "here" | "either" | "away";
/** Targets remembered; the table starts over past this (a scan of many contracts). */
export const MAX_TARGETS = 4096;
/** Execution gas recorded for a call that ran out of time. */
const TIMED_OUT_GAS = Number.MAX_SAFE_INTEGER;
/** Weight of the newest call in a target's average. */
const ALPHA = 0.5;

const NO_DATA = new Uint8Array(0);

/** The table of call costs by target (see the module comment). */
export class CallCosts {
  readonly #targets = new Map<string, number>();
  readonly #expensiveGas: number;

  constructor(expensiveGas = EXPENSIVE_GAS) {
    this.#expensiveGas = expensiveGas;
  }

  /** The key of a call: `to` (or "create") and its data's first 4 bytes, as latin1 text. */
  static key(to: Uint8Array | undefined, data: Uint8Array | undefined): string {
    const d = data ?? NO_DATA;
    const sel = Buffer.from(d.buffer, d.byteOffset, Math.min(d.length, 4)).toString("latin1");
    if (to === undefined) return `c${sel}`;
    return `${Buffer.from(to.buffer, to.byteOffset, to.length).toString("latin1")}${sel}`;
  }

  /**
   * Where the next call of `key` runs: "here" (cheap or never seen: the main thread), "away" (too long
   * to ever hold up the main thread: a worker), or "either" (expensive: a worker, or the main thread
   * when the workers already have enough to do).
   */
  placement(key: string): Placement {
    const gas = this.#targets.get(key);
    if (gas === undefined || gas <= this.#expensiveGas) return "here";
    return gas > MAIN_THREAD_MAX_GAS ? "away" : "either";
  }

  /** A call of `key` (to `to`, undefined: a creation) with calldata `data` used `gasUsed` (the intrinsic gas included). */
  record(key: string, to: Uint8Array | undefined, data: Uint8Array | undefined, gasUsed: bigint): void {
    const intrinsic = intrinsicGas(data ?? NO_DATA, [], [], to === undefined);
    this.#set(key, Math.max(0, Number(gasUsed - intrinsic)));
  }

  /** A call of `key` ran out of time: the target is expensive. */
  recordTimeout(key: string): void {
    this.#set(key, TIMED_OUT_GAS);
  }

  #set(key: string, gas: number): void {
    const old = this.#targets.get(key);
    if (old !== undefined) {
      this.#targets.set(key, old === TIMED_OUT_GAS ? gas : old + ALPHA * (gas - old));
      return;
    }
    if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
    this.#targets.set(key, gas);
  }

  /** The execution gas `key` is judged by, undefined when never seen (tests). */
  cost(key: string): number | undefined {
    return this.#targets.get(key);
  }
}
