/**
 * RLP decoding of the records this node writes (rlpWriter.ts): the same result and the same
 * refusals as @ethereumjs/rlp's `RLP.decode`, without its copies. The library copies every list's
 * payload before it walks it (and each nested list's again) and makes a {data, remainder} pair per
 * item; this walks the input once by offsets and copies only the strings it returns, so no result
 * shares memory with the input (a store may reuse the buffer it read into).
 *
 * Why: a receipt answer decodes the tx's receipt and its block record, and a revert decodes every
 * dropped block's records; the library's decode was ~20 µs of a receipt's ~50 on the dev chain's
 * fixture loop (docs/dev-chain.md "Mining").
 *
 * Refused as the library refuses them (rlpReader.test.ts runs both on the same inputs): bytes left over after the first item, a single byte below 0x80 with a string prefix, a long
 * form for a length of 55 or less, a length with leading zero bytes, and an item that runs past its
 * list or the input.
 */

export type RlpDecoded = Uint8Array | RlpDecoded[];

/** Thrown for bytes that are not one canonical RLP item. */
export class RlpDecodeError extends Error {
  override name = "RlpDecodeError";
}

/** The one RLP item `input` holds (an empty input: an empty string, as the library has it). */
export function rlpDecode(input: Uint8Array): RlpDecoded {
  if (input.length === 0) return new Uint8Array(0);
  const end = { at: 0 };
  const item = readItem(input, 0, input.length, end);
  if (end.at !== input.length) throw new RlpDecodeError("invalid RLP: remainder must be zero");
  return item;
}

/** Big-endian length of `n` bytes at `at`, refusing leading zeros. */
function readLength(input: Uint8Array, at: number, n: number, limit: number): number {
  if (at + n > limit) throw new RlpDecodeError("invalid RLP: length runs past the input");
  if (input[at] === 0) throw new RlpDecodeError("invalid RLP: extra zeros");
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + (input[at + i] as number);
  return len;
}

/** The item at `at`, which must end by `limit`; its end goes to `end.at`. */
function readItem(input: Uint8Array, at: number, limit: number, end: { at: number }): RlpDecoded {
  if (at >= limit) throw new RlpDecodeError("invalid RLP: item runs past its list");
  const first = input[at] as number;
  if (first <= 0x7f) {
    end.at = at + 1;
    return input.slice(at, at + 1);
  }
  if (first <= 0xb7) {
    const len = first - 0x80;
    const from = at + 1;
    if (from + len > limit) throw new RlpDecodeError("invalid RLP: string runs past its end");
    if (len === 1 && (input[from] as number) < 0x80) {
      throw new RlpDecodeError("invalid RLP encoding: invalid prefix, single byte < 0x80 are not prefixed");
    }
    end.at = from + len;
    return input.slice(from, from + len);
  }
  if (first <= 0xbf) {
    const lenOfLen = first - 0xb7;
    const len = readLength(input, at + 1, lenOfLen, limit);
    if (len <= 55) throw new RlpDecodeError("invalid RLP: expected string length to be greater than 55");
    const from = at + 1 + lenOfLen;
    if (from + len > limit) throw new RlpDecodeError("invalid RLP: string runs past its end");
    end.at = from + len;
    return input.slice(from, from + len);
  }
  let from: number;
  let len: number;
  if (first <= 0xf7) {
    len = first - 0xc0;
    from = at + 1;
  } else {
    const lenOfLen = first - 0xf7;
    len = readLength(input, at + 1, lenOfLen, limit);
    if (len < 56) throw new RlpDecodeError("invalid RLP: encoded list too short");
    from = at + 1 + lenOfLen;
  }
  const stop = from + len;
  if (stop > limit) throw new RlpDecodeError("invalid RLP: list runs past its end");
  const items: RlpDecoded[] = [];
  let p = from;
  while (p < stop) {
    items.push(readItem(input, p, stop, end));
    p = end.at;
  }
  end.at = stop;
  return items;
}
