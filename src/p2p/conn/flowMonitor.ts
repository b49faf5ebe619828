import type { FlowStatus } from "../reactor.js";

/**
 * Transfer-rate monitor and limiter, after CometBFT libs/flowrate (itself from mxk/go-flowrate).
 * Bytes are counted into samples of SAMPLE_MS; each finished sample updates the instantaneous,
 * exponentially averaged (1 s window) and peak rates. `limit` holds the caller back while the
 * current sample already carries `rate × SAMPLE_MS` bytes, so the long-run rate stays at `rate`
 * with bursts of at most one sample's budget.
 */

const SAMPLE_MS = 100;
const WINDOW_S = 1;
const MIN_WAIT_MS = 5;
const TIME_REM_LIMIT_MS = (999 * 3600 + 59 * 60 + 59) * 1000;

export class FlowMonitor {
  readonly #now: () => number;
  readonly #startEpochMs: number;
  readonly #start: number;
  #active = true;
  #bytes = 0;
  #samples = 0;
  #rSample = 0;
  #rEma = 0;
  #rPeak = 0;
  #sBytes = 0;
  #sLast: number;
  #tBytes = 0;
  #tLast: number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#start = now();
    this.#startEpochMs = Date.now();
    this.#sLast = this.#start;
    this.#tLast = this.#start;
  }

  /** Records n transferred bytes. */
  update(n: number): void {
    this.#advance(n);
  }

  /** Expected size of the transfer (for bytesRem / progress); 0 = unknown. */
  setTransferSize(bytes: number): void {
    this.#tBytes = Math.max(0, bytes);
  }

  /** Marks the transfer finished: the rates freeze. */
  done(): void {
    const now = this.#advance(0);
    if (this.#sBytes > 0) this.#reset(now);
    this.#active = false;
  }

  /**
   * Waits until the current sample has budget left under `rateBytesPerSec` (0 = unlimited), or
   * `stopped()` turns true. Returns how many of `want` bytes may go now (at least 1 when active).
   */
  async limit(want: number, rateBytesPerSec: number, stopped: () => boolean): Promise<number> {
    if (want < 1 || rateBytesPerSec < 1) return want;
    const perSample = Math.max(1, Math.round((rateBytesPerSec * SAMPLE_MS) / 1000));
    let now = this.#advance(0);
    while (this.#sBytes >= perSample && this.#active && !stopped()) {
      const current = this.#sLast;
      while (this.#sLast === current && this.#active && !stopped()) {
        const waitMs = Math.max(MIN_WAIT_MS, current + SAMPLE_MS - now);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        now = this.#advance(0);
      }
    }
    const left = perSample - this.#sBytes;
    return Math.max(0, !this.#active || left > want ? want : left);
  }

  status(): FlowStatus {
    const now = this.#advance(0);
    const durationMs = this.#sLast - this.#start;
    const bytesRem = Math.max(0, this.#tBytes - this.#bytes);
    let avgRate = 0;
    let instRate = 0;
    let curRate = 0;
    let timeRemMs = 0;
    if (durationMs > 0) {
      const rAvg = this.#bytes / (durationMs / 1000);
      avgRate = Math.round(rAvg);
      if (this.#active) {
        instRate = Math.round(this.#rSample);
        curRate = Math.round(this.#rEma);
        const tRate = 0.8 * this.#rEma + 0.2 * rAvg;
        if (bytesRem > 0 && tRate > 0) timeRemMs = Math.min(TIME_REM_LIMIT_MS, Math.round((bytesRem / tRate) * 1000));
      }
    }
    return {
      startMs: this.#startEpochMs,
      bytes: this.#bytes,
      samples: this.#samples,
      instRate,
      curRate,
      avgRate,
      peakRate: Math.round(this.#rPeak),
      bytesRem,
      durationMs: Math.round(durationMs),
      idleMs: Math.round(now - this.#tLast),
      timeRemMs,
      progress: this.#tBytes > 0 ? this.#bytes / this.#tBytes : 0,
      active: this.#active,
    };
  }

  #advance(n: number): number {
    const now = this.#now();
    if (!this.#active) return now;
    if (n > 0) this.#tLast = now;
    this.#sBytes += n;
    const sMs = now - this.#sLast;
    if (sMs >= SAMPLE_MS) {
      const t = sMs / 1000;
      this.#rSample = this.#sBytes / t;
      if (this.#rSample > this.#rPeak) this.#rPeak = this.#rSample;
      if (this.#samples > 0) {
        const w = Math.exp(-t / WINDOW_S);
        this.#rEma = this.#rSample + w * (this.#rEma - this.#rSample);
      } else {
        this.#rEma = this.#rSample;
      }
      this.#reset(now);
    }
    return now;
  }

  #reset(sampleTime: number): void {
    this.#bytes += this.#sBytes;
    this.#samples++;
    this.#sBytes = 0;
    this.#sLast = sampleTime;
  }
}
