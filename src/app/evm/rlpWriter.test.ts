import { RLP } from "@ethereumjs/rlp";
import { describe, expect, test } from "vitest";
import { bigintToBytes } from "../../evm/index.js";
import { decodeReceipt, encodeAccount, encodeReceipt } from "./records.js";
import { type RlpItem, rlpEncode } from "./rlpWriter.js";

/** The same item with its integers as the minimal bytes @ethereumjs/rlp expects. */
function asBytes(item: RlpItem): Uint8Array | Uint8Array[] | unknown[] {
  if (item instanceof Uint8Array) return item;
  if (typeof item === "number" || typeof item === "bigint") return bigintToBytes(BigInt(item));
  return item.map(asBytes);
}

/** A deterministic pseudo-random generator (xorshift), so a failure names its seed. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function randomItem(r: () => number, depth: number): RlpItem {
  const k = r();
  if (depth > 0 && k < 0.25) return Array.from({ length: Math.floor(r() * 5) }, () => randomItem(r, depth - 1));
  if (k < 0.4) return Math.floor(r() * 2 ** (r() * 53));
  if (k < 0.55) return BigInt(Math.floor(r() * 2 ** 32)) ** BigInt(1 + Math.floor(r() * 8));
  // Lengths around the 1-byte, 55-byte and 256-byte header edges.
  const lengths = [0, 1, 1, 2, 54, 55, 56, 255, 256, 300];
  const len = lengths[Math.floor(r() * lengths.length)] as number;
  return Uint8Array.from({ length: len }, () => Math.floor(r() * (r() < 0.5 ? 0x80 : 256)));
}

describe("rlpEncode", () => {
  test("behavior: the same bytes as @ethereumjs/rlp for edge items and 200 random trees", () => {
    const edges: RlpItem[] = [
      new Uint8Array(0),
      Uint8Array.of(0),
      Uint8Array.of(0x7f),
      Uint8Array.of(0x80),
      0,
      0n,
      1,
      0x7f,
      0x80,
      0xff,
      0x100,
      2 ** 53 - 1,
      2n ** 256n - 1n,
      [],
      [[], [[]]],
      new Uint8Array(55),
      new Uint8Array(56),
      new Uint8Array(70_000),
      Array.from({ length: 60 }, () => Uint8Array.of(1)),
    ];
    for (const e of edges)
      expect(Buffer.from(rlpEncode(e)).toString("hex")).toBe(
        Buffer.from(RLP.encode(asBytes(e) as never)).toString("hex"),
      );
    for (let seed = 1; seed <= 200; seed++) {
      const item = randomItem(rng(seed), 3);
      const ours = Buffer.from(rlpEncode(item)).toString("hex");
      expect(ours, `seed ${seed}`).toBe(Buffer.from(RLP.encode(asBytes(item) as never)).toString("hex"));
    }
  });

  test("bad input: a negative integer is refused with a RangeError", () => {
    expect(() => rlpEncode([1, -1])).toThrow(RangeError);
    expect(() => rlpEncode(-5n)).toThrow(/non-negative/);
  });

  test("behavior: records keep their stored bytes (a receipt with a log and an error round-trips)", () => {
    const receipt = {
      height: 7,
      txIndex: 3,
      cometIndex: 4,
      txHash: new Uint8Array(32).fill(1),
      rawTx: new Uint8Array(110).fill(2),
      type: 2,
      from: new Uint8Array(20).fill(3),
      to: undefined,
      nonce: 0n,
      gasLimit: 60_000n,
      contractAddress: new Uint8Array(20).fill(4),
      status: 0 as const,
      gasUsed: 51_234n,
      cumulativeGasUsed: 1_000_000n,
      effectiveGasPrice: 1_000_000_007n,
      logs: [
        { address: new Uint8Array(20).fill(5), topics: [new Uint8Array(32)], data: Uint8Array.of(0), logIndex: 0 },
      ],
      logsBloom: new Uint8Array(256).fill(6),
      vmError: "execution reverted",
      returnData: Uint8Array.of(9, 9),
    };
    const bytes = encodeReceipt(receipt);
    expect(decodeReceipt(7, 3, bytes)).toEqual(receipt);
    const account = {
      exists: true,
      nonce: 5n,
      balance: 10n ** 22n,
      codeHash: new Uint8Array(32).fill(7),
      incarnation: 2,
    };
    expect(Buffer.from(encodeAccount(account)).toString("hex")).toBe(
      Buffer.from(
        RLP.encode([bigintToBytes(5n), bigintToBytes(10n ** 22n), account.codeHash, bigintToBytes(2n)]),
      ).toString("hex"),
    );
  });
});
