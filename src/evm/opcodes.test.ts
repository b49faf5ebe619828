import { describe, expect, test } from "vitest";
import { OP_GAS, OP_MAX_STACK, OP_MIN_STACK, OPCODES } from "./opcodes.js";

describe("the opcode table", () => {
  test("default: every Cancun/Prague opcode is defined once, the rest are undefined", () => {
    const defined = OPCODES.map((o, i) => [i, o.name] as const).filter(([, name]) => !name.startsWith("0x"));
    expect(defined.length).toBe(149);
    expect(new Set(defined.map(([, n]) => n)).size).toBe(149);
    for (const name of ["PUSH0", "MCOPY", "TLOAD", "TSTORE", "BLOBHASH", "BLOBBASEFEE", "BASEFEE", "SELFBALANCE"]) {
      expect(defined.some(([, n]) => n === name)).toBe(true);
    }
    expect(OPCODES[0x0c]?.name).toBe("0x0c");
    expect(OPCODES[0xef]?.name).toBe("0xef");
  });

  test("default: static gas and stack bounds of a few entries", () => {
    expect([OP_GAS[0x01], OP_GAS[0x02], OP_GAS[0x08], OP_GAS[0x5b], OP_GAS[0x5f], OP_GAS[0xa2], OP_GAS[0xff]]).toEqual([
      3, 5, 8, 1, 2, 1125, 5000,
    ]);
    expect([OP_MIN_STACK[0x8f], OP_MIN_STACK[0x9f], OP_MIN_STACK[0xf1], OP_MIN_STACK[0xf4]]).toEqual([16, 17, 7, 6]);
    // DUP16 needs room for one more item; SWAP and POP never overflow.
    expect([OP_MAX_STACK[0x8f], OP_MAX_STACK[0x9f], OP_MAX_STACK[0x50]]).toEqual([1023, 1024, 1025]);
  });
});
