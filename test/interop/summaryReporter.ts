import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints the interop run's closing line, `interop: N passed, N failed, N skipped`, after vitest's own
 * summary: the plain line CI reads, whatever the reporter above it prints.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    process.stdout.write(`interop: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
