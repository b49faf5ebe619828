import { describe, expect, test } from "vitest";
import { formatGoDuration, parseGoDuration } from "./duration.js";

describe("go durations", () => {
  const cases: [string, bigint][] = [
    ["0", 0n],
    ["0s", 0n],
    ["3s", 3_000_000_000n],
    ["500ms", 500_000_000n],
    ["1m0s", 60_000_000_000n],
    ["168h0m0s", 168n * 3_600_000_000_000n],
    ["1.5s", 1_500_000_000n],
    ["2h45m", 9_900_000_000_000n],
    ["100us", 100_000n],
    ["100µs", 100_000n],
    ["7ns", 7n],
    ["-1s", -1_000_000_000n],
    [".5s", 500_000_000n],
  ];
  for (const [text, ns] of cases) {
    test(`default: parses ${text}`, () => {
      expect(parseGoDuration(text)).toBe(ns);
    });
  }

  for (const bad of ["", "3", "s", "3 s", "3seconds", "1.2.3s", "--1s", "1d"]) {
    test(`error: refuses ${JSON.stringify(bad)}`, () => {
      expect(parseGoDuration(bad)).toBeUndefined();
    });
  }

  const formats: [bigint, string][] = [
    [0n, "0s"],
    [500_000_000n, "500ms"],
    [1_000_000_000n, "1s"],
    [1_500_000_000n, "1.5s"],
    [60_000_000_000n, "1m0s"],
    [120_000_000_000n, "2m0s"],
    [168n * 3_600_000_000_000n, "168h0m0s"],
    [1_500n, "1.5µs"],
    [7n, "7ns"],
    [-3_000_000_000n, "-3s"],
  ];
  for (const [ns, text] of formats) {
    test(`default: formats ${ns} as ${text}`, () => {
      expect(formatGoDuration(ns)).toBe(text);
      expect(parseGoDuration(text)).toBe(ns);
    });
  }
});
