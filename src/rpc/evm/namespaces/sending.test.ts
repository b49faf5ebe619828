import { describe, expect, test } from "vitest";
import { formatGoDurationMs } from "./sending.js";

describe("formatGoDurationMs", () => {
  test.each([
    [0, "0ms"],
    [300, "300ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [1250, "1.25s"],
    [20_000, "20s"],
    [60_000, "1m0s"],
    [90_500, "1m30.5s"],
  ])("default: %d ms is Go's %s", (ms, text) => {
    expect(formatGoDurationMs(ms)).toBe(text);
  });
});
