import { describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { u32be, u64be } from "./records.js";
import { storageKey } from "./stateDb.js";

describe("fixed-width keys", () => {
  test("behavior: integers and storage keys are big-endian at every width, written byte by byte", () => {
    expect(bytesToHex(u32be(0x01020304))).toBe("01020304");
    expect(bytesToHex(u32be(0xffffffff))).toBe("ffffffff");
    expect(bytesToHex(u64be(0))).toBe("0000000000000000");
    expect(bytesToHex(u64be(2 ** 53 - 1))).toBe("001fffffffffffff");
    expect(bytesToHex(u64be(0x0102030405060708n))).toBe("0102030405060708");
    expect(bytesToHex(u64be(0xffffffffffffffffn))).toBe("ffffffffffffffff");
    const key = storageKey(new Uint8Array(20).fill(1), 0x01020304, new Uint8Array(32).fill(2));
    expect(bytesToHex(key)).toBe(`${"01".repeat(20)}01020304${"02".repeat(32)}`);
  });
});
