/**
 * Hashing and signatures for the EVM app: the engine's (src/evm/crypto.ts: Keccak-256 in WebAssembly,
 * secp256k1 recovery through the native binding with @noble/curves as fallback and reference), which the
 * app's files import from here.
 */
export {
  checksumAddress,
  compressedPublicKeyOf,
  ecrecover,
  ecrecoverBackend,
  ecrecoverNative,
  ecrecoverNoble,
  keccak256,
  keccakBackend,
  publicKeyOf,
  publicKeyToAddress,
  recoverPublicKey,
} from "../../evm/index.js";
