import { describe, expect, test } from "vitest";
import { BitArray, InvalidBitArrayError } from "./index.js";

const ba = (s: string) => BitArray.fromCompactString(s);

describe("BitArray", () => {
  test("default: set, get, counts", () => {
    const b = new BitArray(5);
    expect(b.isEmpty()).toBe(true);
    expect(b.set(1, true)).toBe(true);
    expect(b.set(4, true)).toBe(true);
    expect(b.set(5, true)).toBe(false);
    expect(b.get(1)).toBe(true);
    expect(b.get(2)).toBe(false);
    expect(b.trueCount()).toBe(2);
    expect(b.trueIndices()).toEqual([1, 4]);
    expect(b.toCompactString()).toBe("_x__x");
    expect(b.toString()).toBe("BA{5:_x__x}");
    expect(new BitArray(0).toString()).toBe("nil-BitArray");
    expect(ba("xxx").isFull()).toBe(true);
  });

  test("behavior: or/and/not/sub follow Go's size rules", () => {
    expect(ba("x_x").or(ba("_x___")).toCompactString()).toBe("xxx__");
    expect(ba("x_x").and(ba("xx___")).toCompactString()).toBe("x__");
    expect(ba("x_x").not().toCompactString()).toBe("_x_");
    expect(ba("xxxx").sub(ba("_x")).toCompactString()).toBe("x_xx");
    const c = ba("x_");
    const d = c.copy();
    d.set(1, true);
    expect(c.toCompactString()).toBe("x_");
  });

  test("behavior: pickRandom returns a set index", () => {
    expect(new BitArray(3).pickRandom()).toBeUndefined();
    const b = ba("_x_x_");
    for (let i = 0; i < 20; i++) expect([1, 3]).toContain(b.pickRandom());
  });

  test("error: bad input", () => {
    expect(() => ba("x-")).toThrow(InvalidBitArrayError);
    expect(() => new BitArray(-1)).toThrow(InvalidBitArrayError);
  });
});
