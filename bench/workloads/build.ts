/**
 * Compiles bench/workloads/Workloads.sol with solc-js (the `solc` package of bench/peers, installed by
 * `bash bench/peers/install.sh`, not a project dependency) and rewrites bench/workloads/workloads.json: per
 * contract its ABI, init code (`bytecode`) and runtime code (`deployedBytecode`), with the compiler version
 * and settings. The bench reads that JSON, so it needs no compiler at run time.
 *
 *   node --import tsx bench/workloads/build.ts           # rewrites workloads.json
 *   node --import tsx bench/workloads/build.ts --check   # exits 1 when workloads.json is not what the source compiles to
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const SOURCE = "Workloads.sol";
const OUT = join(HERE, "workloads.json");
const CONTRACTS = ["TokenLoops", "KeccakLoop", "RayTracer"] as const;

/** What this script uses of solc-js (typed here, so type-checking needs no installed compiler). */
interface Solc {
  version(): string;
  compile(input: string): string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  viaIR: true,
  evmVersion: "shanghai",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

function loadSolc(): Solc {
  const require = createRequire(join(HERE, "..", "peers", "package.json"));
  try {
    return require("solc") as Solc;
  } catch (e) {
    throw new RangeError(`solc-js not found in bench/peers/node_modules; run bash bench/peers/install.sh (${e})`);
  }
}

export function compileWorkloads(): string {
  const solc = loadSolc();
  const input = {
    language: "Solidity",
    sources: { [SOURCE]: { content: readFileSync(join(HERE, SOURCE), "utf8") } },
    settings: SETTINGS,
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (out.errors ?? []).filter((e) => e.severity === "error" || e.severity === "warning");
  if (problems.length > 0) throw new RangeError(problems.map((e) => e.formattedMessage).join("\n"));
  const compiled = out.contracts?.[SOURCE] ?? {};
  const contracts: Record<string, { abi: unknown[]; bytecode: string; deployedBytecode: string }> = {};
  for (const name of CONTRACTS) {
    const c = compiled[name];
    if (c === undefined) throw new RangeError(`${SOURCE} has no contract ${name}`);
    contracts[name] = {
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
    };
  }
  const { outputSelection: _, ...settings } = SETTINGS;
  return `${JSON.stringify({ source: `bench/workloads/${SOURCE}`, compiler: solc.version(), settings, contracts }, null, 2)}\n`;
}

const json = compileWorkloads();
if (process.argv.includes("--check")) {
  if (readFileSync(OUT, "utf8") !== json) {
    console.error(`${OUT} is stale: run node --import tsx bench/workloads/build.ts`);
    process.exit(1);
  }
  console.log(`${OUT} matches ${SOURCE}`);
} else {
  writeFileSync(OUT, json);
  console.log(`wrote ${OUT}`);
}
