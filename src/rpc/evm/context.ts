import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { RpcObserver, WireValue, WsSubscription } from "../jsonrpc/index.js";
import type { FilterManager } from "./filters/filterManager.js";
import type { LogsMemo } from "./filters/logsMemo.js";
import type { EvmRpcSettings } from "./settings.js";
import type { ChainFeed } from "./subscriptions/chainFeed.js";

/** What a method handler sees besides its arguments. */

export type { EvmRpcSettings } from "./settings.js";

/** Process-wide debug profiling state (debug_startCPUProfile, setGCPercent…). */
export interface ProfilerState {
  gcPercent: number;
  blockProfileRate: number;
  mutexProfileFraction: number;
  /** Stops the running CPU profile and writes it; undefined when none runs. */
  stopCpuProfile: (() => Promise<string>) | undefined;
}

/** State built once when the server starts, shared by every transport and connection. */
export interface EvmRuntime {
  readonly settings: EvmRpcSettings;
  readonly filters: FilterManager;
  readonly feed: ChainFeed;
  readonly clock: Clock;
  readonly log: Logger;
  readonly profiler: ProfilerState;
  /** Encoded eth_getLogs answers of final ranges. */
  readonly logsMemo: LogsMemo;
  /** Records each served method's calls (metrics); absent: nothing is recorded. */
  readonly observer?: RpcObserver;
}

/** A WebSocket connection's side for eth_subscribe. */
export interface SubscriptionSink {
  /** Pushes an `eth_subscription` notification; false once the connection is gone. */
  notify(subscription: string, result: WireValue): boolean;
  /** The connection's live subscriptions by id. */
  readonly subscriptions: Map<string, WsSubscription>;
  /** Runs `fn` after the current call's answer has been written (so pushes never overtake it). */
  afterReply(fn: () => void): void;
}

export interface EvmCallContext {
  /** Full method name, e.g. "eth_getBalance". */
  readonly method: string;
  readonly transport: "http" | "ws";
  readonly runtime: EvmRuntime;
  /** Set over WebSocket. */
  readonly sink: SubscriptionSink | undefined;
  /**
   * Set in a read process (node/evm/readProcess.ts): marked when the call needed something only the
   * main process has (ForwardToMainError), so that the whole payload is answered there instead.
   */
  readonly unserved?: UnservedMark;
}

/** See EvmCallContext.unserved. */
export interface UnservedMark {
  hit: boolean;
}
