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
 * The seconds are one `npm test` run's on a fresh clone (.ci/run at f5528e2 on the 2-core machine,
 * 265 s: the durations vitest prints per file), the files with 4 s or more; the files made shorter
 * after that run (state sync, testnet, precompiles, pruning, request flood, state tests,
 * differential, workloads) carry its time less the seconds their cut tests took in it. Only their
 * order matters. A file missing from the list is not wrong, only perhaps started late.
 */
export const MEASURED_SECONDS: Readonly<Record<string, number>> = {
  "test/integration/stateSync.test.ts": 55,
  "test/integration/testnet.test.ts": 52,
  "test/integration/dashboard.browser.test.ts": 28,
  "test/evm/precompiles.test.ts": 22,
  "test/integration/pruning.test.ts": 17,
  "test/integration/remoteSigner.test.ts": 16,
  "test/integration/requestFlood.test.ts": 16,
  "test/integration/storageFaults.test.ts": 14,
  "src/rpc/evm/namespaces/namespaces.test.ts": 12,
  "test/evm/differential.test.ts": 12,
  "test/integration/fork.test.ts": 12,
  "test/evm/stateTests.test.ts": 11,
  "test/integration/e2eRunner.test.ts": 11,
  "test/integration/callOverrides.test.ts": 8,
  "test/integration/evmRpc.test.ts": 8,
  "test/integration/foundry.test.ts": 8,
  "test/integration/readWorkers.test.ts": 8,
  "src/cli/main.test.ts": 7,
  "test/integration/launcher.test.ts": 7,
  "src/app/evm/readPool.test.ts": 6,
  "src/privval/remoteSigner.test.ts": 6,
  "src/rpc/comet/routes.test.ts": 6,
  "test/integration/cometOpenapi.test.ts": 6,
  "test/integration/devCommand.test.ts": 6,
  "test/integration/hardhat.test.ts": 6,
  "test/evm/interpreter.test.ts": 5,
  "test/integration/devChain.test.ts": 5,
  "test/integration/metrics.test.ts": 5,
  "src/rpc/comet/cosmjs.test.ts": 4,
  "test/integration/cometMalformed.test.ts": 4,
  "test/integration/crashRecovery.test.ts": 4,
  "test/integration/testnetEvm.test.ts": 4,
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
