import type { Logger } from "../util/logger.js";

/**
 * What the node started, in order; unwinding stops it in reverse. A failing step is logged and
 * the rest still run, so one stuck subsystem cannot keep the databases open.
 */
export class ShutdownStack {
  readonly #log: Logger;
  readonly #steps: { name: string; stop: () => Promise<void> | void }[] = [];

  constructor(log: Logger) {
    this.#log = log;
  }

  push(name: string, stop: () => Promise<void> | void): void {
    this.#steps.push({ name, stop });
  }

  async unwind(): Promise<void> {
    for (let step = this.#steps.pop(); step !== undefined; step = this.#steps.pop()) {
      try {
        await step.stop();
      } catch (err) {
        this.#log.error({ err, subsystem: step.name }, "failed to stop cleanly");
      }
    }
  }
}
