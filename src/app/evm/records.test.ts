import { RLP } from "@ethereumjs/rlp";
import { describe, expect, test } from "vitest";
import { bigintToBytes } from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { type AppMeta, decodeMeta, encodeMeta, u32be, u64be } from "./records.js";
import { storageKey } from "./stateDb.js";

describe("fixed-width keys", () => {
  test("behavior: integers and storage keys are big-endian at every width, written byte by byte", () => {
    expect(bytesToHex(u32be(0x01020304))).toBe("01020304");
    expect(bytesToHex(u32be(0xffffffff))).toBe("ffffffff");
    expect(bytesToHex(u64be(0))).toBe("0000000000000000");
    expect(bytesToHex(u64be(2 ** 53 - 1))).toBe("001fffffffffffff");
    expect(bytesToHex(u64be(0x0102030405060708n))).toBe("0102030405060708");
    expect(bytesToHex(u64be(0xffffffffffffffffn))).toBe("ffffffffffffffff");
    const key = storageKey(new Uint8Array(20).fill(1), 0x01020304, new Uint8Array(32).fill(2));
    expect(bytesToHex(key)).toBe(`${"01".repeat(20)}01020304${"02".repeat(32)}`);
  });
});

describe("the app state record", () => {
  test("behavior: encodeMeta writes the bytes RLP.encode gave for the fields' minimal big-endian bytes, and decodes back", () => {
    const metas: AppMeta[] = [
      { height: 0, appHash: new Uint8Array(0), earliestStateHeight: 0, feeMarket: { baseFee: 0n, blockGasWanted: 0n } },
      {
        height: 1,
        appHash: new Uint8Array(32).fill(7),
        earliestStateHeight: 1,
        feeMarket: { baseFee: 875_000_000n, blockGasWanted: 21_000n },
      },
      {
        height: 2 ** 40 + 3,
        appHash: new Uint8Array(32).fill(0x81),
        earliestStateHeight: 127,
        feeMarket: { baseFee: 2n ** 255n, blockGasWanted: 128n },
        nextBaseFee: 0n,
      },
      {
        height: 255,
        appHash: new Uint8Array(32),
        earliestStateHeight: 256,
        feeMarket: { baseFee: 1n, blockGasWanted: 0x7fn },
        nextBaseFee: 1_000_000_007n,
      },
    ];
    for (const m of metas) {
      const fields = [
        bigintToBytes(BigInt(m.height)),
        m.appHash,
        bigintToBytes(BigInt(m.earliestStateHeight)),
        bigintToBytes(m.feeMarket.baseFee),
        bigintToBytes(m.feeMarket.blockGasWanted),
        ...(m.nextBaseFee === undefined ? [] : [Uint8Array.of(1), bigintToBytes(m.nextBaseFee)]),
      ];
      expect(bytesToHex(encodeMeta(m))).toBe(bytesToHex(RLP.encode(fields)));
      expect(decodeMeta(encodeMeta(m))).toEqual(m);
    }
  });
});
