import { describe, expect, test } from "vitest";
import { BinaryReader, BinaryWriter } from "./binaryCodec.js";
import { StoreCorruptionError } from "./errors.js";
import { decodeBlockMeta, encodeBlockMeta } from "./records.js";
import { makeTestChain } from "./testing/blockFixtures.js";

describe("BinaryWriter/BinaryReader", () => {
  test("default: round trips integers, bigints, bytes and text", () => {
    const uints = [0, 1, 127, 128, 300, 2 ** 32, Number.MAX_SAFE_INTEGER];
    const ints = [0, -1, 1, -(2 ** 40), 2 ** 40];
    const bigs = [0n, -1n, 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 200n, -(2n ** 200n)];
    const w = new BinaryWriter(1);
    for (const n of uints) w.uint(n);
    for (const n of ints) w.int(n);
    for (const n of bigs) w.bigint(n);
    w.bytes(new Uint8Array([1, 2, 3]))
      .bytes(new Uint8Array())
      .string("héllo ✓")
      .bool(true)
      .bool(false);
    const r = new BinaryReader(w.finish(), "test");
    expect(uints.map(() => r.uint())).toEqual(uints);
    expect(ints.map(() => r.int())).toEqual(ints);
    expect(bigs.map(() => r.bigint())).toEqual(bigs);
    expect([...r.bytes()]).toEqual([1, 2, 3]);
    expect(r.bytes().length).toBe(0);
    expect(r.string()).toBe("héllo ✓");
    expect([r.bool(), r.bool()]).toEqual([true, false]);
    r.end();
  });

  test("behavior: text is the UTF-8 bytes whatever path writes it (ASCII in place, other text encoded)", () => {
    const texts = [
      "",
      "a",
      "abcé",
      "é",
      "x".repeat(127),
      "y".repeat(128),
      "z".repeat(255),
      "w".repeat(300),
      `${"q".repeat(200)}✓`,
    ];
    const w = new BinaryWriter(1);
    for (const t of texts) w.string(t);
    const r = new BinaryReader(w.finish(), "test");
    expect(texts.map(() => r.string())).toEqual(texts);
    r.end();
    // Byte for byte: varint length, then UTF-8.
    expect([...new BinaryWriter().string("abcé").finish()]).toEqual([5, 0x61, 0x62, 0x63, 0xc3, 0xa9]);
    expect([...new BinaryWriter().string("ab").finish()]).toEqual([2, 0x61, 0x62]);
  });

  test("error: truncated, trailing or mis-versioned records are corruption", () => {
    const meta = makeTestChain(1)[0];
    if (meta === undefined) return;
    const bytes = encodeBlockMeta({
      blockId: meta.id,
      blockSize: 100,
      header: meta.block.header,
      numTxs: 1,
    });
    expect(decodeBlockMeta(bytes).header).toEqual(meta.block.header);
    expect(() => decodeBlockMeta(bytes.subarray(0, bytes.length - 1))).toThrow(StoreCorruptionError);
    expect(() => decodeBlockMeta(Uint8Array.of(...bytes, 0))).toThrowErrorMatchingInlineSnapshot(
      `[StoreCorruptionError: cannot decode block meta from the database (1 trailing bytes). The data directory may be damaged or from another version]`,
    );
    expect(() => decodeBlockMeta(Uint8Array.of(9, ...bytes.subarray(1)))).toThrow(StoreCorruptionError);
  });
});
