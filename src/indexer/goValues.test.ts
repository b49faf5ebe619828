import { describe, expect, test } from "vitest";
import { TxHashQueryError } from "./errors.js";
import { compareGoNumber, decodeGoHex, goNumberToInt64, goTrimSpace, parseGoNumber } from "./goValues.js";

const num = (s: string) => {
  const n = parseGoNumber(s);
  if (n === undefined) throw new TxHashQueryError(`test input ${s} is not a number`);
  return n;
};

describe("parseGoNumber (big.Int SetString, else big.ParseFloat at 125 bits)", () => {
  test.each([
    ["10", "10"],
    ["-3", "-3"],
    ["+5", "5"],
    ["007", "7"],
    ["2.5", "2.5"],
    ["1e3", "1000"],
    ["1E-2", "0.01"],
    ["1p3", "8"],
    [".5", "0.5"],
    ["5.", "5"],
    ["-0", "0"],
  ])("default: %s equals %s", (text, same) => {
    expect(compareGoNumber(num(text), num(same))).toBe(0);
  });

  test.each(["", ".", "8stake", "0x10", "1_000", " 7", "1e", "NaN", "--1", "1.2.3", "e5"])(
    "error: %j is not a number",
    (text) => {
      expect(parseGoNumber(text)).toBeUndefined();
    },
  );

  test("default: order, signs and infinities", () => {
    const ordered = ["-Inf", "-3", "-0.5", "0", "2.5", "10", "123456789012345678901234567890", "+Inf"].map(num);
    for (let i = 0; i + 1 < ordered.length; i++) {
      expect(compareGoNumber(ordered[i] ?? num("0"), ordered[i + 1] ?? num("0"))).toBe(-1);
      expect(compareGoNumber(ordered[i + 1] ?? num("0"), ordered[i] ?? num("0"))).toBe(1);
    }
    expect(compareGoNumber(num("-0"), num("0"))).toBe(0);
    expect(compareGoNumber(num("inf"), num("Inf"))).toBe(0);
  });

  test("behavior: decimals round to 125 bits, integers stay exact", () => {
    expect(compareGoNumber(num("100.0000000000000000000000000000000000000001"), num("100"))).toBe(0);
    expect(compareGoNumber(num("100.00000000000000000000000000001"), num("100"))).toBe(1);
    expect(
      compareGoNumber(
        num("100000000000000000000000000000000000000001"),
        num("100000000000000000000000000000000000000000"),
      ),
    ).toBe(1);
  });
});

describe("goNumberToInt64 (big.Float Int64)", () => {
  test.each([
    ["5.7", 5n],
    ["-5.7", -5n],
    ["42", 42n],
    ["Inf", (1n << 63n) - 1n],
    ["-Inf", -(1n << 63n)],
    ["1180591620717411303424", (1n << 63n) - 1n],
  ])("default: %s → %s", (text, want) => {
    expect(goNumberToInt64(num(text))).toBe(want);
  });
});

describe("goTrimSpace (bytes.TrimSpace)", () => {
  test("default: Unicode white space at both ends", () => {
    expect(goTrimSpace(" \t7\u00a0\u3000")).toBe("7");
    expect(goTrimSpace("a b")).toBe("a b");
  });
  test("behavior: U+FEFF is not white space in Go", () => {
    expect(goTrimSpace("\ufeff7")).toBe("\ufeff7");
  });
});

describe("decodeGoHex (hex.DecodeString)", () => {
  test("default: either case", () => {
    expect([...decodeGoHex("0aFF")]).toEqual([10, 255]);
    expect(decodeGoHex("")).toEqual(new Uint8Array(0));
  });
  test.each([
    ["XYZW", "invalid byte: U+0058 'X'"],
    ["AX", "invalid byte: U+0058 'X'"],
    ["ABC", "odd length hex string"],
    ["ABX", "invalid byte: U+0058 'X'"],
    ["é0", "invalid byte: U+00C3 'Ã'"],
    ["0\u0001", "invalid byte: U+0001"],
  ])("error: %j → %s", (text, problem) => {
    expect(() => decodeGoHex(text)).toThrow(`error during searching for a hash in the query: encoding/hex: ${problem}`);
  });
});
