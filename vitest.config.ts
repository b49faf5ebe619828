import { configDefaults, defineConfig } from "vitest/config";
import SlowestFirst from "./test/slowestFirst.js";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The interop tests and the geth differential run Go binaries and have their own runs:
    // `npm run test:interop`, `npm run test:geth-diff`.
    exclude: [...configDefaults.exclude, "test/interop/**", "test/gethdiff/**", "test/conformance/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The slowest files first (test/slowestFirst.ts), so the run does not end on one long file.
    sequence: { sequencer: SlowestFirst },
    reporters: ["default"],
  },
});
