import { type Timestamp, timestampFromSecondsNanos } from "../util/time.js";

/** Field number of the timestamp in CanonicalVote (5) and CanonicalProposal (6), proto/tendermint/types/canonical.proto. */
export const CANONICAL_TIMESTAMP_FIELD = { vote: 5, proposal: 6 } as const;

/**
 * Reads the timestamp out of length-delimited canonical sign bytes, so a re-sign that differs only in
 * its timestamp can be answered with the saved signature and time (privval/file.go
 * checkVotesOnlyDifferByTimestamp). Returns undefined when the bytes are not a well-formed message.
 */
export function timestampFromSignBytes(signBytes: Uint8Array, field: number): Timestamp | undefined {
  const r = new Reader(signBytes);
  const len = r.varint();
  if (len === undefined || r.pos + Number(len) !== signBytes.length) return undefined;
  let found: Uint8Array | undefined;
  while (r.pos < signBytes.length) {
    const tag = r.varint();
    if (tag === undefined) return undefined;
    const fieldNo = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    const value = r.skip(wire);
    if (value === undefined) return undefined;
    if (fieldNo === field) {
      if (wire !== 2) return undefined;
      found = value;
    }
  }
  // gogoproto stdtime: an absent timestamp decodes as the Unix epoch.
  if (found === undefined) return 0n;
  return decodeTimestamp(found);
}

function decodeTimestamp(msg: Uint8Array): Timestamp | undefined {
  const r = new Reader(msg);
  let seconds = 0n;
  let nanos = 0;
  while (r.pos < msg.length) {
    const tag = r.varint();
    if (tag === undefined) return undefined;
    const fieldNo = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0 && (fieldNo === 1 || fieldNo === 2)) {
      const v = r.varint();
      if (v === undefined) return undefined;
      if (fieldNo === 1) seconds = BigInt.asIntN(64, v);
      else nanos = Number(BigInt.asIntN(32, v));
    } else if (r.skip(wire) === undefined) {
      return undefined;
    }
  }
  return timestampFromSecondsNanos(seconds, nanos);
}

class Reader {
  pos = 0;
  readonly #buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }

  varint(): bigint | undefined {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = this.#buf[this.pos];
      if (b === undefined) return undefined;
      this.pos++;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    return undefined;
  }

  /** Consumes one field value of the given wire type; returns the payload of length-delimited fields. */
  skip(wire: number): Uint8Array | undefined {
    switch (wire) {
      case 0:
        return this.varint() === undefined ? undefined : new Uint8Array(0);
      case 1:
        return this.#take(8);
      case 2: {
        const len = this.varint();
        return len === undefined ? undefined : this.#take(Number(len));
      }
      case 5:
        return this.#take(4);
      default:
        return undefined;
    }
  }

  #take(n: number): Uint8Array | undefined {
    if (this.pos + n > this.#buf.length) return undefined;
    const out = this.#buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}
