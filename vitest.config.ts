import { accessSync, constants } from "node:fs";
import { configDefaults, defineConfig } from "vitest/config";
import SlowestFirst from "./test/slowestFirst.js";

/**
 * Where the tests' temporary homes go: tmpfs (Linux's /dev/shm) unless TMPDIR is set. Every node a
 * test starts writes its stores and WAL with fsync at each height; on this machine's disk an fsync
 * took 4.5 ms (0.01 ms on tmpfs), and with four to six nodes per test it set the block pace: the
 * four-validator testnet file took 96 s instead of 122-130 s on the same busy machine.
 */
function testTmpdir(): Record<string, string> {
  if (process.env.TMPDIR !== undefined) return {};
  try {
    accessSync("/dev/shm", constants.W_OK);
    return { TMPDIR: "/dev/shm" };
  } catch {
    return {};
  }
}

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The interop tests and the geth differential run Go binaries and have their own runs:
    // `npm run test:interop`, `npm run test:geth-diff`.
    exclude: [...configDefaults.exclude, "test/interop/**", "test/gethdiff/**", "test/conformance/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // os.tmpdir() of the test files and of the nodes they spawn (testTmpdir above).
    env: testTmpdir(),
    // On 2 cores vitest would run one file at a time (its default is one worker fewer than the
    // cores); most files spend their time waiting on child nodes, block times and sockets, so two
    // run at once.
    maxWorkers: 2,
    // A worker runs its files one after another in one process, which loads src/ and the libraries
    // once: with a fresh process per file, loading modules was half the suite's CPU time (src/'s
    // unit files: 340 s of imports against 63 s). No test mocks modules or stubs globals; each file
    // closes what it starts.
    isolate: false,
    // dist/ rebuilt when stale, so child nodes start from the bundle (test/buildOnce.ts).
    globalSetup: ["test/buildOnce.ts"],
    // The slowest files first (test/slowestFirst.ts), so the run does not end on one long file.
    sequence: { sequencer: SlowestFirst },
    reporters: ["default"],
  },
});
