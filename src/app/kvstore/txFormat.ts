import { KEY_TYPES, type KeyType, type ValidatorUpdate } from "../../types/index.js";
import { base64ToBytes, bytesToUtf8 } from "../../util/bytes.js";
import { InvalidKvTxError } from "./errors.js";

/**
 * Transactions of the kvstore app (abci/example/kvstore, v0.38), as bytes, accepted exactly as
 * v0.38's CheckTx accepts them (a mixed network of cometh and Go nodes relies on it: a tx one kind
 * proposes must be one the other kind's ProcessProposal accepts and its Commit can store; see
 * docs/compatibility.md, "mixed networks"):
 *
 * - `key=value` or `key:value`: one separator, not first or last byte, and none of the other kind.
 *   A `key` alone is refused, as v0.38 refuses it (Go's Commit cannot store it);
 * - `val=<type>!<base64 pubkey>!<power>`: a validator update, power 0 removes. `<type>` is `ed25519`
 *   (or empty, meaning ed25519) or `secp256k1`. cometh refuses at CheckTx the keys of another type or
 *   size, which v0.38 takes into a block and then halts on.
 */

/** Response codes (abci/example/kvstore/code.go). */
export const KVSTORE_CODES = { ok: 0, encodingError: 1, invalidTxFormat: 2, unauthorized: 3, executed: 5 } as const;

export type KvTx = { kind: "set"; key: Uint8Array; value: Uint8Array } | { kind: "validator"; update: ValidatorUpdate };

const EQ = 0x3d;
const COLON = 0x3a;
const VALIDATOR_PREFIX = "val=";
/** PubKey sizes by type; other key types are refused (CometBFT's UpdateValidator panics on them). */
const PUBKEY_SIZES: Record<KeyType, number> = { ed25519: 32, secp256k1: 33 };
const MAX_INT64 = (1n << 63n) - 1n;

function startsWithAscii(tx: Uint8Array, prefix: string): boolean {
  if (tx.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (tx[i] !== prefix.charCodeAt(i)) return false;
  return true;
}

export function isValidatorTx(tx: Uint8Array): boolean {
  return startsWithAscii(tx, VALIDATOR_PREFIX);
}

/** Parses a tx; throws InvalidKvTxError with the reason (used as the CheckTx log). */
export function parseKvTx(tx: Uint8Array): KvTx {
  if (isValidatorTx(tx)) return { kind: "validator", update: parseValidatorTx(tx) };
  let eqCount = 0;
  let colonCount = 0;
  let sepAt = -1;
  for (let i = 0; i < tx.length; i++) {
    if (tx[i] === EQ) {
      eqCount++;
      sepAt = i;
    } else if (tx[i] === COLON) {
      colonCount++;
      sepAt = i;
    }
  }
  if (tx.length === 0) throw new InvalidKvTxError("empty tx");
  if (eqCount + colonCount === 1 && sepAt > 0 && sepAt < tx.length - 1) {
    return { kind: "set", key: tx.subarray(0, sepAt), value: tx.subarray(sepAt + 1) };
  }
  throw new InvalidKvTxError("expected key=value or key:value (one '=' or ':', neither first nor last byte)");
}

/** `val=<type>!<base64 pubkey>!<power>`, like upstream parseValidatorTx plus key checks. */
export function parseValidatorTx(tx: Uint8Array): ValidatorUpdate {
  const body = bytesToUtf8(tx.subarray(4));
  const parts = body.split("!");
  if (parts.length !== 3) {
    throw new InvalidKvTxError(`expected 'pubkeytype!pubkey!power'. Got ${parts.length} parts in "${body}"`);
  }
  const [typeText = "", pubKeyText = "", powerText = ""] = parts;
  const type: KeyType | undefined =
    typeText === "" || typeText === KEY_TYPES.ed25519
      ? KEY_TYPES.ed25519
      : typeText === KEY_TYPES.secp256k1
        ? KEY_TYPES.secp256k1
        : undefined;
  if (type === undefined) {
    throw new InvalidKvTxError(`pubkey type "${typeText}" is not supported; use ed25519 or secp256k1`);
  }
  const bytes = base64ToBytes(pubKeyText);
  if (bytes === undefined) throw new InvalidKvTxError(`pubkey (${pubKeyText}) is invalid base64`);
  if (bytes.length !== PUBKEY_SIZES[type]) {
    throw new InvalidKvTxError(`${type} pubkey must be ${PUBKEY_SIZES[type]} bytes, got ${bytes.length}`);
  }
  // strconv.ParseInt(s, 10, 64): optional sign, decimal digits, int64 range.
  if (!/^[+-]?[0-9]+$/.test(powerText)) throw new InvalidKvTxError(`power (${powerText}) is not an int`);
  const power = BigInt(powerText);
  if (power > MAX_INT64 || power < -MAX_INT64 - 1n) throw new InvalidKvTxError(`power (${powerText}) is not an int`);
  if (power < 0n) throw new InvalidKvTxError(`power can not be less than 0, got ${power}`);
  return { pubKey: { type, bytes }, power };
}
