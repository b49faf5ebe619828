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
 * The seconds are one `npm test` run's (vitest's JSON reporter, `--reporter=json`: a file's endTime
 * − startTime) on a busy 2-core machine; only their order matters. A file missing from the list is
 * not wrong, only perhaps started late.
 */
export const MEASURED_SECONDS: Readonly<Record<string, number>> = {
  "test/evm/precompiles.test.ts": 325,
  "test/integration/testnet.test.ts": 256,
  "test/integration/storageFaults.test.ts": 131,
  "test/integration/dashboard.browser.test.ts": 117,
  "test/integration/devCommand.test.ts": 89,
  "test/bench/workloads.test.ts": 88,
  "src/cli/main.test.ts": 79,
  "test/evm/differential.test.ts": 71,
  "test/integration/requestFlood.test.ts": 68,
  "test/evm/stateTests.test.ts": 66,
  "src/rpc/evm/clients.test.ts": 62,
  "test/integration/remoteSigner.test.ts": 56,
  "test/integration/callOverrides.test.ts": 55,
  "test/evm/interpreter.test.ts": 52,
  "src/rpc/evm/namespaces/namespaces.test.ts": 43,
  "test/integration/e2eRunner.test.ts": 43,
  "src/rpc/evm/malformed.test.ts": 39,
  "src/app/evm/readPool.test.ts": 35,
  "test/integration/cometMalformed.test.ts": 27,
  "test/integration/crashRecovery.test.ts": 24,
  "src/rpc/comet/routes.test.ts": 23,
  "test/integration/cometOpenapi.test.ts": 22,
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
