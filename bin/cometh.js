#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=16 --heap-growing-percent=80
// Entry for the `cometh` binary and `npm start`. It runs the bundled build in dist/ (made by
// `npm install`'s prepare step, bin/build.mjs) when that build is at least as new as every source
// file: no TypeScript loader in the process, and a V8 code cache (bin/loadBundle.js), so it starts
// faster and uses less memory. Otherwise (sources edited since, the build failed or was skipped) it
// runs the TypeScript sources through tsx's loader, so a checkout always works without a build step.
//
// Node flags and environment (the line above, and package.json's start/cometh scripts, which must
// match); V8 and glibc read them when the process starts, so they cannot be set from here:
// --max-semi-space-size=16 is V8's own ceiling for each young-generation semi-space, written out because it
// was 4 until 2026-11-29: 4 MiB saved ~30 MiB of peak RSS over `npm run bench:evm` (~290 -> ~260 MiB),
// but contract execution keeps a call's journal, slot records and words alive for the whole call, so a
// small young generation copies the same survivors again and again: the approve+transferFrom loop of
// bench:evm ran ~114 scavenges a call at 4 MiB and ~40 at 16, and the token loops took 10-40% longer.
// Contract speed is what users meet first, so the young generation keeps V8's default size.
// --heap-growing-percent=80 lets the old generation grow 1.8x its live size before the next full GC,
// where V8 picks up to 4x when GCs are fast: the live heap under tx load is ~30 MiB, the committed
// heap had reached ~130: peak RSS ~234 -> ~179 MiB (3+3 runs; 30% cost 15-20% of tx throughput, 60%
// ~5% of the ERC-20 row, 80% nothing measurable).
// MALLOC_ARENA_MAX=2: glibc's malloc keeps two arenas instead of one per allocating thread (V8's
// compiler threads included): ~14 MiB less peak RSS.
// None changed the read or transfer rows beyond run-to-run noise.
// CommonJS (bin/package.json): Node runs a CommonJS entry's first line ~20 ms sooner than an ES
// module's (73 against 92 ms, medians of 15 empty scripts each here), as it need not set up its ES
// module loader first; the sources' entry below is still imported as ES modules through tsx.
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");
const { buildIsFresh } = require("./buildFreshness.js");

const rootDir = join(__dirname, "..");
const root = pathToFileURL(`${rootDir}/`);
const built = join(rootDir, "dist", "cli", "main.cjs");

// COMETH_TRACE_STARTUP=1: start-up phase marks on stderr (src/util/startupTrace.ts prints the rest).
const mark = (phase) => {
  if (process.env.COMETH_TRACE_STARTUP !== "1") return;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stderr.write(`cometh start-up: ${performance.now().toFixed(1)} ms (cpu ${cpuMs.toFixed(1)} ms) ${phase}\n`);
};

async function main() {
  mark("launcher");
  const fresh = process.env.COMETH_FROM_SOURCE !== "1" && buildIsFresh(root);
  mark("launcher: build freshness checked");
  // For tests and support: which entry runs.
  if (process.env.COMETH_TRACE_ENTRY === "1") {
    console.error(
      `cometh: ${fresh ? "dist/cli/main.cjs" : "src/cli/main.ts"} (node flags: ${process.execArgv.join(" ")}; MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? ""})`,
    );
  }
  if (fresh) {
    const { loadBundle } = require("./loadBundle.js");
    const { cli, cacheUsed, saveCache } = loadBundle(built);
    mark(`launcher: bundle loaded (code cache ${cacheUsed ? "used" : "none"})`);
    // bin/build.mjs's priming run (bin/primeCodeCache.mjs, COMETH_PRIME_CODE_CACHE=signal) drives the
    // chain first and sends SIGUSR2 when done, so the cache also holds what blocks and sends compile;
    // then it stops (a dev chain removes its home). The handler is in place before the chain starts:
    // SIGUSR2's default action ends the process.
    const priming = process.env.COMETH_PRIME_CODE_CACHE === "signal";
    if (priming) {
      process.once("SIGUSR2", () => {
        saveCache();
        process.kill(process.pid, "SIGTERM");
      });
    }
    await cli.runCli(process.argv);
    // A command that serves (start, dev) has started: what its start-up runs is compiled, so a cache
    // written now holds it. A short command (init, version) would write a cache of far less.
    if (!priming && process.getActiveResourcesInfo().includes("TCPServerWrap")) saveCache();
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    await import(pathToFileURL(join(rootDir, "src", "cli", "main.ts")).href);
  }
}

main().catch((err) => {
  // What an ES module entry's top-level await would do with a rejection: print it, exit 1.
  console.error(err);
  process.exitCode = 1;
});
