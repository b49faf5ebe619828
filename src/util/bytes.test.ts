import { describe, expect, test } from "vitest";
import { bytesToBase64, bytesToHex, bytesToUtf8 } from "./bytes.js";

/** The documented way, which the encoders must agree with. */
const viaBuffer = (b: Uint8Array, enc: "hex" | "base64" | "utf8") =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString(enc);

describe("byte encoders", () => {
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
});
