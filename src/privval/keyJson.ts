import type { PrivKey, PubKey } from "../types/keys.js";
import { base64ToBytes, bytesToBase64 } from "../util/bytes.js";

/** cmtjson type names of the key types (crypto/ed25519, crypto/secp256k1 RegisterAmino names). */
export const KEY_JSON_TYPES = {
  ed25519Pub: "tendermint/PubKeyEd25519",
  ed25519Priv: "tendermint/PrivKeyEd25519",
  secp256k1Pub: "tendermint/PubKeySecp256k1",
  secp256k1Priv: "tendermint/PrivKeySecp256k1",
} as const;

export interface KeyJson {
  type: string;
  value: string;
}

/** `{"type":"tendermint/PubKeyEd25519","value":"<base64>"}` */
export function encodePubKeyJson(pk: PubKey): KeyJson {
  const type = pk.type === "ed25519" ? KEY_JSON_TYPES.ed25519Pub : KEY_JSON_TYPES.secp256k1Pub;
  return { type, value: bytesToBase64(pk.bytes) };
}

export function encodePrivKeyJson(pk: PrivKey): KeyJson {
  const type = pk.type === "ed25519" ? KEY_JSON_TYPES.ed25519Priv : KEY_JSON_TYPES.secp256k1Priv;
  return { type, value: bytesToBase64(pk.bytes) };
}

/** Decodes a cmtjson public key; returns a problem description instead of throwing. */
export function decodePubKeyJson(v: unknown): PubKey | string {
  const kv = keyJsonParts(v);
  if (typeof kv === "string") return kv;
  if (kv.type === KEY_JSON_TYPES.ed25519Pub) {
    return kv.bytes.length === 32
      ? { type: "ed25519", bytes: kv.bytes }
      : `ed25519 public key must be 32 bytes, got ${kv.bytes.length}`;
  }
  if (kv.type === KEY_JSON_TYPES.secp256k1Pub) {
    return kv.bytes.length === 33
      ? { type: "secp256k1", bytes: kv.bytes }
      : `secp256k1 public key must be 33 bytes, got ${kv.bytes.length}`;
  }
  return `unknown public key type "${kv.type}"; valid types: "${KEY_JSON_TYPES.ed25519Pub}", "${KEY_JSON_TYPES.secp256k1Pub}"`;
}

/** Decodes a cmtjson Ed25519 private key (64 bytes: seed then public key). */
export function decodeEd25519PrivKeyJson(v: unknown): PrivKey | string {
  const kv = keyJsonParts(v);
  if (typeof kv === "string") return kv;
  if (kv.type !== KEY_JSON_TYPES.ed25519Priv) {
    return `unsupported private key type "${kv.type}"; valid type: "${KEY_JSON_TYPES.ed25519Priv}"`;
  }
  if (kv.bytes.length !== 64) return `ed25519 private key must be 64 bytes, got ${kv.bytes.length}`;
  return { type: "ed25519", bytes: kv.bytes };
}

function keyJsonParts(v: unknown): { type: string; bytes: Uint8Array } | string {
  if (typeof v !== "object" || v === null) return 'must be an object {"type": ..., "value": ...}';
  const { type, value } = v as Record<string, unknown>;
  if (typeof type !== "string") return '"type" must be a string';
  if (typeof value !== "string") return '"value" must be a base64 string';
  const bytes = base64ToBytes(value);
  if (bytes === undefined) return '"value" is not valid base64';
  return { type, bytes };
}
