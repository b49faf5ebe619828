import { describe, expect, test } from "vitest";
import { bytesToHex } from "../util/bytes.js";
import { encodeU64, partKey, readU64 } from "./keys.js";

describe("block store keys", () => {
  test("behavior: heights and part indexes are big-endian, written byte by byte", () => {
    expect(bytesToHex(encodeU64(4_294_967_296))).toBe("0000000100000000");
    expect(bytesToHex(encodeU64(2 ** 53 - 1))).toBe("001fffffffffffff");
    expect(readU64(encodeU64(123_456_789_012), 0)).toBe(123_456_789_012);
    expect(bytesToHex(partKey(258, 0x0a0b0c0d)).slice(2)).toBe("00000000000001020a0b0c0d");
  });
});
