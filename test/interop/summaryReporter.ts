import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints a suite's closing line, `<label>: N passed, N failed, N skipped`, after vitest's own
 * summary: the plain line CI reads, whatever the reporter above it prints. A file whose set-up failed
 * (its tests then show as skipped) counts as one failure. The interop suite uses it
 * as is (`interop: ...`); the geth differential names itself (test/gethdiff/summaryReporter.ts).
 */
export class CountingSummary implements Reporter {
  readonly #label: string;

  constructor(label: string) {
    this.#label = label;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      // A file whose set-up failed fails with its tests skipped: it counts as one failure.
      if (failedHere === 0 && module.state() === "failed") failedHere = 1;
      failed += failedHere;
    }
    process.stdout.write(`${this.#label}: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

export default class InteropSummary extends CountingSummary {
  constructor() {
    super("interop");
  }
}
