import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { NPM_START } from "./testNode.js";

/**
 * bin/build.mjs bundles src/ into dist/, and bin/cometh.js (npm start, the `cometh` binary) runs
 * that build only while it is fresh (COMETH_TRACE_ENTRY=1 prints the entry the launcher chose).
 *
 * The build under test is made once, in a checkout of its own: a temporary root with copies of bin/
 * and package.json and links to src/ and node_modules/. The checkout's own dist/ is left alone,
 * because the other test files start their nodes from it (testNode.ts) while this one runs beside
 * them: rebuilding it, or making it look stale, under a starting node would change what they test.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const VERSION = (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { version: string }).version;

let root: string;
let stamp: string;
let build: { status: number | null; err: string };

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "cometh-launcher-"));
  stamp = `${root}/dist/.built`;
  mkdirSync(`${root}/bin`);
  for (const f of [
    "bin/build.mjs",
    "bin/primeCodeCache.mjs",
    "bin/cometh.js",
    "bin/buildFreshness.js",
    "bin/loadBundle.js",
    "bin/package.json",
    "package.json",
  ])
    copyFileSync(`${ROOT}/${f}`, `${root}/${f}`);
  symlinkSync(`${ROOT}/src`, `${root}/src`);
  symlinkSync(`${ROOT}/node_modules`, `${root}/node_modules`);
  const r = run(["bin/build.mjs"]);
  build = { status: r.status, err: r.err };
}, 120_000);
afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}): { out: string; err: string; status: number | null } {
  return runNode(args, env);
}

function runNode(args: string[], env: Record<string, string>): { out: string; err: string; status: number | null } {
  const r = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, encoding: "utf8" });
  return { out: r.stdout, err: r.stderr, status: r.status };
}

describe("launcher", () => {
  test("default: the build is made, runs by itself, and the launcher picks it while fresh", () => {
    expect(build.status, build.err).toBe(0);
    expect(existsSync(`${root}/dist/cli/main.cjs`)).toBe(true);
    expect(run(["dist/cli/main.cjs", "version"]).out).toContain(`cometh ${VERSION}`);
    const fresh = run(["bin/cometh.js", "version"], { COMETH_TRACE_ENTRY: "1" });
    expect(fresh.out).toContain(`cometh ${VERSION}`);
    expect(fresh.err).toContain("dist/cli/main.cjs");
  });

  test("behavior: the build primes a V8 code cache that the launcher uses; a damaged cache is rejected and rewritten by a serving run", async () => {
    expect(build.status).toBe(0);
    const caches = readdirSync(`${root}/dist/cli`).filter((f) => f.endsWith(".v8cache"));
    expect(caches).toHaveLength(1);
    expect(caches[0]).toMatch(new RegExp(`^main\\.cjs\\.${process.version}-${process.arch}-[0-9a-f]{12}\\.v8cache$`));
    const cache = `${root}/dist/cli/${caches[0]}`;
    // The cache is V8's for the Node flags it was made with: the npm scripts' (the build primes it so).
    const flags = NPM_START.nodeFlags;
    const run = (args: string[], env: Record<string, string> = {}) => runNode([...flags, ...args], env);
    const traced = run(["bin/cometh.js", "version"], { COMETH_TRACE_STARTUP: "1" });
    expect(traced.out).toContain(`cometh ${VERSION}`);
    expect(traced.err).toContain("launcher: bundle loaded (code cache used)");
    const good = readFileSync(cache);
    try {
      writeFileSync(cache, Buffer.from("not a code cache"));
      const damaged = run(["bin/cometh.js", "version"], { COMETH_TRACE_STARTUP: "1" });
      expect(damaged.out).toContain(`cometh ${VERSION}`);
      expect(damaged.err).toContain("launcher: bundle loaded (code cache none)");
      // A short command leaves the cache alone; a dev chain that starts serving writes a new one.
      expect(readFileSync(cache, "utf8")).toBe("not a code cache");
      const dev = spawn(
        process.execPath,
        [...flags, "bin/cometh.js", "dev", "--port", "0", "--rpc.laddr", "tcp://127.0.0.1:0", "--silent"],
        { cwd: root, stdio: "ignore" },
      );
      try {
        // Written to a temporary file and renamed over the damaged one once the chain serves.
        const deadline = Date.now() + 60_000;
        while (readFileSync(cache).length < 100_000 && Date.now() < deadline && dev.exitCode === null) {
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        dev.kill("SIGTERM");
        if (dev.exitCode === null) await once(dev, "exit");
      }
      expect(statSync(cache).size).toBeGreaterThan(100_000);
      // The build's priming run (bin/primeCodeCache.mjs) drove its chain before writing: its cache also
      // holds what blocks, sends and reads compile, which a start-up alone does not run (~2.4 against ~1.9 MB).
      expect(good.length).toBeGreaterThan(statSync(cache).size * 1.1);
      const again = run(["bin/cometh.js", "version"], { COMETH_TRACE_STARTUP: "1" });
      expect(again.err).toContain("launcher: bundle loaded (code cache used)");
    } finally {
      writeFileSync(cache, good);
    }
  });

  test("behavior: the bundle leaves @ethereumjs/vm and its interpreter out (the node runs cometh's own EVM)", () => {
    expect(build.status).toBe(0);
    const code = readdirSync(`${root}/dist/cli`)
      .filter((f) => /\.c?js$/.test(f))
      .map((f) => readFileSync(`${root}/dist/cli/${f}`, "utf8"))
      .join("\n");
    expect(code).not.toMatch(/^\s+_getValidJumpDestinations\(code\) \{/m);
    expect(code).not.toContain("async runTx(");
  });

  test("behavior: a source newer than the build, or COMETH_FROM_SOURCE=1, runs the sources", () => {
    expect(build.status).toBe(0);
    const forced = run(["bin/cometh.js", "version"], { COMETH_TRACE_ENTRY: "1", COMETH_FROM_SOURCE: "1" });
    expect(forced.out).toContain(`cometh ${VERSION}`);
    expect(forced.err).toContain("src/cli/main.ts");
    // Make the build look older than the sources, then fresh again.
    const { atime, mtime } = statSync(stamp);
    try {
      utimesSync(stamp, new Date(0), new Date(0));
      const stale = run(["bin/cometh.js", "version"], { COMETH_TRACE_ENTRY: "1" });
      expect(stale.out).toContain(`cometh ${VERSION}`);
      expect(stale.err).toContain("src/cli/main.ts");
    } finally {
      utimesSync(stamp, atime, mtime);
    }
  });

  test("behavior: the cometh binary and npm start run Node alike (16 MiB semi-spaces, 1.8x heap growth, 2 malloc arenas)", () => {
    const shebang = readFileSync(`${ROOT}/bin/cometh.js`, "utf8").split("\n")[0] as string;
    const m = /^#!\/usr\/bin\/env -S MALLOC_ARENA_MAX=2 node (.+)$/.exec(shebang);
    const flags = m?.[1];
    expect(flags).toBe("--max-semi-space-size=16 --heap-growing-percent=80");
    const scripts = (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.start).toBe(`MALLOC_ARENA_MAX=2 node ${flags} bin/cometh.js start`);
    expect(scripts.cometh).toBe(`MALLOC_ARENA_MAX=2 node ${flags} bin/cometh.js`);
    expect(scripts.dev).toBe(`MALLOC_ARENA_MAX=2 node ${flags} bin/cometh.js dev`);
    // What the benches start cometh with (testNode's launcher, bench:evm).
    expect(NPM_START).toEqual({ env: { MALLOC_ARENA_MAX: "2" }, nodeFlags: flags?.split(" ") });
    // Executed as a program (through its #! line), as npm's bin link runs it.
    const env: NodeJS.ProcessEnv = { ...process.env, COMETH_TRACE_ENTRY: "1" };
    delete env.MALLOC_ARENA_MAX;
    const r = spawnSync(`${ROOT}/bin/cometh.js`, ["version"], { cwd: ROOT, env, encoding: "utf8" });
    expect(r.stdout).toContain(`cometh ${VERSION}`);
    expect(r.stderr).toContain(`(node flags: ${flags}; MALLOC_ARENA_MAX=2)`);
  });
});
