import { defineConfig } from "vitest/config";

/**
 * `npm run test:geth-diff`: cometh's Ethereum JSON-RPC compared with geth's (`geth --dev`, built by
 * `npm run interop:install`). Kept out of `npm test`; skipped with the reason when geth is not built.
 * Bounded: each file starts its own geth and cometh dev and stops them by PID.
 */
export default defineConfig({
  test: {
    include: ["test/gethdiff/**/*.test.ts"],
    testTimeout: 240_000,
    hookTimeout: 240_000,
    pool: "forks",
    fileParallelism: false,
    reporters: ["default", "./test/gethdiff/summaryReporter.ts"],
  },
});
