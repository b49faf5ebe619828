import { describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { type ChainSettings, copySettings, encodeSettings, sameSettings, u32be, u64be } from "./records.js";
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

describe("settings records", () => {
  const base: ChainSettings = {
    chainId: 31337n,
    initialHeight: 1,
    maxGas: -1n,
    coinbase: undefined,
    devChain: true,
    feeMarket: {
      noBaseFee: false,
      baseFeeChangeDenominator: 8n,
      elasticityMultiplier: 2n,
      baseFee: 1_000_000_000n,
      enableHeight: 0,
      minGasPrice: 0n,
      minGasMultiplier: 500_000_000_000_000_000n,
    },
  };

  test("behavior: sameSettings holds exactly when the encodings are equal, field by field", () => {
    const changes: ((s: ChainSettings) => void)[] = [
      (s) => (s.chainId = 1n),
      (s) => (s.initialHeight = 2),
      (s) => (s.maxGas = 30_000_000n),
      (s) => (s.coinbase = new Uint8Array(20).fill(1)),
      (s) => {
        delete s.devChain;
      },
      (s) => (s.evidenceMaxAgeNumBlocks = 100n),
      (s) => (s.feeMarket.noBaseFee = true),
      (s) => (s.feeMarket.baseFeeChangeDenominator = 50n),
      (s) => (s.feeMarket.elasticityMultiplier = 3n),
      (s) => (s.feeMarket.baseFee = 7n),
      (s) => (s.feeMarket.enableHeight = 5),
      (s) => (s.feeMarket.minGasPrice = 1n),
      (s) => (s.feeMarket.minGasMultiplier = 0n),
    ];
    expect(sameSettings(base, copySettings(base))).toBe(true);
    for (const change of changes) {
      const other = copySettings(base);
      change(other);
      expect(sameSettings(base, other)).toBe(false);
      expect(bytesToHex(encodeSettings(other))).not.toBe(bytesToHex(encodeSettings(base)));
    }
    // A coinbase changed in place is not shared with an earlier copy.
    const withCoinbase = copySettings({ ...base, coinbase: new Uint8Array(20).fill(2) });
    const kept = copySettings(withCoinbase);
    withCoinbase.coinbase?.fill(3);
    expect(sameSettings(kept, withCoinbase)).toBe(false);
  });
});
