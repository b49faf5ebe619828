import { createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { createTx, type TypedTransaction, type TypedTxData } from "@ethereumjs/tx";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { publicKeyToAddress } from "../tx/signatures.js";

/** Keys and signed Ethereum transactions for tests (the dev chain's chain id). Test support only. */

export const CHAIN_ID = 262144n;
export const GWEI = 1_000_000_000n;
export const ETHER = 10n ** 18n;

export const COMMON = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: Hardfork.Prague });

export interface TestKey {
  readonly privateKey: Uint8Array;
  readonly address: Uint8Array;
}

export function keyFromPrivate(privateKey: Uint8Array): TestKey {
  return { privateKey, address: publicKeyToAddress(secp256k1.getPublicKey(privateKey, false)) };
}

/** A key derived from a seed text (not a dev account: holds nothing on chain). */
export function devAccount(seed: string): TestKey {
  return keyFromPrivate(keccak_256(Buffer.from(seed)));
}

/** Signs tx data (EIP-155 for legacy). */
export function signTx(data: TypedTxData, key: TestKey): { raw: Uint8Array; tx: TypedTransaction } {
  const tx = createTx(data, { common: COMMON }).sign(key.privateKey);
  return { raw: tx.serialize(), tx };
}

/** A pre-EIP-155 legacy tx (v = 27/28). */
export function signUnprotectedLegacy(
  fields: { nonce: bigint; gasPrice: bigint; gasLimit: bigint; to: Uint8Array; value: bigint },
  key: TestKey,
): Uint8Array {
  const body = [fields.nonce, fields.gasPrice, fields.gasLimit, fields.to, fields.value, new Uint8Array(0)];
  const digest = keccak_256(RLP.encode(body));
  const sig = secp256k1.sign(digest, key.privateKey, { prehash: false, format: "recovered" });
  const v = BigInt(27 + (sig[0] as number));
  return RLP.encode([...body, v, sig.subarray(1, 33), sig.subarray(33, 65)]);
}
