import { KEY_TYPES, type ValidatorUpdate } from "../../types/index.js";
import { KvStoreAppStateError } from "./errors.js";

/**
 * How upstream's kvstore stores a validator (and answers the `/val` query): the protobuf
 * ValidatorUpdate{pub_key: PublicKey{ed25519 = 1 | secp256k1 = 2}, power = 2}, varint-length
 * delimited (abci types.WriteMessage).
 */

function uvarint(n: bigint): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

function lengthDelimited(field: number, bytes: Uint8Array | number[]): number[] {
  return [(field << 3) | 2, ...uvarint(BigInt(bytes.length)), ...bytes];
}

export function encodeValidatorRecord(v: ValidatorUpdate): Uint8Array {
  const keyField = v.pubKey.type === KEY_TYPES.secp256k1 ? 2 : 1;
  const pubKey = lengthDelimited(keyField, v.pubKey.bytes);
  const msg = [...lengthDelimited(1, pubKey)];
  if (v.power !== 0n) msg.push(0x10, ...uvarint(BigInt.asUintN(64, v.power)));
  return new Uint8Array([...uvarint(BigInt(msg.length)), ...msg]);
}

class Reader {
  #pos = 0;
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  done(): boolean {
    return this.#pos >= this.#bytes.length;
  }

  uvarint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = this.#bytes[this.#pos++];
      if (b === undefined) throw new KvStoreAppStateError("a validator record (truncated varint)");
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new KvStoreAppStateError("a validator record (varint too long)");
  }

  take(n: number): Uint8Array {
    if (this.#pos + n > this.#bytes.length) throw new KvStoreAppStateError("a validator record (truncated)");
    const out = this.#bytes.slice(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }
}

export function decodeValidatorRecord(record: Uint8Array): ValidatorUpdate {
  const outer = new Reader(record);
  const msg = new Reader(outer.take(Number(outer.uvarint())));
  let pubKey: ValidatorUpdate["pubKey"] | undefined;
  let power = 0n;
  while (!msg.done()) {
    const tag = Number(msg.uvarint());
    if (tag === 0x0a) {
      const pk = new Reader(msg.take(Number(msg.uvarint())));
      while (!pk.done()) {
        const t = Number(pk.uvarint());
        if (t !== 0x0a && t !== 0x12) throw new KvStoreAppStateError("a validator record (unknown key type)");
        const bytes = pk.take(Number(pk.uvarint()));
        pubKey = { type: t === 0x0a ? KEY_TYPES.ed25519 : KEY_TYPES.secp256k1, bytes };
      }
    } else if (tag === 0x10) {
      power = BigInt.asIntN(64, msg.uvarint());
    } else {
      throw new KvStoreAppStateError(`a validator record (unexpected field tag ${tag})`);
    }
  }
  if (pubKey === undefined) throw new KvStoreAppStateError("a validator record (no public key)");
  return { pubKey, power };
}
