/** Key types a validator or node can hold. Only Ed25519 is produced by cometh; secp256k1 is decoded. */
export const KEY_TYPES = { ed25519: "ed25519", secp256k1: "secp256k1" } as const;
export type KeyType = (typeof KEY_TYPES)[keyof typeof KEY_TYPES];

export interface PubKey {
  type: KeyType;
  bytes: Uint8Array;
}

export interface PrivKey {
  type: KeyType;
  /** Ed25519: 64 bytes (32-byte seed followed by the 32-byte public key), as CometBFT stores it. */
  bytes: Uint8Array;
}
