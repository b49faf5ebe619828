import { beforeAll, describe, expect, test } from "vitest";
import { executeTx } from "../../src/evm/index.js";
import { createReferenceExecutor } from "./referenceExecutor.js";
import {
  blobBaseFeeOf,
  type CaseResult,
  type Executor,
  generalStateTestsDir,
  loadCases,
  runStateTestCase,
  type StateTestCase,
  sampleCases,
} from "./stateTests.js";

/**
 * A fixed sample of ethereum/tests' GeneralStateTests (Cancun) covering every folder; the full suite
 * is `npm run test:state`. Skipped when the fixtures are not there ($ETHEREUM_TESTS_DIR, default
 * ../shared/ethereum-tests).
 */

const PER_FOLDER = 4;
/**
 * Left out of the sample to keep it within a minute; the full suite runs them. Point evaluation loads
 * KZG's trusted setup (~20 s in kzg-wasm); the others take seconds to hours in ethereumjs.
 */
const SLOW = ["point_evaluation", "loopMul", "loopExp", "ContractCreationSpam", "CALLBlake2f_MaxRounds", "Call50000"];
const root = generalStateTestsDir();

function sample(): StateTestCase[] {
  if (root === undefined) return [];
  const cases = loadCases(root).filter((c) => !SLOW.some((name) => c.test.name.includes(name)));
  return sampleCases(cases, PER_FOLDER);
}

function report(results: CaseResult[]): string {
  return results
    .filter((r) => r.status === "fail")
    .map((r) => `${r.id}: ${r.reason} (${r.outcome}; root expected ${r.expectedRoot} got ${r.gotRoot})`)
    .join("\n");
}

async function runAll(cases: StateTestCase[], executor: Executor): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const c of cases) out.push(await runStateTestCase(c, executor));
  return out;
}

test("default: blob base fee (EIP-4844 fake_exponential)", () => {
  expect(blobBaseFeeOf(0n)).toBe(1n);
  expect(blobBaseFeeOf(3338477n)).toBe(2n);
  expect(blobBaseFeeOf(10n * 3338477n)).toBe(22026n);
});

describe.skipIf(root === undefined)("GeneralStateTests sample, ethereumjs reference", () => {
  let cases: StateTestCase[] = [];
  beforeAll(() => {
    cases = sample();
  });

  test("behavior: the sample covers every folder", () => {
    const folders = new Set(loadCases(root as string).map((c) => c.test.folder));
    expect(new Set(cases.map((c) => c.test.folder))).toEqual(folders);
    expect(cases.length).toBeGreaterThan(200);
  });

  test("default: half the sample passes (two cases a folder)", async () => {
    // The reference is ethereumjs's VM itself (the differential tests' oracle) behind a thin wrapper:
    // two cases a folder run every folder through it (the whole sample took ~11 s of npm test on 2
    // cores). cometh's engine below runs the whole sample, `npm run test:state` every case.
    const results = await runAll(sampleCases(cases, PER_FOLDER / 2), await createReferenceExecutor());
    expect(report(results)).toBe("");
  }, 120_000);

  test("error: a wrong executor fails the cases", async () => {
    const reference = await createReferenceExecutor();
    // Pays the coinbase one more wei than due: the state root must catch it.
    const wrong: Executor = async (state, tx, block, fork) => {
      const r = await reference(state, tx, block, fork);
      const cb = state.account(block.coinbase);
      state.setAccount(block.coinbase, { ...cb, exists: true, balance: cb.balance + 1n });
      return r;
    };
    const results = await runAll(cases.slice(0, 5), wrong);
    expect(results.every((r) => r.status === "fail" && r.reason.includes("state root"))).toBe(true);
  });
});

describe.skipIf(root === undefined)("GeneralStateTests sample, cometh engine", () => {
  test("default: every sampled case passes", async () => {
    const results = await runAll(sample(), executeTx);
    expect(report(results)).toBe("");
  }, 120_000);
});
