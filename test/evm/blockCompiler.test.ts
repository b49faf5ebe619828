import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import { blockCompileThreshold, setBlockCompileThreshold } from "../../src/evm/index.js";
import { executeTx } from "../../src/evm/transaction.js";
import type { BlockEnv, EngineTx, TxResult } from "../../src/evm/types.js";
import { assemble } from "./randomPrograms.js";
import { createReferenceExecutor } from "./referenceExecutor.js";
import { type Executor, MemoryStateReader } from "./stateTests.js";

/**
 * Compiled blocks (src/evm/blockCompiler.ts) against @ethereumjs/evm: programs whose blocks start at a
 * JUMPDEST, run with every block compiled at its first entry, on each opcode the compiler takes, the
 * word edges, a block that reads deep below its entry height, memory that grows inside a compiled block
 * and KECCAK256 there (dynamic gas charged in the block, at gas limits where it runs short), loops, and
 * gas running out in a loop of compiled blocks.
 */

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ""), "hex"));
const addr = (n: number): Uint8Array => {
  const a = new Uint8Array(20);
  a[0] = 0x10;
  a[19] = n;
  return a;
};
const SENDER = addr(0x5e);
const C = addr(0xc0);

const BLOCK: BlockEnv = {
  number: 300n,
  timestamp: 1_700_000_000n,
  coinbase: addr(0xcb),
  gasLimit: 30_000_000n,
  baseFee: 7n,
  prevRandao: new Uint8Array(32).fill(0x42),
  blobBaseFee: 3n,
  chainId: 262144n,
  blockHash: () => new Uint8Array(32).fill(0xbb),
};

interface Outcome {
  success: boolean;
  gasUsed: bigint;
  returnData: string;
  error: string;
}

async function run(ex: Executor, code: string, data = "", gasLimit = 5_000_000n): Promise<Outcome> {
  const pre = new MemoryStateReader();
  pre.put(SENDER, { nonce: 0n, balance: 10n ** 24n, code: new Uint8Array() });
  pre.put(C, { nonce: 1n, balance: 1000n, code: bytes(code) });
  const tx: EngineTx = {
    type: 2,
    from: SENDER,
    to: C,
    nonce: 0n,
    gasLimit,
    value: 5n,
    data: bytes(data),
    maxFeePerGas: 10n,
    maxPriorityFeePerGas: 2n,
    accessList: [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList: [],
  };
  const r: TxResult = await ex(new OverlayStateManager(pre), tx, BLOCK, "prague");
  // The reference's error texts are ethereumjs' own; success, gas and output are what must agree.
  return { success: r.success, gasUsed: r.gasUsed, returnData: hex(r.returnData), error: r.success ? "" : "failed" };
}

let reference: Executor;
let before: number;
beforeAll(async () => {
  reference = await createReferenceExecutor();
  before = blockCompileThreshold();
  setBlockCompileThreshold(1);
});
afterAll(() => setBlockCompileThreshold(before));

async function same(code: string, data = "", gasLimit = 5_000_000n): Promise<Outcome> {
  const mine = await run(executeTx, code, data, gasLimit);
  expect(mine).toEqual(await run(reference, code, data, gasLimit));
  return mine;
}

const EDGES = [
  0n,
  1n,
  2n,
  7n,
  31n,
  32n,
  255n,
  256n,
  2n ** 31n - 1n,
  2n ** 31n,
  2n ** 32n,
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 64n + 3n,
  2n ** 255n,
  2n ** 256n - 1n,
  2n ** 256n - 2n ** 53n,
  0x1234567890abcdef1234567890abcdef1234567890abcdefn,
];
const push = (v: bigint): string => `PUSH32 0x${v.toString(16).padStart(64, "0")}`;

/**
 * A program that grows memory to `slots` words, jumps to a JUMPDEST, and there runs `body` (one block),
 * then returns the memory.
 */
function program(body: string[], slots: number): string {
  const size = `0x${(slots * 32).toString(16).padStart(4, "0")}`;
  // PUSH2 size MLOAD POP PUSH1 0x09 JUMP INVALID JUMPDEST: the block starts at pc 9.
  const head = assemble(`PUSH2 ${size} MLOAD POP PUSH1 0x09 JUMP INVALID JUMPDEST`);
  if (head.slice(18, 20) !== "5b") throw new RangeError("the JUMPDEST is not at pc 9");
  return `${head}${assemble(`${body.join(" ")} PUSH2 ${size} PUSH0 RETURN`)}`;
}

describe("compiled blocks agree with the reference", () => {
  const binaries = [
    "ADD",
    "MUL",
    "SUB",
    "DIV",
    "SDIV",
    "MOD",
    "SMOD",
    "SIGNEXTEND",
    "LT",
    "GT",
    "SLT",
    "SGT",
    "EQ",
    "AND",
    "OR",
    "XOR",
    "BYTE",
    "SHL",
    "SHR",
    "SAR",
  ];
  for (const op of binaries) {
    test(`${op} on the word edges`, async () => {
      const body: string[] = [];
      let slot = 0;
      for (const a of EDGES) {
        for (const b of EDGES) {
          body.push(`${push(b)} ${push(a)} ${op} PUSH2 0x${(slot * 32).toString(16).padStart(4, "0")} MSTORE`);
          slot++;
          // A new block every 40 pairs, so that none is longer than one compiled function takes.
          if (slot % 40 === 0) body.push("JUMPDEST");
        }
      }
      const out = await same(program(body, slot), "");
      expect(out.success).toBe(true);
    });
  }

  test("ADDMOD, MULMOD, ISZERO and NOT on the word edges", async () => {
    const body: string[] = [];
    let slot = 0;
    const store = () =>
      `PUSH2 0x${(slot++ * 32).toString(16).padStart(4, "0")} MSTORE${slot % 40 === 0 ? " JUMPDEST" : ""}`;
    for (const a of EDGES) {
      body.push(`${push(a)} ISZERO ${store()}`, `${push(a)} NOT ${store()}`);
      for (const b of EDGES.slice(0, 9)) {
        for (const n of [0n, 7n, 2n ** 53n, 2n ** 256n - 1n]) {
          body.push(`${push(n)} ${push(b)} ${push(a)} ADDMOD ${store()}`);
          body.push(`${push(n)} ${push(b)} ${push(a)} MULMOD ${store()}`);
        }
      }
    }
    expect((await same(program(body, slot))).success).toBe(true);
  });

  test("DUP16 and SWAP16 reach below the block's entry height; POP; the stack left behind is the loop's", async () => {
    // 17 values pushed before the jump, read and reordered inside the block, then all stored.
    const pre = Array.from({ length: 17 }, (_, i) => `PUSH1 0x${(i + 1).toString(16).padStart(2, "0")}`).join(" ");
    const body = "DUP16 SWAP16 POP DUP3 SWAP2 ADD SWAP15 MUL SWAP1 POP DUP1 SWAP3";
    const stores = Array.from({ length: 16 }, (_, i) => `PUSH2 0x${(i * 32).toString(16).padStart(4, "0")} MSTORE`);
    const code = assemble(
      `${pre} PUSH2 0x0220 MLOAD POP PUSH1 0x2a JUMP JUMPDEST ${body} ${stores.join(" ")} PUSH2 0x0220 PUSH0 RETURN`,
    );
    // The JUMPDEST's pc: 17 × 2 + 3 + 1 + 1 + 2 + 1 = 42 = 0x2a.
    expect(code.slice(84, 86)).toBe("5b");
    expect((await same(code)).success).toBe(true);
  });

  test("CALLDATALOAD, CALLDATASIZE, CALLVALUE, ADDRESS, CALLER, CODESIZE, RETURNDATASIZE, PC, MSIZE, MSTORE8", async () => {
    const body = [
      "PUSH0 CALLDATALOAD PUSH2 0x0000 MSTORE",
      "PUSH1 0x05 CALLDATALOAD PUSH2 0x0020 MSTORE",
      `${push(2n ** 200n)} CALLDATALOAD PUSH2 0x0040 MSTORE`,
      "CALLDATASIZE PUSH2 0x0060 MSTORE",
      "CALLVALUE PUSH2 0x0080 MSTORE",
      "ADDRESS PUSH2 0x00a0 MSTORE",
      "CALLER PUSH2 0x00c0 MSTORE",
      "PUSH1 0x44 MLOAD PUSH2 0x00e0 MSTORE",
      "CODESIZE PUSH2 0x0100 MSTORE",
      "RETURNDATASIZE PUSH2 0x0120 MSTORE",
      "PC PUSH2 0x0140 MSTORE",
      "MSIZE PUSH2 0x0160 MSTORE",
      `${push(2n ** 256n - 2n)} PUSH2 0x0181 MSTORE8 PUSH2 0x1234 PUSH2 0x0182 MSTORE8 PUSH1 0x07 PUSH2 0x01ff MSTORE8`,
    ];
    const data = `${"ab".repeat(40)}`;
    expect((await same(program(body, 16), data)).success).toBe(true);
  });

  test("memory that grows inside a compiled block is charged there, at every gas limit near the end", async () => {
    // Loops of 40 rounds, each touching words past the end of memory: an MSTORE then an MLOAD that grow
    // it, and an MLOAD alone; then the memory is returned.
    for (const body of [
      "DUP1 DUP1 PUSH1 0x40 MUL MSTORE DUP1 PUSH1 0x40 MUL PUSH1 0x20 ADD MLOAD POP",
      "DUP1 PUSH1 0x40 MUL MLOAD POP DUP1 DUP1 PUSH1 0x20 MUL MSTORE",
      "DUP1 DUP1 PUSH1 0x21 MUL MSTORE8 MSIZE POP",
    ]) {
      const loop = assemble(
        `PUSH0 JUMPDEST ${body} PUSH1 0x01 ADD DUP1 PUSH1 0x28 GT PUSH1 0x01 JUMPI PUSH2 0x0a00 PUSH0 RETURN`,
      );
      const full = await same(loop);
      expect(full.success).toBe(true);
      // The last rounds' growth leaves less than the rest of their block, or cannot be paid.
      for (let less = 1n; less <= 40n; less++) await same(loop, "", full.gasUsed - less);
    }
    // A JUMPDEST right after the access that grows memory: the block it starts is charged by itself.
    const next = labelled(
      "PUSH0 loop: DUP1 DUP1 PUSH1 0x40 MUL MSTORE next: PUSH1 0x01 ADD DUP1 PUSH1 0x28 GT @loop JUMPI PUSH2 0x0a00 PUSH0 RETURN",
    );
    expect((await same(next)).success).toBe(true);
  });

  test("KECCAK256 in a compiled block: a hash chain growing memory, mapping keys, empty input; gas short", async () => {
    // 30 rounds of h = keccak256(h, i) at the free memory pointer (0x40), which moves 64 bytes a round (the
    // memory grows inside the block); then keccak256 of an address-like key and a slot (the memo's
    // inputs) and of no bytes at a huge offset; the hash is returned.
    const chain = labelled(`PUSH1 0x80 PUSH1 0x40 MSTORE PUSH0 PUSH0
      loop: PUSH1 0x40 MLOAD DUP1 DUP4 SWAP1 MSTORE DUP1 PUSH1 0x20 ADD DUP3 SWAP1 MSTORE PUSH1 0x40 DUP2 KECCAK256
        SWAP1 PUSH1 0x40 ADD PUSH1 0x40 MSTORE SWAP2 POP PUSH1 0x01 ADD DUP1 PUSH1 0x1e GT @loop JUMPI
      POP PUSH20 0x00000000000000000000000000000000000000aa PUSH0 MSTORE PUSH1 0x03 PUSH1 0x20 MSTORE
        PUSH1 0x40 PUSH0 KECCAK256 XOR ${push(2n ** 255n)} PUSH0 SWAP1 KECCAK256 XOR PUSH0 MSTORE PUSH1 0x20 PUSH0 RETURN`);
    const full = await same(chain);
    expect(full.success).toBe(true);
    expect(full.returnData).not.toBe("0".repeat(64));
    for (let less = 1n; less <= 60n; less++) await same(chain, "", full.gasUsed - less);
    for (const less of [100n, 500n, 2000n]) await same(chain, "", full.gasUsed - less);
  });

  test("an endless loop compiled into one function (a jump back to its start) runs out of gas", async () => {
    // JUMPDEST at 0, a body, then a JUMP, or a JUMPI always taken, back to 0: the function goes round
    // inside itself and must check and charge each round as the loop does.
    for (const code of [
      assemble("JUMPDEST PUSH1 0x01 PUSH1 0x02 ADD POP PUSH1 0x00 JUMP"),
      assemble("JUMPDEST PUSH1 0x01 PUSH1 0x02 ADD POP PUSH1 0x01 PUSH1 0x00 JUMPI"),
    ]) {
      for (const gas of [30_000n, 100_000n, 100_003n]) {
        const out = await same(code, "", gas);
        expect(out.success).toBe(false);
        expect(out.gasUsed).toBe(gas);
      }
    }
  });

  test("a loop of 2 500 rounds on 256-bit words (acc = acc * 7 + 3), the argument from calldata", async () => {
    const loop = `60003561${"09c4"}5b90600702600301906001900380600657505f5260205ff3`;
    const out = await same(loop, (2n ** 250n + 12345n).toString(16).padStart(64, "0"));
    expect(out.success).toBe(true);
    expect(out.returnData).not.toBe("0".repeat(64));
  });

  test("a jump from a compiled block to a byte that is no JUMPDEST fails the frame, taken or not", async () => {
    // Counts down from 30; at 20 the JUMPI's destination becomes 3 (PUSH data, not a JUMPDEST).
    const loop = assemble(
      "PUSH1 0x1e JUMPDEST PUSH1 0x01 SWAP1 SUB DUP1 PUSH1 0x14 EQ PUSH1 0x02 MUL PUSH1 0x02 ADD DUP2 SWAP1 JUMPI PUSH0 PUSH0 RETURN",
    );
    expect((await same(loop)).success).toBe(false);
    // JUMP to a computed destination: valid for 10 rounds, then one past the end of the code.
    const jump = assemble(
      "PUSH1 0x0a JUMPDEST PUSH1 0x01 SWAP1 SUB DUP1 ISZERO PUSH1 0x40 MUL PUSH1 0x02 ADD JUMP PUSH0 PUSH0 RETURN",
    );
    expect((await same(jump)).success).toBe(false);
    // Destinations pushed in the block itself (checked when the block is compiled): PUSH data, past the
    // end, and a JUMPI not taken to such a destination (no failure).
    for (const tail of [
      "PUSH1 0x01 PUSH1 0x0b JUMPI",
      "PUSH1 0x01 PUSH1 0xf0 JUMPI",
      "PUSH1 0x0b JUMP",
      "PUSH0 PUSH1 0x0b JUMPI PUSH1 0x20 PUSH0 RETURN",
    ]) {
      const code = assemble(`PUSH1 0x03 JUMP JUMPDEST PUSH1 0x05 PUSH1 0x06 ADD POP PUSH2 0x5b5b POP ${tail}`);
      await same(code);
    }
  });

  test("gas running out in a loop of compiled blocks fails the same way, at every gas limit around it", async () => {
    const loop = `60003561${"09c4"}5b90600702600301906001900380600657505f5260205ff3`;
    const data = "07".padStart(64, "0");
    const full = await same(loop, data);
    for (const less of [1n, 2n, 3n, 7n, 100n, 1000n, 50_000n]) {
      const out = await same(loop, data, full.gasUsed - less);
      expect(out.success).toBe(false);
    }
  });

  test("an internal call in a loop, compiled at the first and at the third entry, at gas limits across the run", async () => {
    // Twelve rounds of acc = fn(acc + counter) through a Solidity-style internal call (return address
    // pushed, JUMP to the function, JUMP back), fn branching on the sign of a 256-bit product (a JUMPI
    // followed by a JUMPDEST on one side): the blocks after JUMPIs not taken run compiled too.
    const code = labelled(`PUSH1 0x05 PUSH1 0x0c
      loop: @ret DUP3 DUP3 ADD @fn JUMP
      ret: SWAP2 POP PUSH1 0x01 SWAP1 SUB DUP1 ISZERO @end JUMPI @loop JUMP
      fn: ${push(2n ** 255n + 12345n)} MUL PUSH1 0x07 ADD DUP1 PUSH1 0xff SHR ISZERO @skip JUMPI
      mid: PUSH1 0x03 SWAP1 SDIV
      skip: SWAP1 JUMP
      end: POP PUSH0 MSTORE PUSH1 0x20 PUSH0 RETURN`);
    for (const threshold of [1, 3]) {
      setBlockCompileThreshold(threshold);
      try {
        const full = await same(code);
        expect(full.success).toBe(true);
        // Gas running out in every block of the rounds (the intrinsic 21 000 first).
        const body = Number(full.gasUsed) - 21_000;
        for (let k = 1; k <= 12; k++) {
          await same(code, "", full.gasUsed - BigInt(Math.ceil((body * k) / 13)));
        }
        for (const less of [1n, 3n, 8n]) await same(code, "", full.gasUsed - less);
      } finally {
        setBlockCompileThreshold(1);
      }
    }
  });

  test("compiled blocks whose stack would overflow or underflow are left to the loop, which fails", async () => {
    for (const code of [
      labelled("PUSH0 @a JUMP a: PUSH1 0x01 @b JUMP b: PUSH1 0x02 @a JUMP"),
      labelled(`${"PUSH0 ".repeat(40)} @a JUMP a: POP @b JUMP b: POP POP @a JUMP`),
      // The block that would underflow ends in RETURN: unchecked, it would return.
      labelled("PUSH0 PUSH0 PUSH0 @a JUMP a: POP @b JUMP b: POP POP POP PUSH0 PUSH0 RETURN"),
    ]) {
      expect((await same(code)).success).toBe(false);
    }
  });
});

/** assemble() with labels: `name:` is a JUMPDEST there, `@name` a PUSH1 of its pc. */
function labelled(src: string): string {
  const words = src.trim().split(/\s+/);
  const at = new Map<string, number>();
  let sized = "";
  for (const w of words) {
    if (w.endsWith(":")) at.set(w.slice(0, -1), sized === "" ? 0 : assemble(sized).length / 2);
    sized += w.endsWith(":") ? " JUMPDEST" : w.startsWith("@") ? " PUSH1 0x00" : ` ${w}`;
  }
  const pcOf = (name: string): string => {
    const pc = at.get(name);
    if (pc === undefined || pc > 255) throw new RangeError(`label ${name}`);
    return `PUSH1 0x${pc.toString(16).padStart(2, "0")}`;
  };
  return assemble(
    words.map((w) => (w.endsWith(":") ? "JUMPDEST" : w.startsWith("@") ? pcOf(w.slice(1)) : w)).join(" "),
  );
}
