import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keccak256 } from "./crypto.js";
import { keccakMemoWord } from "./keccakMemo.js";
import { readWord, toBig, writeWord } from "./words.js";

function bigOf(b: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(b).toString("hex")}`);
}

function bytesOf(v: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(v.toString(16).padStart(64, "0"), "hex"));
}

describe("remembered word conversions", () => {
  it("reads and writes exact values when many share their low 32 bits (one table entry)", () => {
    const buf = new Uint8Array(64);
    const view = new DataView(buf.buffer);
    const values: bigint[] = [];
    for (let i = 0; i < 300; i++) {
      // The same low 32 bits: every value lands on the same entry and replaces the one before.
      const v = (bigOf(randomBytes(28)) << 32n) | 0xdeadbeefn;
      values.push(v);
    }
    for (let round = 0; round < 3; round++) {
      for (const v of values) {
        buf.set(bytesOf(v), 0);
        expect(toBig(readWord(view, 0))).toBe(v);
        writeWord(view, 32, v);
        expect(bigOf(buf.subarray(32, 64))).toBe(v);
      }
    }
  });

  it("writes a bigint the table holds with the table's bytes, and one it does not with its own", () => {
    const buf = new Uint8Array(96);
    const view = new DataView(buf.buffer);
    const v = bigOf(randomBytes(32)) | (1n << 255n);
    buf.set(bytesOf(v), 0);
    const read = readWord(view, 0);
    writeWord(view, 32, read);
    expect(buf.subarray(32, 64)).toEqual(buf.subarray(0, 32));
    // The same low bits, another value: not the remembered one.
    const other = v ^ (1n << 200n);
    writeWord(view, 64, other);
    expect(bigOf(buf.subarray(64, 96))).toBe(other);
    // Small values never reach the table.
    buf.fill(0, 0, 32);
    buf[31] = 7;
    expect(readWord(view, 0)).toBe(7);
  });

  it("reads and writes words around 2^64, 2^128 and 2^192 exactly (values below 2^128 take two halves)", () => {
    const buf = new Uint8Array(64);
    const view = new DataView(buf.buffer);
    for (const k of [53n, 64n, 127n, 128n, 129n, 191n, 192n, 255n]) {
      for (const d of [-1n, 0n, 1n, 12345n]) {
        const v = (1n << k) + d;
        // Over a word of ones (a write must clear the high halves) and read back from fresh bytes.
        buf.fill(0xff);
        writeWord(view, 32, v);
        expect(bigOf(buf.subarray(32, 64))).toBe(v);
        buf.set(bytesOf(v ^ 0xabn), 0);
        expect(toBig(readWord(view, 0))).toBe(v ^ 0xabn);
      }
    }
  });

  it("remembers KECCAK256 of one and two words exactly, and hashes other lengths", () => {
    const mem = new Uint8Array(256);
    const view = new DataView(mem.buffer);
    const inputs = Array.from({ length: 40 }, () => randomBytes(64));
    for (let round = 0; round < 3; round++) {
      for (const input of inputs) {
        mem.set(input, 10);
        if (round > 0) mem.fill(0, 10, 22);
        for (const len of [32, 64, 63, 0, 96]) {
          const want = bigOf(keccak256(mem.subarray(10, 10 + len)));
          expect(toBig(keccakMemoWord(mem, view, 10, len))).toBe(want);
        }
        // One byte changed at the end: a different input, never the remembered hash.
        mem[73] = (mem[73] as number) ^ 1;
        expect(toBig(keccakMemoWord(mem, view, 10, 64))).toBe(bigOf(keccak256(mem.subarray(10, 74))));
      }
    }
  });
});
