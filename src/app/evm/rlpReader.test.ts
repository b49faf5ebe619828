import { RLP } from "@ethereumjs/rlp";
import { describe, expect, test } from "vitest";
import { type RlpDecoded, rlpDecode } from "./rlpReader.js";
import { rlpEncode } from "./rlpWriter.js";

/** A deterministic generator (xorshift32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

function randomItem(r: () => number, depth: number): RlpDecoded {
  if (depth > 2 || r() < 0.6) {
    const pick = r();
    const len = pick < 0.3 ? 0 : pick < 0.5 ? 1 : pick < 0.85 ? Math.floor(r() * 56) : 56 + Math.floor(r() * 300);
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) b[i] = Math.floor(r() * 256);
    return b;
  }
  const n = Math.floor(r() * (depth === 0 && r() < 0.2 ? 40 : 6));
  return Array.from({ length: n }, () => randomItem(r, depth + 1));
}

/** Deep equality of decoded items (vitest's toEqual is slow on thousands of byte arrays). */
function same(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array) return b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((x, i) => same(x, b[i]));
}

/** What the library does with `bytes`: its result, or that it threw. */
function library(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: RLP.decode(bytes) };
  } catch {
    return { ok: false };
  }
}

function ours(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: rlpDecode(bytes) };
  } catch {
    return { ok: false };
  }
}

describe("rlpDecode", () => {
  test("behavior: decodes what the writer and the library encode, as the library decodes it", () => {
    const r = rng(7);
    for (let i = 0; i < 2000; i++) {
      const item = randomItem(r, 0);
      const bytes = rlpEncode(item as never);
      expect(Buffer.compare(bytes, RLP.encode(item as never))).toBe(0);
      expect(same(rlpDecode(bytes), item)).toBe(true);
    }
  });

  test("edge: refuses exactly what the library refuses (truncated, extended, flipped bytes; non-canonical forms)", () => {
    const r = rng(11);
    let refused = 0;
    for (let i = 0; i < 4000; i++) {
      const good = rlpEncode(randomItem(r, 0) as never);
      const bad = new Uint8Array(good.length + 2);
      bad.set(good);
      const cut = Math.floor(r() * (good.length + 3));
      let mutated = bad.subarray(0, cut);
      if (r() < 0.5 && mutated.length > 0) {
        mutated = mutated.slice();
        mutated[Math.floor(r() * mutated.length)] = Math.floor(r() * 256);
      }
      const want = library(mutated);
      const got = ours(mutated);
      expect(got.ok, `input ${Buffer.from(mutated).toString("hex")}`).toBe(want.ok);
      if (want.ok && got.ok) expect(same(got.value, want.value)).toBe(true);
      if (!want.ok) refused++;
    }
    expect(refused).toBeGreaterThan(1000);
    for (const hex of [
      "8100",
      "817f",
      "b800",
      `b837${"00".repeat(55)}`,
      "f800",
      `f837${"80".repeat(55)}`,
      "b9000100",
      "c2",
      "c180",
      "8180ff",
      "c3828080",
    ]) {
      const bytes = Uint8Array.from(Buffer.from(hex, "hex"));
      expect(ours(bytes).ok, hex).toBe(library(bytes).ok);
    }
    expect(() => rlpDecode(Uint8Array.of(0x81, 0x00))).toThrow(/single byte/);
  });

  test("behavior: no result shares memory with the input", () => {
    const input = rlpEncode([Uint8Array.of(1, 2, 3), [Uint8Array.of(0x7f)], new Uint8Array(60).fill(5)] as never);
    const out = rlpDecode(input) as RlpDecoded[];
    input.fill(0);
    expect(out[0]).toEqual(Uint8Array.of(1, 2, 3));
    expect((out[1] as RlpDecoded[])[0]).toEqual(Uint8Array.of(0x7f));
    expect(out[2]).toEqual(new Uint8Array(60).fill(5));
  });
});
