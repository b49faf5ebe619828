import { RLP } from "@ethereumjs/rlp";
import { type AccessListEntry, TX_TYPE } from "../services.js";
import { keccak256 } from "./signatures.js";

/**
 * Builds and signs a transaction for the dev keyring (eth_sendTransaction, personal_*, eth_resend):
 * the EIP-155 legacy, EIP-2930 and EIP-1559 encodings written out with RLP (the keyring only ever
 * signs a digest). Built directly rather than through a transaction library's objects, which copied
 * their chain parameters per tx: every eth_sendTransaction of a test suite comes through here.
 */

export interface UnsignedTx {
  readonly type: 0 | 1 | 2;
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  readonly to: Uint8Array | undefined;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly gasPrice?: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly accessList: readonly AccessListEntry[];
}

const NO_BYTES = new Uint8Array(0);

/** A quantity as RLP wants it: big-endian, no leading zero bytes (0 is the empty string). */
function quantity(n: bigint): Uint8Array {
  if (n === 0n) return NO_BYTES;
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex");
}

/** 32-byte r or s as a quantity (leading zeros dropped). */
function trimmed(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

function typed(type: number, fields: RlpFields): Uint8Array {
  const body = RLP.encode(fields);
  const out = new Uint8Array(1 + body.length);
  out[0] = type;
  out.set(body, 1);
  return out;
}

type RlpFields = (Uint8Array | RlpFields)[];

/** The fields every type signs, in its order, without the signature. */
function unsignedFields(u: UnsignedTx): RlpFields {
  const to = u.to ?? NO_BYTES;
  const tail = [quantity(u.gasLimit), to, quantity(u.value), u.data];
  const accessList: RlpFields = u.accessList.map((e) => [e.address, [...e.storageKeys]]);
  if (u.type === TX_TYPE.legacy) return [quantity(u.nonce), quantity(u.gasPrice ?? 0n), ...tail];
  if (u.type === TX_TYPE.accessList) {
    return [quantity(u.chainId), quantity(u.nonce), quantity(u.gasPrice ?? 0n), ...tail, accessList];
  }
  return [
    quantity(u.chainId),
    quantity(u.nonce),
    quantity(u.maxPriorityFeePerGas ?? 0n),
    quantity(u.maxFeePerGas ?? 0n),
    ...tail,
    accessList,
  ];
}

/** Signs with `sign` (digest → r‖s‖yParity) and returns the signed encoding. */
export async function signTransaction(
  u: UnsignedTx,
  sign: (digest: Uint8Array) => Promise<Uint8Array> | Uint8Array,
): Promise<Uint8Array> {
  const fields = unsignedFields(u);
  const legacy = u.type === TX_TYPE.legacy;
  // EIP-155: a legacy tx signs its fields followed by chainId, 0, 0.
  const payload = legacy ? RLP.encode([...fields, quantity(u.chainId), NO_BYTES, NO_BYTES]) : typed(u.type, fields);
  const sig = await sign(keccak256(payload));
  const r = trimmed(sig.subarray(0, 32));
  const s = trimmed(sig.subarray(32, 64));
  const recovery = BigInt(sig[64] ?? 0);
  // EIP-155: v = recovery + chainId·2 + 35; typed txs carry the y parity.
  if (legacy) return RLP.encode([...fields, quantity(recovery + u.chainId * 2n + 35n), r, s]);
  return typed(u.type, [...fields, quantity(recovery), r, s]);
}
