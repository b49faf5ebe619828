import type { Clock } from "../util/clock.js";
import type { RoundStep } from "./roundStep.js";

/** A scheduled timeout (consensus timeoutInfo). */
export interface TimeoutInfo {
  durationMs: number;
  height: number;
  round: number;
  step: RoundStep;
}

/**
 * One pending timeout at a time on the injected clock (consensus/ticker.go): a request for an older
 * height/round/step than the pending one is ignored; a newer one replaces it.
 */
export class TimeoutTicker {
  readonly #clock: Clock;
  readonly #onTimeout: (ti: TimeoutInfo) => void;
  #current: TimeoutInfo | undefined;
  #cancel: (() => void) | undefined;
  #stopped = false;

  constructor(clock: Clock, onTimeout: (ti: TimeoutInfo) => void) {
    this.#clock = clock;
    this.#onTimeout = onTimeout;
  }

  schedule(ti: TimeoutInfo): void {
    if (this.#stopped) return;
    const cur = this.#current;
    if (cur !== undefined) {
      if (ti.height < cur.height) return;
      if (ti.height === cur.height) {
        if (ti.round < cur.round) return;
        if (ti.round === cur.round && cur.step > 0 && ti.step <= cur.step) return;
      }
    }
    this.#cancel?.();
    this.#current = ti;
    this.#cancel = this.#clock.schedule(Math.max(0, ti.durationMs), () => {
      this.#cancel = undefined;
      if (!this.#stopped) this.#onTimeout(ti);
    });
  }

  /** Cancels the pending timeout and forgets it, so an earlier height can be scheduled (dev chain rollback). */
  reset(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#current = undefined;
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
