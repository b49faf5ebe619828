import { defineConfig } from "vitest/config";

/**
 * `npm run test:conformance`: the execution-apis conformance cases ($EXECUTION_APIS_TESTS, never
 * copied into the repository) replayed against cometh on a dev chain rebuilt from their test chain.
 * Kept out of `npm test`; one in-process node, about a minute.
 */
export default defineConfig({
  test: {
    include: ["test/conformance/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    pool: "forks",
    fileParallelism: false,
    reporters: ["default", "./test/conformance/summaryReporter.ts"],
  },
});
