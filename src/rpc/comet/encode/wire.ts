import type { PubKey } from "../../../types/keys.js";
import { bytesToBase64, bytesToHexUpper } from "../../../util/bytes.js";
import { formatRfc3339Nano, type Timestamp } from "../../../util/time.js";

/**
 * Scalar wire rules of cmtjson (docs/cometbft-rpc.md §1.6): int64 as strings, HexBytes upper hex,
 * []byte base64, RFC3339Nano times.
 */

/** int64/uint64 and friends: a decimal string. */
export function i64(n: number | bigint): string {
  return typeof n === "bigint" ? n.toString() : Math.trunc(n).toString();
}

/** HexBytes: uppercase hex; empty gives "". */
export function hex(b: Uint8Array): string {
  return bytesToHexUpper(b);
}

/** []byte: base64, with empty bytes written as null (a nil slice on the Go side). */
export function b64(b: Uint8Array): string | null {
  return b.length === 0 ? null : bytesToBase64(b);
}

/** []byte that is never nil on the Go side: base64, "" when empty. */
export function b64NonNil(b: Uint8Array): string {
  return bytesToBase64(b);
}

export function time(t: Timestamp): string {
  return formatRfc3339Nano(t);
}

/** cmtjson names of registered public key types. */
export const PUB_KEY_TYPE_NAMES: Readonly<Record<PubKey["type"], string>> = {
  ed25519: "tendermint/PubKeyEd25519",
  secp256k1: "tendermint/PubKeySecp256k1",
};

/** A registered interface value: `{"type":"tendermint/PubKeyEd25519","value":"b64"}`. */
export function encodePubKey(pk: PubKey): { type: string; value: string } {
  return { type: PUB_KEY_TYPE_NAMES[pk.type], value: bytesToBase64(pk.bytes) };
}
