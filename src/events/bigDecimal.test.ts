import { describe, expect, test } from "vitest";
import { binaryFloatFromDecimal, compareBinaryFloat, parseArgumentNumber, parseAttributeNumber } from "./bigDecimal.js";

// Expected mantissas computed independently with Python's fractions.Fraction (125 bits, half to even).
const ROUNDED: [string, string, number][] = [
  ["0.1", "34028236692093846346337460743176821146", -128],
  ["8.045", "21387278452179296395022255599910744228", -121],
  ["3.5", "37218383881977644441306597687849648128", -123],
  ["99999999999999999999.10", "28823037615171174399740592661463459430", -58],
  ["18446744073709551615.6", "42535295865117307931999488725285548851", -61],
  ["123456789012345678901234567890123456789012.5", "30140817629967206762996720676299672068", 12],
  ["0.000000000000000000000000000000000000000000000001", "31082702275611665134711390509176302506", -284],
];

describe("binaryFloatFromDecimal", () => {
  test.each(ROUNDED)("default: %s", (text, mant, exp) => {
    const [i = "", f = ""] = text.split(".");
    expect(binaryFloatFromDecimal(i, f)).toEqual({ mant: BigInt(mant), exp });
  });
});

describe("numbers", () => {
  test("behavior: integers are exact, prefixes are used, signs are not numbers", () => {
    expect(parseAttributeNumber("18446744073709551617")).toEqual({ mant: 18446744073709551617n, exp: 0 });
    expect(parseAttributeNumber("8stake")).toEqual(binaryFloatFromDecimal("8", ""));
    expect(parseAttributeNumber("-1")).toBeUndefined();
    expect(parseAttributeNumber("x1")).toBeUndefined();
    expect(compareBinaryFloat(parseArgumentNumber("0"), parseArgumentNumber("0.0"))).toBe(0);
    expect(compareBinaryFloat(parseArgumentNumber("2"), parseArgumentNumber("10"))).toBe(-1);
    expect(compareBinaryFloat(parseArgumentNumber("10.5"), parseArgumentNumber("10"))).toBe(1);
  });
});
