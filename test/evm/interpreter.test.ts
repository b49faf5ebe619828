import { beforeAll, describe, expect, test } from "vitest";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import { executeTx } from "../../src/evm/transaction.js";
import { type BlockEnv, type EngineTx, EngineTxError, type Fork, type TxResult } from "../../src/evm/types.js";
import { assemble } from "./randomPrograms.js";
import { createReferenceExecutor } from "./referenceExecutor.js";
import { type Executor, MemoryStateReader } from "./stateTests.js";

/**
 * Differential tests: hand-assembled programs run through cometh's engine and through @ethereumjs/vm
 * (referenceExecutor.ts) on identical pre-states; success, gas, return data, logs, error text and the
 * overlay's diff must agree. Addresses avoid 0x…0100 and 0x…0400 (the app's precompiles, which
 * ethereumjs' mainnet rules do not have).
 */

/** Hand-assembled programs (randomPrograms.ts assemble). */
const asm = assemble;

function word(n: bigint): string {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

/** Initcode that deploys `runtime` (hex). */
function deployer(runtime: string): string {
  const len = runtime.length / 2;
  const l = `0x${len.toString(16).padStart(4, "0")}`;
  // CODECOPY(0, 14, len) RETURN(0, len): the prologue is 14 bytes.
  const pro = asm(`PUSH2 ${l} PUSH1 0x0e PUSH0 CODECOPY PUSH2 ${l} PUSH0 RETURN`);
  if (pro.length / 2 !== 12) throw new RangeError(`prologue is ${pro.length / 2} bytes`);
  return asm(`PUSH2 ${l} PUSH1 0x0e PUSH0 CODECOPY PUSH2 ${l} PUSH0 RETURN INVALID INVALID`) + runtime;
}

// ---- the harness -----------------------------------------------------------------------------------

function addr(n: number): Uint8Array {
  const a = new Uint8Array(20);
  a[0] = 0x10;
  a[18] = n >> 8;
  a[19] = n & 0xff;
  return a;
}
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ""), "hex"));

const SENDER = addr(0x5e);
const C = addr(0xc0);
const D = addr(0xd0);
const E = addr(0xe0);
const COINBASE = addr(0xcb);

interface AccountSpec {
  code?: string;
  balance?: bigint;
  nonce?: bigint;
  storage?: Record<string, string>;
}

interface Case {
  /** The code at C (the transaction's target unless `tx.to` says otherwise). */
  code?: string;
  accounts?: [Uint8Array, AccountSpec][];
  tx?: Partial<EngineTx>;
  fork?: Fork;
  /** The block's gas limit (default 30M). */
  blockGasLimit?: bigint;
}

function block(gasLimit = 30_000_000n): BlockEnv {
  return {
    number: 300n,
    timestamp: 1_700_000_000n,
    coinbase: COINBASE,
    gasLimit,
    baseFee: 7n,
    prevRandao: new Uint8Array(32).fill(0x42),
    blobBaseFee: 3n,
    chainId: 262144n,
    blockHash: (n) => {
      const h = new Uint8Array(32).fill(0xbb);
      h[31] = Number(n & 0xffn);
      return h;
    },
  };
}

function preState(c: Case): MemoryStateReader {
  const pre = new MemoryStateReader();
  pre.put(SENDER, { nonce: 3n, balance: 10n ** 24n, code: new Uint8Array() });
  if (c.code !== undefined) pre.put(C, { nonce: 1n, balance: 1000n, code: bytes(c.code) });
  for (const [a, s] of c.accounts ?? []) {
    const storage = new Map<string, Uint8Array>();
    for (const [k, v] of Object.entries(s.storage ?? {})) storage.set(k.replace(/^0x/, "").padStart(64, "0"), bytes(v));
    pre.put(a, { nonce: s.nonce ?? 1n, balance: s.balance ?? 0n, code: bytes(s.code ?? ""), storage });
  }
  return pre;
}

function txOf(c: Case): EngineTx {
  return {
    type: 2,
    from: SENDER,
    to: C,
    nonce: 3n,
    gasLimit: 1_000_000n,
    value: 0n,
    data: new Uint8Array(),
    maxFeePerGas: 10n,
    maxPriorityFeePerGas: 2n,
    accessList: [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList: [],
    ...c.tx,
  };
}

interface Outcome {
  result?: {
    success: boolean;
    gasUsed: bigint;
    returnData: string;
    error: string;
    logs: string[];
    created: string;
  };
  invalid?: boolean;
  diff: string[];
}

function normalize(r: TxResult): NonNullable<Outcome["result"]> {
  return {
    success: r.success,
    gasUsed: r.gasUsed,
    returnData: hex(r.returnData),
    error: r.error,
    logs: r.logs.map((l) => `${hex(l.address)} ${l.topics.map(hex).join(",")} ${hex(l.data)}`),
    created: r.createdAddress === undefined ? "" : hex(r.createdAddress),
  };
}

async function runWith(ex: Executor, c: Case): Promise<Outcome> {
  const state = new OverlayStateManager(preState(c));
  let result: Outcome["result"];
  let invalid = false;
  try {
    result = normalize(await ex(state, txOf(c), block(c.blockGasLimit), c.fork ?? defaultFork));
  } catch (err) {
    if (!(err instanceof EngineTxError)) throw err;
    invalid = true;
  }
  const d = state.diff();
  const diff = [
    ...d.accounts.map(
      (a) =>
        `account ${hex(a.addr)} exists=${a.account.exists} nonce=${a.account.nonce} balance=${a.account.balance} code=${hex(a.account.codeHash).slice(0, 16)} inc=${a.account.incarnation}`,
    ),
    ...d.storage.map((s) => `slot ${hex(s.addr)}/${s.incarnation}/${hex(s.slot)} = ${hex(s.value)}`),
    ...d.codes.map((x) => `code ${hex(x.hash).slice(0, 16)} ${hex(x.code)}`),
  ].sort();
  return result === undefined ? { invalid, diff } : { result, diff };
}

let reference: Executor;
/** The fork of cases that do not name one (the suite runs once per fork). */
let defaultFork: Fork = "cancun";
beforeAll(async () => {
  reference = await createReferenceExecutor();
});

/** Runs the case through both engines and expects the same outcome; returns cometh's. */
async function same(c: Case): Promise<Outcome> {
  const mine = await runWith(executeTx, c);
  const ref = await runWith(reference, c);
  if (ref.result !== undefined && mine.result !== undefined) {
    ref.result.error = gethText(ref.result.error, mine.result.error);
  }
  expect(mine).toEqual(ref);
  return mine;
}

/**
 * ethereumjs' error texts as geth's. ethereumjs reports RETURNDATACOPY out of bounds as "out of gas";
 * both consume all the gas, so that pair is accepted (the text is checked on its own below).
 */
function gethText(ref: string, mine: string): string {
  if (ref.startsWith("invalid JUMP")) return "invalid jump destination";
  if (ref === "stack underflow" && mine.startsWith("stack underflow (")) return mine;
  if (ref === "stack overflow" && mine.startsWith("stack limit reached")) return mine;
  if (ref === "invalid opcode" && mine.startsWith("invalid opcode: ")) return mine;
  if (ref === "out of gas" && mine === "return data out of bounds") return mine;
  return ref;
}

/** Code that runs `ops` and stores the top of the stack in slot i after each group. */
function storeEach(groups: string[]): string {
  return asm(groups.map((g, i) => `${g} PUSH2 0x${i.toString(16).padStart(4, "0")} SSTORE`).join(" "));
}

const MAX = (1n << 256n) - 1n;
const MIN_NEG = 1n << 255n;
const VALUES = [0n, 1n, 2n, 3n, 7n, 255n, 256n, MAX, MAX - 1n, MIN_NEG, MIN_NEG + 1n, 1n << 128n, 0x1234567890abcdefn];
/** Where the engine's words change form (words.ts: numbers below 2^53) and where 32-bit shortcuts end. */
const EDGES = [
  (1n << 31n) - 1n,
  (1n << 32n) - 1n,
  1n << 32n,
  (1n << 53n) - 1n,
  1n << 53n,
  (1n << 53n) + 1n,
  (1n << 64n) - 1n,
];

// ---- opcode families -------------------------------------------------------------------------------

describe.each(["cancun", "prague"] as const)("engine vs ethereumjs (%s)", (fork) => {
  beforeAll(() => {
    defaultFork = fork;
  });

  test("behavior: a program that stores a wrong value is caught (the harness can fail)", async () => {
    const mine = await runWith(executeTx, { code: storeEach(["0x01 0x02 ADD"]) });
    const other = await runWith(reference, { code: storeEach(["0x01 0x03 ADD"]) });
    expect(mine).not.toEqual(other);
  });

  test("behavior: arithmetic (ADD..SIGNEXTEND) over edge values", async () => {
    const ops = ["ADD", "MUL", "SUB", "DIV", "SDIV", "MOD", "SMOD", "EXP", "SIGNEXTEND"];
    for (const op of ops) {
      const groups: string[] = [];
      for (const a of VALUES) for (const b of VALUES.slice(0, 8)) groups.push(`${word(b)} ${word(a)} ${op}`);
      await same({ code: storeEach(groups), tx: { gasLimit: 10_000_000n } });
    }
  });

  test("behavior: ADDMOD and MULMOD", async () => {
    const groups: string[] = [];
    for (const a of VALUES.slice(0, 9)) {
      for (const n of [0n, 1n, 7n, MAX]) groups.push(`${word(n)} ${word(MAX - a)} ${word(a)} ADDMOD`);
      for (const n of [0n, 5n, MAX - 2n]) groups.push(`${word(n)} ${word(MAX)} ${word(a)} MULMOD`);
    }
    await same({ code: storeEach(groups), tx: { gasLimit: 10_000_000n } });
  });

  test("behavior: comparison, bitwise and shifts", async () => {
    for (const op of ["LT", "GT", "SLT", "SGT", "EQ", "AND", "OR", "XOR", "BYTE", "SHL", "SHR", "SAR"]) {
      const groups: string[] = [];
      for (const a of VALUES)
        for (const b of [0n, 1n, 31n, 32n, 255n, 256n, MAX, MIN_NEG]) groups.push(`${word(a)} ${word(b)} ${op}`);
      await same({ code: storeEach(groups), tx: { gasLimit: 10_000_000n } });
    }
    await same({ code: storeEach(VALUES.flatMap((a) => [`${word(a)} ISZERO`, `${word(a)} NOT`])) });
  });

  test("behavior: memory (MSTORE, MSTORE8, MLOAD, MSIZE, KECCAK256, MCOPY) and its expansion gas", async () => {
    await same({
      code: storeEach([
        "0x1122 0x40 MSTORE 0x40 MLOAD",
        "0xff 0x3f MSTORE8 0x20 MLOAD",
        "MSIZE",
        "0x0400 0x00 KECCAK256",
        "0x40 0x30 0x10 MCOPY 0x10 MLOAD",
        "0x40 0x10 0x30 MCOPY 0x30 MLOAD",
        "0x00 0x2000 0x10 MCOPY MSIZE",
        "0x20 0x3000 0x3000 MCOPY MSIZE",
        "0x00 0x0100000000 KECCAK256",
        "GAS",
      ]),
    });
    // Memory too large to pay for: out of gas.
    await same({ code: asm("0x01 0x0fffffffff MSTORE") });
    await same({ code: asm("0x20 0xffffffffffffffffffffffff 0x00 MCOPY") });
    await same({ code: asm("0x20 0x00 0xffffffffffffffffffffffff MCOPY") });
  });

  test("behavior: environment and block opcodes", async () => {
    const groups = [
      "ADDRESS",
      "ORIGIN",
      "CALLER",
      "CALLVALUE",
      "CALLDATASIZE",
      "0x00 CALLDATALOAD",
      "0x1f CALLDATALOAD",
      "0x30 CALLDATALOAD",
      "CODESIZE",
      "GASPRICE",
      "COINBASE",
      "TIMESTAMP",
      "NUMBER",
      "PREVRANDAO",
      "GASLIMIT",
      "CHAINID",
      "SELFBALANCE",
      "BASEFEE",
      "BLOBBASEFEE",
      "0x00 BLOBHASH",
      "PC",
      "GAS",
      "0x012b BLOCKHASH",
      "0x012c BLOCKHASH",
      "0x2c BLOCKHASH",
      "0x2b BLOCKHASH",
      "0x2d BLOCKHASH",
      `${word(SENDER.reduce((x, b) => (x << 8n) | BigInt(b), 0n))} BALANCE`,
      "ADDRESS BALANCE",
      "0x1234 BALANCE",
      "0x20 0x10 0x00 CALLDATACOPY 0x00 MLOAD",
      "0x40 0x00 0x40 CODECOPY 0x40 MLOAD",
      "0x20 0xffffffffff 0x80 CALLDATACOPY 0x80 MLOAD",
    ];
    await same({ code: storeEach(groups), tx: { data: bytes("aabbccddeeff00112233445566778899"), value: 5n } });
  });

  test("behavior: EXTCODESIZE, EXTCODECOPY, EXTCODEHASH of contracts, EOAs, empty and missing accounts", async () => {
    const w = (a: Uint8Array) => word(a.reduce((x, b) => (x << 8n) | BigInt(b), 0n));
    const groups: string[] = [];
    for (const a of [D, E, SENDER, addr(0x77), C]) {
      groups.push(`${w(a)} EXTCODESIZE`, `${w(a)} EXTCODEHASH`, `0x20 0x00 0x00 ${w(a)} EXTCODECOPY 0x00 MLOAD`);
    }
    await same({
      code: storeEach(groups),
      accounts: [
        [D, { code: asm("0x01 0x02 ADD STOP") }],
        [E, { nonce: 0n }],
      ],
    });
  });

  test("behavior: SSTORE gas and refunds (EIP-2200/2929/3529) from each original value", async () => {
    const seqs = [
      ["0x01"],
      ["0x00"],
      ["0x02"],
      ["0x02", "0x01"],
      ["0x00", "0x01"],
      ["0x02", "0x00"],
      ["0x00", "0x02", "0x00"],
      ["0x02", "0x03", "0x01"],
      ["0x01", "0x01"],
    ];
    for (const original of ["", "0x01"]) {
      for (const seq of seqs) {
        await same({
          code: asm(`${seq.map((v) => `${v} 0x05 SSTORE`).join(" ")} 0x05 SLOAD 0x06 SLOAD POP POP`),
          accounts: original === "" ? [] : [[C, { code: "", storage: { "0x05": original } }]],
        });
      }
    }
    // Warm slot through the access list; SLOAD warm and cold.
    await same({
      code: asm("0x05 SLOAD 0x07 SLOAD 0x01 0x05 SSTORE"),
      tx: { accessList: [{ address: C, storageKeys: [bytes(word(5n))] }] },
    });
  });

  test("behavior: SSTORE with no more than the stipend left fails", async () => {
    const child = asm("0x01 0x00 SSTORE");
    await same({
      code: asm(`0x00 0x00 0x00 0x00 0x01 ${word(0xd0n | (0x10n << 152n))} 0x00 CALL 0x00 SSTORE`),
      accounts: [[D, { code: child }]],
    });
  });

  test("behavior: transient storage (TLOAD/TSTORE) and its revert with the frame", async () => {
    const dWord = word(0xd0n | (0x10n << 152n));
    // D: TSTORE(1, 7) then REVERT, or TSTORE(2, 9) and STOP depending on calldata.
    const d = asm("0x07 0x01 TSTORE 0x00 CALLDATALOAD 0x13 JUMPI 0x00 0x00 REVERT JUMPDEST 0x09 0x02 TSTORE STOP");
    await same({
      code: storeEach([
        "0x05 0x03 TSTORE 0x03 TLOAD",
        `0x00 0x00 0x00 0x00 0x00 ${dWord} GAS DELEGATECALL`,
        "0x01 TLOAD",
        `0x01 0x00 MSTORE 0x00 0x00 0x20 0x00 0x00 ${dWord} GAS CALL`,
        "0x02 TLOAD",
        `0x00 0x00 0x20 0x00 ${dWord} GAS DELEGATECALL`,
        "0x02 TLOAD",
      ]),
      accounts: [[D, { code: d }]],
    });
    // TSTORE under STATICCALL: write protection.
    await same({
      code: storeEach([`0x00 0x00 0x00 0x00 ${dWord} GAS STATICCALL`]),
      accounts: [[D, { code: asm("0x01 0x01 TSTORE") }]],
    });
  });

  test("behavior: exceptional halts (jumps, stack, invalid opcodes, return data bounds, out of gas)", async () => {
    const programs = [
      "0x03 JUMP JUMPDEST",
      "0x04 JUMP JUMPDEST STOP",
      "0x05 JUMP PUSH1 0x5b STOP",
      "0x01 0x08 JUMPI 0x00 0x00 REVERT JUMPDEST",
      "0x00 0x08 JUMPI 0x00 0x00 REVERT JUMPDEST",
      "ADD",
      "0x01 SWAP1",
      "DUP1",
      "INVALID",
      "0x01 0x01 SIGNEXTEND 0x0c",
      `${"PUSH0 ".repeat(1025)}`,
      `${"PUSH0 ".repeat(1024)}`,
      "0x01 0x00 0x00 RETURNDATACOPY",
      "0x00 0x00 0x00 RETURNDATACOPY",
      "JUMPDEST 0x00 JUMP",
      "0x20 0x00 RETURN",
      "0x0b 0x00 MSTORE 0x20 0x00 REVERT",
    ];
    for (const p of programs) {
      const code = p === "0x01 0x01 SIGNEXTEND 0x0c" ? `${asm("0x01 0x01 SIGNEXTEND")}0c` : asm(p);
      await same({ code, tx: { gasLimit: 200_000n } });
    }
    await same({ code: asm("0x01 0x00 SSTORE"), tx: { gasLimit: 21_000n + 2_200n } });
  });

  test("behavior: words at the number/bigint edge (2^31, 2^32, 2^53, 2^64) through every arithmetic and bitwise op", async () => {
    const ops = [
      "ADD",
      "MUL",
      "SUB",
      "DIV",
      "SDIV",
      "MOD",
      "SMOD",
      "EXP",
      "SIGNEXTEND",
      "LT",
      "GT",
      "SLT",
      "SGT",
      "EQ",
    ];
    for (const op of [...ops, "AND", "OR", "XOR", "BYTE", "SHL", "SHR", "SAR"]) {
      const groups: string[] = [];
      for (const a of EDGES)
        for (const b of [...EDGES, 0n, 1n, 6n, 25n, 52n, 53n, MAX]) groups.push(`${word(a)} ${word(b)} ${op}`);
      await same({ code: storeEach(groups), tx: { gasLimit: 10_000_000n } });
    }
    const unary = EDGES.flatMap((a) => [`${word(a)} ISZERO`, `${word(a)} NOT`, `${word(a)} 0x00 MSTORE 0x00 MLOAD`]);
    await same({ code: storeEach(unary) });
    // A slot keyed by a value at the edge is the same slot however the value was made.
    await same({ code: asm(`0x07 ${word(1n << 53n)} SSTORE 0x01 0x35 SHL SLOAD 0x00 SSTORE`) });
  });

  test("behavior: basic blocks: gas, errors and GAS inside a block are those of running opcode by opcode", async () => {
    // A truncated PUSH at the end runs into the implicit STOP.
    for (const code of ["7f", "60", "5b61", "600161"]) await same({ code, tx: { gasLimit: 100_000n } });
    // Every gas limit around the point where each program runs out: memory expansion (dynamic gas)
    // followed by a fault that is not about gas, SSTORE's stipend rule, GAS read mid-block.
    const programs = [
      "0x01 0x0400 MSTORE 0x01 0x00 0x00 RETURNDATACOPY",
      "0x01 0x0400 MSTORE 0x00 0x01 SSTORE GAS 0x02 SSTORE",
      "JUMPDEST 0x01 0x0200 MSTORE8 0x00 0x0300 MLOAD 0x05 JUMP",
      "0x20 0x00 0x00 CALLDATACOPY 0x40 0x00 KECCAK256 0x00 SSTORE ADD",
    ];
    for (const p of programs) {
      for (let gas = 21_000n; gas < 21_000n + 2_700n; gas += 23n) await same({ code: asm(p), tx: { gasLimit: gas } });
    }
    // A frame resumes after a call at a block that starts with JUMPDEST, and at one that does not.
    const dWord = `0x${hex(D)}`;
    await same({
      code: asm(`0x00 0x00 0x00 0x00 ${dWord} GAS STATICCALL JUMPDEST 0x00 SSTORE GAS 0x01 SSTORE`),
      accounts: [[D, { code: asm("0x01 0x00 MSTORE 0x20 0x00 RETURN") }]],
    });
    await same({
      code: asm(`0x00 0x00 0x00 0x00 ${dWord} GAS STATICCALL 0x00 SSTORE ADD`),
      accounts: [[D, { code: asm("0x01 0x00 MSTORE 0x20 0x00 RETURN") }]],
    });
  });

  test("behavior: gas limits above 2^53 (the frame's reserve): GAS, the 63/64 rule, stipends, returned gas and refunds are exact", async () => {
    const dWord = `0x${hex(D)}`;
    const programs = [
      // GAS read at the top, then a call with all of it, then GAS again after the gas came back.
      `GAS 0x00 SSTORE 0x00 0x00 0x00 0x00 0x00 ${dWord} GAS CALL POP GAS 0x01 SSTORE`,
      // A call with value (the stipend), and a creation taking all but 1/64.
      `0x00 0x00 0x00 0x00 0x01 ${dWord} GAS CALL POP 0x00 0x00 0x00 CREATE POP GAS 0x02 SSTORE`,
      // A refund (a slot cleared) and a revert in the callee.
      `0x00 0x05 SSTORE 0x00 0x00 0x00 0x00 0x00 ${dWord} GAS CALL 0x03 SSTORE`,
    ];
    const callee = asm("GAS 0x00 SSTORE 0x01 0x01 SSTORE 0x00 0x00 REVERT");
    for (const p of programs) {
      // Just above 2^53 a caller's reserve is all handed on and the gas coming back passes 2^53 again
      // (odd and even sums: a double would round one of them).
      const justAbove = [0n, 1n, 2n, 3n].map((k) => (1n << 53n) + (1n << 40n) + k);
      for (const gasLimit of [(1n << 53n) - 1n, ...justAbove, 1n << 60n, 0x7fe0000000000001n]) {
        const o = await same({
          code: asm(p),
          accounts: [
            [D, { code: callee }],
            [C, { code: asm(p), balance: 10n, storage: { "0x05": "0x01" } }],
          ],
          tx: { gasLimit, maxFeePerGas: 7n, maxPriorityFeePerGas: 0n },
          blockGasLimit: 1n << 63n,
        });
        expect(o.result?.success).toBeDefined();
      }
    }
  });

  test("error: geth's texts for exceptional halts", async () => {
    const texts: string[] = [];
    for (const p of [
      "0x03 JUMP",
      "ADD",
      `${"PUSH0 ".repeat(1025)}`,
      "INVALID",
      "0x01 0x00 0x00 RETURNDATACOPY",
      "0x00 0x00 REVERT",
    ]) {
      texts.push((await runWith(executeTx, { code: asm(p) })).result?.error ?? "");
    }
    texts.push((await runWith(executeTx, { code: "0c" })).result?.error ?? "");
    texts.push(
      (await runWith(executeTx, { code: asm("0x01 0x00 SSTORE"), tx: { gasLimit: 22_000n } })).result?.error ?? "",
    );
    expect(texts).toMatchInlineSnapshot(`
      [
        "invalid jump destination",
        "stack underflow (0 <=> 2)",
        "stack limit reached 1024 (1023)",
        "invalid opcode: INVALID",
        "return data out of bounds",
        "execution reverted",
        "invalid opcode: opcode 0xc not defined",
        "out of gas",
      ]
    `);
  });

  test("behavior: LOG0..LOG4", async () => {
    await same({
      code: asm(
        "0xaabbcc 0x00 MSTORE 0x03 0x1d LOG0 0x01 0x05 0x00 LOG1 0x02 0x01 0x00 0x00 LOG2 0x03 0x02 0x01 0x02 0x1e LOG3 0x04 0x03 0x02 0x01 0x20 0x40 LOG4",
      ),
    });
    // A reverted frame's logs are dropped; a static frame cannot log.
    const dWord = word(0xd0n | (0x10n << 152n));
    await same({
      code: asm(
        `0x00 0x00 LOG0 0x00 0x00 0x00 0x00 ${dWord} GAS STATICCALL 0x00 0x00 0x00 0x00 0x00 ${dWord} GAS CALL`,
      ),
      accounts: [[D, { code: asm("0x00 0x00 LOG0 0x00 0x00 REVERT") }]],
    });
  });

  test("behavior: CALL, CALLCODE, DELEGATECALL, STATICCALL: value, new accounts, return and revert data", async () => {
    const dWord = word(0xd0n | (0x10n << 152n));
    // D returns CALLER ‖ CALLVALUE ‖ ADDRESS and stores CALLVALUE in slot 9; reverts when calldata[0] != 0.
    const d = asm(
      "CALLVALUE 0x09 SSTORE CALLER 0x00 MSTORE CALLVALUE 0x20 MSTORE ADDRESS 0x40 MSTORE 0x00 CALLDATALOAD 0x1b JUMPI 0x60 0x00 RETURN JUMPDEST 0x40 0x00 REVERT",
    );
    for (const op of ["CALL", "CALLCODE"]) {
      await same({
        code: storeEach([
          `0x60 0x00 0x00 0x00 0x11 ${dWord} GAS ${op}`,
          "0x00 MLOAD",
          "0x20 MLOAD",
          "0x40 MLOAD",
          "RETURNDATASIZE",
          `0x01 0x00 MSTORE 0x60 0x00 0x20 0x00 0x00 ${dWord} GAS ${op}`,
          "RETURNDATASIZE",
          "0x20 0x00 0x00 RETURNDATACOPY 0x00 MLOAD",
          `0x00 0x00 0x00 0x00 0x05 0x123456 0xffff ${op}`,
          `0x00 0x00 0x00 0x00 0x00 0x123457 0xffff ${op}`,
          `0x00 0x00 0x00 0x00 ${word(10n ** 30n)} ${dWord} GAS ${op}`,
          "0x123456 BALANCE",
        ]),
        accounts: [[D, { code: d, balance: 3n }]],
      });
    }
    for (const op of ["DELEGATECALL", "STATICCALL"]) {
      await same({
        code: storeEach([
          `0x60 0x00 0x00 0x00 ${dWord} GAS ${op}`,
          "0x00 MLOAD",
          "0x20 MLOAD",
          "0x40 MLOAD",
          "RETURNDATASIZE",
          `0x00 0x00 0x00 0x00 0x123456 0xffff ${op}`,
        ]),
        accounts: [[D, { code: d }]],
        tx: { value: 77n },
      });
    }
  });

  test("behavior: the 63/64 rule, cold/warm call targets and call gas above what is left", async () => {
    const dWord = word(0xd0n | (0x10n << 152n));
    await same({
      code: storeEach([
        `0x00 0x00 0x00 0x00 0x00 ${dWord} ${word(MAX)} CALL`,
        `0x00 0x00 0x00 0x00 0x00 ${dWord} 0x1000 CALL`,
        `0x00 0x00 0x00 0x00 0x00 0x1234 0x00 CALL`,
        "GAS",
      ]),
      accounts: [[D, { code: asm("GAS 0x00 SSTORE") }]],
      tx: { accessList: [{ address: addr(0x99), storageKeys: [] }] },
    });
  });

  test("behavior: deep recursion to the 1024 call depth limit", async () => {
    // Each level counts itself in slot 0 and calls itself with all gas.
    await same({
      code: asm("PUSH0 SLOAD 0x01 ADD PUSH0 SSTORE PUSH0 PUSH0 PUSH0 PUSH0 PUSH0 ADDRESS GAS CALL"),
      tx: { gasLimit: 30_000_000n },
    });
  });

  test("behavior: CREATE and CREATE2: deploy, collision, revert data, 0xEF, code size, initcode size", async () => {
    const runtime = asm("0x2a 0x00 MSTORE 0x20 0x00 RETURN");
    const init = deployer(runtime);
    const mstoreInit = (code: string) => {
      const padded = code.padEnd(Math.ceil(code.length / 64) * 64, "0");
      const parts: string[] = [];
      for (let i = 0; i < padded.length / 64; i++)
        parts.push(`0x${padded.slice(i * 64, i * 64 + 64)} ${word(BigInt(i * 32))} MSTORE`);
      return parts.join(" ");
    };
    const len = `0x${(init.length / 2).toString(16).padStart(2, "0")}`;
    await same({
      code: storeEach([
        `${mstoreInit(init)} ${len} 0x00 0x05 CREATE`,
        "RETURNDATASIZE",
        `${len} 0x00 0x00 CREATE DUP1 EXTCODESIZE SWAP1 POP`,
        `0x77 ${len} 0x00 0x00 CREATE2`,
        `0x77 ${len} 0x00 0x00 CREATE2`,
        "RETURNDATASIZE",
      ]),
      tx: { gasLimit: 3_000_000n },
    });
    // Initcode that reverts with data, returns 0xEF…, returns too much code, halts.
    for (const body of [
      "0xdead 0x00 MSTORE 0x20 0x00 REVERT",
      "0xef 0x00 MSTORE8 0x01 0x00 RETURN",
      "0x6001 0x00 RETURN",
      "0x6000 0x00 RETURN",
      "INVALID",
    ]) {
      const ic = asm(body);
      const l = `0x${(ic.length / 2).toString(16).padStart(2, "0")}`;
      await same({
        code: storeEach([`${mstoreInit(ic)} ${l} 0x00 0x00 CREATE`, "RETURNDATASIZE", "0x00 MLOAD"]),
        tx: { gasLimit: 10_000_000n },
      });
    }
    await same({
      code: storeEach(["0xc001 0x00 0x00 CREATE", "0xc000 0x00 0x00 CREATE"]),
      tx: { gasLimit: 10_000_000n },
    });
  });

  test("behavior: creation transactions (success, revert, initcode gas, collision)", async () => {
    const runtime = asm("0x2a 0x00 MSTORE 0x20 0x00 RETURN");
    await same({ tx: { to: undefined, data: bytes(deployer(runtime)), gasLimit: 500_000n } });
    await same({ tx: { to: undefined, data: bytes(asm("0x00 0x00 REVERT")), gasLimit: 500_000n } });
    await same({ tx: { to: undefined, data: new Uint8Array(5000), gasLimit: 500_000n } });
    await same({ tx: { to: undefined, data: bytes(deployer(runtime)), gasLimit: 60_000n } });
  });

  test("behavior: SELFDESTRUCT per EIP-6780 (pre-existing and created in the same transaction)", async () => {
    const dWord = word(0xd0n | (0x10n << 152n));
    await same({
      code: storeEach([`0x00 0x00 0x00 0x00 0x00 ${dWord} GAS CALL`, `${dWord} BALANCE`, "0x4444 BALANCE"]),
      accounts: [[D, { code: asm("0x4444 SELFDESTRUCT"), balance: 500n, storage: { "0x01": "0x01" } }]],
    });
    await same({ code: asm("ADDRESS SELFDESTRUCT") });
    // Created in this transaction: the initcode self-destructs (to itself, then to another account).
    for (const body of ["ADDRESS SELFDESTRUCT", "0x4445 SELFDESTRUCT"]) {
      const ic = asm(body);
      const l = `0x${(ic.length / 2).toString(16).padStart(2, "0")}`;
      await same({
        code: storeEach([
          `${word(BigInt(`0x${ic}`) << BigInt(256 - (ic.length / 2) * 8))} 0x00 MSTORE ${l} 0x00 0x09 CREATE`,
          "0x4445 BALANCE",
        ]),
      });
    }
    await same({ code: asm("0x00 0x00 0x00 0x00 0x00 ADDRESS GAS STATICCALL PUSH0 SSTORE 0x01 SELFDESTRUCT") });
  });

  test("behavior: transaction types, value transfers, access lists and the coinbase (EIP-3651)", async () => {
    await same({ tx: { to: addr(0x55), value: 12345n } });
    await same({ tx: { to: addr(0x55), value: 0n } });
    await same({ tx: { type: 0, maxFeePerGas: 9n, maxPriorityFeePerGas: 9n }, code: asm("GASPRICE 0x00 SSTORE") });
    await same({
      tx: {
        type: 1,
        maxFeePerGas: 9n,
        maxPriorityFeePerGas: 9n,
        accessList: [
          { address: D, storageKeys: [bytes(word(1n)), bytes(word(2n))] },
          { address: C, storageKeys: [] },
        ],
      },
      code: asm(`${word(0xcbn | (0x10n << 152n))} BALANCE ${word(0xd0n | (0x10n << 152n))} BALANCE ADD 0x00 SSTORE`),
    });
    await same({ tx: { data: bytes("00ff00ff0000aa") }, code: asm("CALLDATASIZE 0x00 SSTORE") });
  });

  test("behavior: invalid transactions change nothing", async () => {
    for (const tx of [
      { nonce: 2n },
      { nonce: 4n },
      { gasLimit: 20_000n },
      { maxFeePerGas: 6n, maxPriorityFeePerGas: 1n },
      { maxPriorityFeePerGas: 11n },
      { value: 10n ** 25n },
      { gasLimit: 40_000_000n },
    ] satisfies Partial<EngineTx>[]) {
      await same({ code: asm("STOP"), tx });
    }
  });

  test("behavior: Prague: EIP-7623 calldata floor and the same programs", async () => {
    await same({ fork: "prague", tx: { data: new Uint8Array(2000).fill(1), gasLimit: 200_000n }, code: asm("STOP") });
    await same({ fork: "prague", tx: { data: new Uint8Array(100).fill(1) }, code: asm("0x01 0x00 SSTORE") });
    await same({ fork: "prague", tx: { to: undefined, data: bytes(deployer(asm("STOP"))) } });
  });
});
