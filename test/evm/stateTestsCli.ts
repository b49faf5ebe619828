import { parseArgs } from "node:util";
import { executeTx, setBlockCompileThreshold } from "../../src/evm/index.js";
import { createReferenceExecutor } from "./referenceExecutor.js";
import {
  type CaseResult,
  type Executor,
  fixturesDir,
  generalStateTestsDir,
  loadCases,
  REFERENCE_SKIPS,
  runStateTestCase,
  SKIPS,
  type SkipRule,
  sampleCases,
} from "./stateTests.js";

/**
 * `npm run test:state -- [--engine cometh|ethereumjs] [--filter substring] [--sample N] [--compile-after N]`: runs
 * ethereum/tests' GeneralStateTests (Cancun) through an engine and prints per-folder counts, every
 * skip with its reason, the first failures in detail, the time taken and `N passed, N failed`.
 * Exit code 1 on failures, 2 when the engine or the fixtures are missing. --compile-after sets how many
 * entries of a basic block before the engine compiles it (src/evm/blockCompiler.ts; 1: every block at
 * once, 0: never; default: the engine's own).
 */

const DETAILED_FAILURES = 20;

function out(line = ""): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      engine: { type: "string", default: "cometh" },
      filter: { type: "string" },
      sample: { type: "string" },
      "compile-after": { type: "string" },
    },
  });
  if (values["compile-after"] !== undefined) setBlockCompileThreshold(Number(values["compile-after"]));
  const engine = values.engine;
  let executor: Executor | undefined;
  let skipRules: readonly SkipRule[] = SKIPS;
  if (engine === "ethereumjs") {
    executor = await createReferenceExecutor();
    skipRules = [...SKIPS, ...REFERENCE_SKIPS];
  } else if (engine === "cometh") {
    executor = executeTx;
  } else {
    out(`unknown engine "${engine}": use --engine cometh or --engine ethereumjs`);
    return 2;
  }
  const root = generalStateTestsDir();
  if (root === undefined) {
    out(`no GeneralStateTests under ${fixturesDir()}: set ETHEREUM_TESTS_DIR to a clone of ethereum/tests`);
    return 2;
  }
  const started = performance.now();
  let cases = loadCases(root, values.filter);
  if (values.sample !== undefined) cases = sampleCases(cases, Number(values.sample));
  out(`${cases.length} cases from ${root} (engine ${engine}, Cancun)`);

  const folders = new Map<string, { pass: number; fail: number; skip: number }>();
  const failures: CaseResult[] = [];
  const skips: CaseResult[] = [];
  const slow: { id: string; ms: number }[] = [];
  let done = 0;
  for (const c of cases) {
    const t0 = performance.now();
    const r = await runStateTestCase(c, executor, "cancun", skipRules);
    const ms = performance.now() - t0;
    if (ms > 2000) slow.push({ id: r.id, ms });
    let f = folders.get(r.folder);
    if (f === undefined) {
      f = { pass: 0, fail: 0, skip: 0 };
      folders.set(r.folder, f);
    }
    f[r.status]++;
    if (r.status === "fail") failures.push(r);
    else if (r.status === "skip") skips.push(r);
    done++;
    if (done % 1000 === 0) {
      process.stderr.write(
        `${done}/${cases.length} (${failures.length} failed) ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
      );
    }
  }
  const elapsedS = (performance.now() - started) / 1000;

  out();
  out("folder                                              passed  failed skipped");
  for (const [name, f] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    out(`${name.padEnd(50)} ${String(f.pass).padStart(7)} ${String(f.fail).padStart(7)} ${String(f.skip).padStart(7)}`);
  }
  if (skips.length > 0) {
    out();
    out(`skipped (${skips.length}):`);
    for (const s of skips) out(`  ${s.id}: ${s.reason}`);
  }
  if (failures.length > 0) {
    out();
    out(`failed (${failures.length}), the first ${Math.min(DETAILED_FAILURES, failures.length)} in detail:`);
    for (const r of failures.slice(0, DETAILED_FAILURES)) {
      out(`  ${r.id}`);
      out(`    ${r.reason}`);
      out(`    outcome ${r.outcome}`);
      out(`    root expected ${r.expectedRoot} got ${r.gotRoot}`);
      if (r.expectedLogs !== r.gotLogs) out(`    logs expected ${r.expectedLogs} got ${r.gotLogs}`);
    }
    for (const r of failures.slice(DETAILED_FAILURES)) out(`  ${r.id}: ${r.reason}`);
  }
  if (slow.length > 0) {
    out();
    out("slowest cases (> 2 s):");
    for (const s of slow.sort((a, b) => b.ms - a.ms).slice(0, 10)) out(`  ${s.id}: ${(s.ms / 1000).toFixed(1)} s`);
  }
  const passed = cases.length - failures.length - skips.length;
  out();
  out(`elapsed ${elapsedS.toFixed(1)} s`);
  out(`${passed} passed, ${failures.length} failed, ${skips.length} skipped`);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
