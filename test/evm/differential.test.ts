import { readFileSync } from "node:fs";
import { Address, createContractAddress } from "@ethereumjs/util";
import { encodeFunctionData, parseAbi } from "viem";
import { describe, expect, test } from "vitest";
import { PREINSTALLS } from "../../src/app/evm/genesis.js";
import { MULTICALL3_CODE, PERMIT2_CODE } from "../../src/app/evm/preinstallCode.js";
import { blockCompileThreshold, executeTx, setBlockCompileThreshold } from "../../src/evm/index.js";
import type { EngineTx } from "../../src/evm/types.js";
import { hexToBytes } from "../../src/util/bytes.js";
import {
  address,
  blockEnv,
  compareExecutors,
  engineTx,
  formatMismatch,
  randomScenario,
  type Scenario,
  SENDER,
} from "./randomPrograms.js";
import { createReferenceExecutor } from "./referenceExecutor.js";
import type { Executor } from "./stateTests.js";

/**
 * Differential tests: random programs from seeds and real contracts (the test ERC-20, Multicall3,
 * Permit2, the CREATE2 factory), run through two executors on copies of the same pre-state and
 * compared on outcome and state diff. Until engine/transaction.ts exists the reference runs against
 * itself, which exercises the harness; the cometh-vs-reference block switches on with that file.
 */

/** The seeds every run checks (printed); a failure names its seed and prints the programs. */
const SEEDS = { first: 1, count: 300 };
const seeds = Array.from({ length: SEEDS.count }, (_, i) => SEEDS.first + i);

function bytes(h: string): Uint8Array {
  return hexToBytes(h.startsWith("0x") ? h.slice(2) : h) as Uint8Array;
}

const erc20 = JSON.parse(readFileSync(new URL("../data/erc20.json", import.meta.url), "utf8")) as {
  bytecode: string;
  abi: string[];
};
const erc20Abi = parseAbi(erc20.abi);
const permit2Abi = parseAbi([
  "function approve(address token, address spender, uint160 amount, uint48 expiration)",
  "function transferFrom(address from, address to, uint160 amount, address token)",
  "function allowance(address user, address token, address spender) view returns (uint160, uint48, uint48)",
  "function invalidateNonces(address token, address spender, uint48 newNonce)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
]);
const multicallAbi = parseAbi([
  "struct Call3 { address target; bool allowFailure; bytes callData; }",
  "struct Call3Value { address target; bool allowFailure; uint256 value; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  "function aggregate3(Call3[] calls) payable returns (Result[])",
  "function aggregate3Value(Call3Value[] calls) payable returns (Result[])",
  "function getBlockNumber() view returns (uint256)",
  "function getEthBalance(address) view returns (uint256)",
]);

function preinstall(name: string): { addr: Uint8Array; code: Uint8Array } {
  const p = PREINSTALLS.find((x) => x.name.startsWith(name));
  if (p === undefined) throw new RangeError(`no preinstall ${name}`);
  return { addr: bytes(p.address), code: bytes(p.code) };
}

const OTHER = address(0x07e4n);
const TOKEN = createContractAddress(new Address(SENDER), 0n).bytes;
const MULTICALL = preinstall("Multicall3");
const PERMIT2 = preinstall("Permit2");
const FACTORY = preinstall("Create2");

function hex(b: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(b).toString("hex")}`;
}

/** The ERC-20 deployed, then used directly, through Permit2, through Multicall3 and the CREATE2 factory. */
function contractsScenario(): Scenario {
  const nonces = new Map<string, bigint>();
  const txs: EngineTx[] = [];
  const send = (from: Uint8Array, to: Uint8Array | undefined, data: Uint8Array | `0x${string}`, value = 0n) => {
    const key = hex(from);
    const nonce = nonces.get(key) ?? 0n;
    nonces.set(key, nonce + 1n);
    txs.push(engineTx({ from, nonce, to, data: typeof data === "string" ? bytes(data) : data, value }));
  };
  const call = (fn: string, args: unknown[]) =>
    encodeFunctionData({ abi: erc20Abi, functionName: fn, args } as Parameters<typeof encodeFunctionData>[0]);
  const max160 = (1n << 160n) - 1n;
  send(SENDER, undefined, bytes(erc20.bytecode));
  send(SENDER, TOKEN, call("transfer", [hex(OTHER), 1000n]));
  send(SENDER, TOKEN, call("transfer", [hex(OTHER), 10n ** 30n])); // reverts: more than the balance
  send(SENDER, TOKEN, call("approve", [hex(PERMIT2.addr), (1n << 256n) - 1n]));
  send(
    SENDER,
    PERMIT2.addr,
    encodeFunctionData({
      abi: permit2Abi,
      functionName: "approve",
      args: [hex(TOKEN), hex(OTHER), 5000n, 2_000_000_000],
    }),
  );
  send(
    OTHER,
    PERMIT2.addr,
    encodeFunctionData({
      abi: permit2Abi,
      functionName: "transferFrom",
      args: [hex(SENDER), hex(OTHER), 700n, hex(TOKEN)],
    }),
  );
  // More than allowed: Permit2 reverts with InsufficientAllowance.
  send(
    OTHER,
    PERMIT2.addr,
    encodeFunctionData({
      abi: permit2Abi,
      functionName: "transferFrom",
      args: [hex(SENDER), hex(OTHER), max160, hex(TOKEN)],
    }),
  );
  send(
    SENDER,
    PERMIT2.addr,
    encodeFunctionData({ abi: permit2Abi, functionName: "invalidateNonces", args: [hex(TOKEN), hex(OTHER), 5] }),
  );
  send(
    SENDER,
    MULTICALL.addr,
    encodeFunctionData({
      abi: multicallAbi,
      functionName: "aggregate3",
      args: [
        [
          { target: hex(TOKEN), allowFailure: false, callData: call("balanceOf", [hex(SENDER)]) },
          { target: hex(TOKEN), allowFailure: true, callData: call("transfer", [hex(OTHER), 1n]) },
          {
            target: hex(MULTICALL.addr),
            allowFailure: false,
            callData: encodeFunctionData({ abi: multicallAbi, functionName: "getBlockNumber" }),
          },
          {
            target: hex(PERMIT2.addr),
            allowFailure: false,
            callData: encodeFunctionData({
              abi: permit2Abi,
              functionName: "allowance",
              args: [hex(SENDER), hex(TOKEN), hex(OTHER)],
            }),
          },
        ],
      ],
    }),
  );
  send(
    SENDER,
    MULTICALL.addr,
    encodeFunctionData({
      abi: multicallAbi,
      functionName: "aggregate3Value",
      args: [
        [
          { target: hex(OTHER), allowFailure: false, value: 5n, callData: "0x" },
          {
            target: hex(MULTICALL.addr),
            allowFailure: true,
            value: 0n,
            callData: encodeFunctionData({ abi: multicallAbi, functionName: "getEthBalance", args: [hex(OTHER)] }),
          },
        ],
      ],
    }),
    5n,
  );
  // The CREATE2 factory: salt ‖ init code; the same twice collides (the factory reverts).
  const salt = new Uint8Array(32).fill(7);
  const deploy = Uint8Array.from([...salt, ...bytes(erc20.bytecode)]);
  send(SENDER, FACTORY.addr, deploy);
  send(SENDER, FACTORY.addr, deploy);
  return {
    name: "ERC-20, Permit2, Multicall3, CREATE2 factory",
    fork: "prague",
    block: blockEnv(),
    accounts: [
      { addr: SENDER, nonce: 0n, balance: 10n ** 24n, code: new Uint8Array(0) },
      { addr: OTHER, nonce: 0n, balance: 10n ** 20n, code: new Uint8Array(0) },
      { addr: MULTICALL.addr, nonce: 1n, balance: 0n, code: bytes(MULTICALL3_CODE) },
      { addr: PERMIT2.addr, nonce: 1n, balance: 0n, code: bytes(PERMIT2_CODE) },
      { addr: FACTORY.addr, nonce: 1n, balance: 0n, code: FACTORY.code },
    ],
    txs,
    programs: [{ name: "ERC-20 init code", code: bytes(erc20.bytecode) }],
  };
}

async function expectAgree(s: Scenario, a: Executor, b: Executor): Promise<void> {
  const m = await compareExecutors(s, a, b);
  if (m !== undefined) expect.fail(formatMismatch(m, s));
}

/** The differential suite on `executors`, over the first `count` of the seeds. */
function suite(name: string, executors: () => Promise<[Executor, Executor]>, count = SEEDS.count) {
  const last = SEEDS.first + count - 1;
  describe(name, () => {
    test("default: ERC-20, Permit2, Multicall3 and the CREATE2 factory", async () => {
      const [a, b] = await executors();
      await expectAgree(contractsScenario(), a, b);
    });

    test(`default: random programs, seeds ${SEEDS.first}..${last}`, async () => {
      process.stdout.write(`${name}: seeds ${SEEDS.first}..${last}\n`);
      const [a, b] = await executors();
      for (const seed of seeds.slice(0, count)) await expectAgree(randomScenario(seed), a, b);
    }, 120_000);
  });
}

// The reference against itself: proves the harness runs scenarios end to end and compares equal
// runs as equal. 50 seeds: every seed runs end to end in the cometh-vs-ethereumjs suite below too,
// and the 300 here ran ethereumjs twice per scenario (~7 s of npm test on 2 cores) for no other check.
suite("differential, ethereumjs vs ethereumjs", async () => {
  const r = await createReferenceExecutor();
  return [r, await createReferenceExecutor()];
}, 50);

test("behavior: the contract scenario runs the contracts (no tx invalid, some succeed, some revert)", async () => {
  const s = contractsScenario();
  const r = await createReferenceExecutor();
  const { OverlayStateManager } = await import("../../src/app/evm/stateManager.js");
  const { MemoryStateReader } = await import("./stateTests.js");
  const pre = new MemoryStateReader();
  for (const a of s.accounts) pre.put(a.addr, a);
  const state = new OverlayStateManager(pre);
  const outcomes: string[] = [];
  for (const tx of s.txs) {
    const res = await r(state, tx, s.block, s.fork);
    outcomes.push(res.success ? "ok" : res.error);
  }
  expect(outcomes).toEqual([
    "ok",
    "ok",
    "execution reverted",
    "ok",
    "ok",
    "ok",
    "execution reverted",
    "ok",
    "ok",
    "ok",
    "ok",
    "execution reverted",
  ]);
});

test("error: a wrong executor is caught, with the program printed", async () => {
  const reference = await createReferenceExecutor();
  // Forgets to charge one unit of gas whenever a tx logs: only outcomes with logs differ.
  const wrong: Executor = async (state, tx, block, fork) => {
    const r = await reference(state, tx, block, fork);
    return r.logs.length > 0 ? { ...r, gasUsed: r.gasUsed - 1n } : r;
  };
  let found: string | undefined;
  for (const seed of seeds) {
    const s = randomScenario(seed);
    const m = await compareExecutors(s, await createReferenceExecutor(), wrong);
    if (m !== undefined) {
      found = formatMismatch(m, s);
      break;
    }
  }
  expect(found).toMatch(/tx \d: gasUsed differs\n {2}a: \d+\n {2}b: \d+\n {2}program A: 0x[0-9a-f]+/);
});

describe("cometh vs ethereumjs", () => {
  suite("differential, cometh vs ethereumjs", async () => {
    return [executeTx as Executor, await createReferenceExecutor()];
  });
});

// Every block compiled at its first entry (blockCompiler.ts), where the product waits for a block to be
// entered often: the compiled functions against the reference on the same programs.
describe("cometh with every block compiled vs ethereumjs", () => {
  const compiled: Executor = async (state, tx, block, fork) => {
    const before = blockCompileThreshold();
    setBlockCompileThreshold(1);
    try {
      return await executeTx(state, tx, block, fork);
    } finally {
      setBlockCompileThreshold(before);
    }
  };
  // 150 seeds here; .ci/run also runs a GeneralStateTests sample with every block compiled.
  suite("differential, cometh (blocks compiled) vs ethereumjs", async () => {
    return [compiled, await createReferenceExecutor()];
  }, 150);
});
