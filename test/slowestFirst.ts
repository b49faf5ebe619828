import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * `npm test`'s file order: the slowest files first, so that the last files to finish are short ones
 * and no worker sits idle at the end while another runs a long file alone.
 *
 * Vitest orders by the durations of the previous run, from its cache in node_modules/.vite, and by
 * file size where it has none: on a fresh clone (CI) the four-validator testnet, the longest file,
 * could start last. Here a file's duration is the cache's when there is one, else the one measured
 * below, and the files with neither run after those, larger first.
 *
 * The seconds are one `npm test` run's on 2 cores (vitest's JSON reporter, `--reporter=json`); only
 * their order matters. A file missing from the list is not wrong, only perhaps started late.
 */
export const MEASURED_SECONDS: Readonly<Record<string, number>> = {
  "test/integration/testnet.test.ts": 60,
  "test/evm/precompiles.test.ts": 40,
  "test/integration/remoteSigner.test.ts": 30,
  "test/integration/storageFaults.test.ts": 25,
  "test/integration/dashboard.browser.test.ts": 25,
  "test/integration/requestFlood.test.ts": 20,
  "test/integration/devCommand.test.ts": 15,
  "test/integration/e2eRunner.test.ts": 12,
  "test/evm/differential.test.ts": 11,
  "test/bench/workloads.test.ts": 11,
  "src/cli/main.test.ts": 8,
};

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const cache = this.ctx.cache;
    const known = (spec: TestSpecification): number | undefined => {
      const path = relative(root, spec.moduleId);
      const cached = cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (cached !== undefined && !cached.failed) return cached.duration / 1000;
      return MEASURED_SECONDS[path];
    };
    const size = (spec: TestSpecification): number =>
      cache.getFileStats(`${spec.project.name}:${relative(root, spec.moduleId)}`)?.size ?? 0;
    return [...files].sort((a, b) => {
      const da = known(a);
      const db = known(b);
      if (da !== undefined && db !== undefined) return db - da;
      if (da !== undefined) return -1;
      if (db !== undefined) return 1;
      return size(b) - size(a);
    });
  }
}
