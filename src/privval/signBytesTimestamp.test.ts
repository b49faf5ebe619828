import { describe, expect, test } from "vitest";
import { CANONICAL_TIMESTAMP_FIELD, timestampFromSignBytes } from "./signBytesTimestamp.js";

function varint(n: bigint): number[] {
  let v = BigInt.asUintN(64, n);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

function field(no: number, wire: number, payload: number[]): number[] {
  const tag = varint(BigInt((no << 3) | wire));
  return wire === 2 ? [...tag, ...varint(BigInt(payload.length)), ...payload] : [...tag, ...payload];
}

function sfixed64(n: bigint): number[] {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(n);
  return [...b];
}

/** A hand-built length-delimited CanonicalVote. */
function canonicalVote(seconds: bigint, nanos: number): Uint8Array {
  const ts = [
    ...(seconds === 0n ? [] : field(1, 0, varint(seconds))),
    ...(nanos === 0 ? [] : field(2, 0, varint(BigInt(nanos)))),
  ];
  const msg = [
    ...field(1, 0, [1]),
    ...field(2, 1, sfixed64(5n)),
    ...field(3, 1, sfixed64(0n)),
    ...field(5, 2, ts),
    ...field(6, 2, [...Buffer.from("test-chain")]),
  ];
  return new Uint8Array([...varint(BigInt(msg.length)), ...msg]);
}

describe("timestampFromSignBytes", () => {
  test("default: reads seconds and nanos", () => {
    expect(timestampFromSignBytes(canonicalVote(1_700_000_000n, 123), CANONICAL_TIMESTAMP_FIELD.vote)).toBe(
      1_700_000_000_000_000_123n,
    );
  });

  test("behavior: negative seconds (Go's zero time)", () => {
    expect(timestampFromSignBytes(canonicalVote(-62135596800n, 0), CANONICAL_TIMESTAMP_FIELD.vote)).toBe(
      -62135596800n * 1_000_000_000n,
    );
  });

  test("behavior: an empty timestamp is the epoch", () => {
    expect(timestampFromSignBytes(canonicalVote(0n, 0), CANONICAL_TIMESTAMP_FIELD.vote)).toBe(0n);
  });

  test("error: truncated bytes", () => {
    const bytes = canonicalVote(1n, 1);
    expect(timestampFromSignBytes(bytes.subarray(0, bytes.length - 3), CANONICAL_TIMESTAMP_FIELD.vote)).toBeUndefined();
  });
});
