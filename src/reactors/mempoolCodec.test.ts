import { describe, expect, test } from "vitest";
import { bytesToHex } from "../util/bytes.js";
import vectors from "./codecVectors.json" with { type: "json" };
import { InvalidMempoolMessageError } from "./errors.js";
import { decodeMempoolTxs, encodeMempoolTxs, mempoolRecvMessageCapacity } from "./mempoolCodec.js";
import { hex } from "./testing/fixtures.js";

describe("mempool codec vectors", () => {
  for (const v of vectors.mempool) {
    test(`default: ${v.name}`, () => {
      const txs = v.txs.map(hex);
      expect(bytesToHex(encodeMempoolTxs(txs))).toBe(v.hex);
      expect(decodeMempoolTxs(hex(v.hex)).map(bytesToHex)).toEqual(v.txs);
    });
  }
});

describe("decodeMempoolTxs", () => {
  test("behavior: decoded txs are copies, not views into the received buffer", () => {
    const bytes = encodeMempoolTxs([Uint8Array.of(1, 2, 3)]);
    const [tx] = decodeMempoolTxs(bytes);
    bytes.fill(0);
    expect(tx).toEqual(Uint8Array.of(1, 2, 3));
    expect(tx?.constructor).toBe(Uint8Array);
  });

  test("error: corrupt bytes and a message without txs", () => {
    expect(() => decodeMempoolTxs(Uint8Array.of(0x0a, 0x05, 0x0a))).toThrow(InvalidMempoolMessageError);
    expect(() => decodeMempoolTxs(new Uint8Array(0))).toThrow(/no known type/);
  });
});

describe("mempoolRecvMessageCapacity", () => {
  for (const maxTxBytes of [0, 1, 127, 128, 16_383, 16_384, 1_048_576]) {
    test(`args: ${maxTxBytes} is the size of a message holding one tx that large`, () => {
      expect(mempoolRecvMessageCapacity(maxTxBytes)).toBe(encodeMempoolTxs([new Uint8Array(maxTxBytes)]).length);
    });
  }
});
