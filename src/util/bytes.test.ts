import { describe, expect, test } from "vitest";
import { u32be, u64be } from "../app/evm/records.js";
import { storageKey } from "../app/evm/stateDb.js";
import { encodeU64, partKey } from "../store/keys.js";
import { bytesToBase64, bytesToHex, bytesToUtf8 } from "./bytes.js";

/** The documented way, which the encoders must agree with. */
const viaBuffer = (b: Uint8Array, enc: "hex" | "base64" | "utf8") =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString(enc);

describe("byte encoders and fixed-width keys", () => {
  test("behavior: hex, base64 and utf8 of fresh small arrays, subarrays at an offset and large arrays match Buffer's", () => {
    const big = new Uint8Array(300).map((_, i) => (i * 37 + 11) & 0xff);
    const cases = [
      new Uint8Array(0),
      new Uint8Array([0, 255, 16]),
      new Uint8Array(20).fill(0xab),
      big.subarray(7, 39),
      big,
    ];
    for (const b of cases) {
      expect(bytesToHex(b)).toBe(viaBuffer(b, "hex"));
      expect(bytesToBase64(b)).toBe(viaBuffer(b, "base64"));
    }
    const text = new TextEncoder().encode("xx héllo ✓");
    expect(bytesToUtf8(text.subarray(3))).toBe("héllo ✓");
  });

  test("behavior: integer keys are big-endian at every width, written byte by byte", () => {
    expect(bytesToHex(u32be(0x01020304))).toBe("01020304");
    expect(bytesToHex(u32be(0xffffffff))).toBe("ffffffff");
    expect(bytesToHex(u64be(0))).toBe("0000000000000000");
    expect(bytesToHex(u64be(2 ** 53 - 1))).toBe("001fffffffffffff");
    expect(bytesToHex(u64be(0x0102030405060708n))).toBe("0102030405060708");
    expect(bytesToHex(u64be(0xffffffffffffffffn))).toBe("ffffffffffffffff");
    expect(bytesToHex(encodeU64(4_294_967_296))).toBe("0000000100000000");
    expect(bytesToHex(partKey(258, 0x0a0b0c0d)).slice(2)).toBe("00000000000001020a0b0c0d");
    const key = storageKey(new Uint8Array(20).fill(1), 0x01020304, new Uint8Array(32).fill(2));
    expect(bytesToHex(key)).toBe(`${"01".repeat(20)}01020304${"02".repeat(32)}`);
  });
});
