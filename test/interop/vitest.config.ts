import { defineConfig } from "vitest/config";

/**
 * `npm run test:interop`: the tests that run CometBFT's own Go binaries (test/interop/bin/, built by
 * `npm run interop:install`). Kept out of `npm test`; a test whose binaries are not built is skipped
 * with the reason, printed once here as well.
 */
export default defineConfig({
  test: {
    include: ["test/interop/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The Go nodes and apps are heavy on a small machine: one file at a time.
    fileParallelism: false,
    reporters: ["default", "./test/interop/summaryReporter.ts"],
    globalSetup: ["test/interop/globalSetup.ts"],
  },
});
