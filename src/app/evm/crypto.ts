import { createRequire } from "node:module";
import { dirname } from "node:path";
import { secp256k1 as nobleSecp } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { createKeccak } from "hash-wasm";
import { equalBytes } from "./records.js";

/**
 * Hashing and signature recovery for the EVM app. Recovery is the hot path of CheckTx: the native
 * libsecp256k1 binding (`secp256k1` v5, prebuilt) recovers ~20x faster than pure JS (@noble/curves,
 * see bench/evmApp.ts), so it is used when it loads; the pure-JS one is the fallback and the reference.
 */

/** The prebuilt XKCP state of the `keccak` package (N-API), driven directly: one sponge, reset per hash. */
interface NativeKeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Uint8Array;
}

/**
 * Keccak-256 through the `keccak` package's native state: ~1.2 µs per short input against ~3.8 µs for
 * @noble/hashes (measured on the 2-core dev machine), and a tx costs about ten of them (hash, signing
 * hash, sender address, bloom, SHA3). Checked against noble when loaded; noble otherwise.
 */
function loadNativeKeccak(): ((data: Uint8Array) => Uint8Array) | undefined {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve("keccak/package.json");
    const build = createRequire(pkg)("node-gyp-build") as (dir: string) => unknown;
    const State = build(dirname(pkg)) as new () => NativeKeccakState;
    const state = new State();
    const hash = (data: Uint8Array): Uint8Array => {
      state.initialize(1088, 512);
      state.absorb(data);
      state.absorbLastFewBits(0x01);
      const out = state.squeeze(32);
      return new Uint8Array(out.buffer, out.byteOffset, 32);
    };
    for (const probe of [new Uint8Array(0), new Uint8Array(200).fill(0xa5).subarray(3, 170)]) {
      if (!equalBytes(hash(probe), keccak_256(probe))) return undefined;
    }
    return hash;
  } catch {
    return undefined;
  }
}

const nativeKeccak = loadNativeKeccak();

/**
 * Keccak-256 in WebAssembly (the `hash-wasm` package): one WASM instance, reset per hash. A call into
 * WASM costs far less than the four N-API calls of the native binding: 64 bytes (a mapping slot, a
 * KECCAK256 of two words) hash in ~1.3-1.7 µs of CPU against ~3.4-3.7 µs native and ~11-14 µs for
 * @noble/hashes (measured side by side on the 2-core dev machine, 2026-11-29). Checked against noble
 * when loaded.
 */
async function loadWasmKeccak(): Promise<((data: Uint8Array) => Uint8Array) | undefined> {
  try {
    const hasher = await createKeccak(256);
    const hash = (data: Uint8Array): Uint8Array => {
      hasher.init();
      hasher.update(data);
      return hasher.digest("binary");
    };
    for (const probe of [new Uint8Array(0), new Uint8Array(200).fill(0xa5).subarray(3, 170), new Uint8Array(300)]) {
      if (!equalBytes(hash(probe), keccak_256(probe))) return undefined;
    }
    return hash;
  } catch {
    return undefined;
  }
}

const wasmKeccak = await loadWasmKeccak();

/** Keccak-256 (Ethereum's): WASM when it loads, else the native `keccak` binding, else @noble/hashes. */
export const keccak256: (data: Uint8Array) => Uint8Array = wasmKeccak ?? nativeKeccak ?? ((data) => keccak_256(data));

/** Which implementation `keccak256` uses. */
export function keccakBackend(): "wasm" | "native" | "noble" {
  if (wasmKeccak !== undefined) return "wasm";
  return nativeKeccak === undefined ? "noble" : "native";
}

interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyCreate(privateKey: Uint8Array, compressed?: boolean): Uint8Array;
}

function loadNative(): { lib: NativeSecp256k1; native: boolean } | undefined {
  const require = createRequire(import.meta.url);
  try {
    // `secp256k1/bindings` is the N-API build alone; the package root silently falls back to elliptic (JS).
    return { lib: require("secp256k1/bindings") as NativeSecp256k1, native: true };
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** Which implementation `ecrecover` uses: "native" (libsecp256k1) or "noble" (pure JS). */
export function ecrecoverBackend(): "native" | "noble" {
  return native === undefined ? "noble" : "native";
}

/** Recovery id from an Ethereum `v` (27/28, EIP-155 `chainId*2+35/36`, or a typed tx's y-parity 0/1). */
function recoveryId(v: bigint, chainId: bigint | undefined): number {
  let rec: bigint;
  if (v === 0n || v === 1n) rec = v;
  else if (chainId === undefined) rec = v - 27n;
  else rec = v - (chainId * 2n + 35n);
  if (rec !== 0n && rec !== 1n) throw new RangeError(`invalid signature v value ${v}`);
  return Number(rec);
}

function signature64(r: Uint8Array, s: Uint8Array): Uint8Array {
  if (r.length > 32 || s.length > 32) throw new RangeError("signature r or s is longer than 32 bytes");
  const sig = new Uint8Array(64);
  sig.set(r, 32 - r.length);
  sig.set(s, 64 - s.length);
  return sig;
}

/** Pure-JS recovery (@noble/curves): 64-byte uncompressed public key without the 0x04 prefix. */
export function ecrecoverNoble(
  msgHash: Uint8Array,
  v: bigint,
  r: Uint8Array,
  s: Uint8Array,
  chainId?: bigint,
): Uint8Array {
  const sig = nobleSecp.Signature.fromBytes(signature64(r, s)).addRecoveryBit(recoveryId(v, chainId));
  return sig.recoverPublicKey(msgHash).toBytes(false).slice(1);
}

/** Native recovery (libsecp256k1) when available, else noble. Same contract as ethereumjs `ecrecover`. */
export function ecrecoverNative(
  msgHash: Uint8Array,
  v: bigint,
  r: Uint8Array,
  s: Uint8Array,
  chainId?: bigint,
): Uint8Array {
  if (native === undefined) return ecrecoverNoble(msgHash, v, r, s, chainId);
  return native.lib.ecdsaRecover(signature64(r, s), recoveryId(v, chainId), msgHash, false).slice(1);
}

/** The 64-byte uncompressed public key (no 0x04 prefix) of a private key. */
export function publicKeyOf(privateKey: Uint8Array): Uint8Array {
  if (native === undefined) return nobleSecp.getPublicKey(privateKey, false).subarray(1);
  return native.lib.publicKeyCreate(privateKey, false).subarray(1);
}

/** The 33-byte compressed public key of a private key (BIP-32's serP). */
export function compressedPublicKeyOf(privateKey: Uint8Array): Uint8Array {
  if (native === undefined) return nobleSecp.getPublicKey(privateKey, true);
  return native.lib.publicKeyCreate(privateKey, true);
}

/**
 * The 64-byte public key (no 0x04 prefix) that signed `msgHash` with (r, s) and recovery id 0/1;
 * throws when none does. r and s are big-endian, at most 32 bytes.
 */
export function recoverPublicKey(msgHash: Uint8Array, recid: number, r: Uint8Array, s: Uint8Array): Uint8Array {
  if (native === undefined) return ecrecoverNoble(msgHash, BigInt(recid), r, s);
  return native.lib.ecdsaRecover(signature64(r, s), recid, msgHash, false).subarray(1);
}

/** The fastest available recovery; plugged into ethereumjs as `common.customCrypto.ecrecover`. */
export const ecrecover = ecrecoverNative;

/** Address of an uncompressed public key (64 bytes, no prefix). */
export function publicKeyToAddress(pub: Uint8Array): Uint8Array {
  return keccak256(pub).slice(12);
}

/** EIP-55 mixed-case checksum address (geth's `common.Address.Hex()`, which its error texts print). */
export function checksumAddress(address: Uint8Array): string {
  const hex = Buffer.from(address).toString("hex");
  const hash = Buffer.from(keccak256(Buffer.from(hex, "ascii"))).toString("hex");
  let out = "0x";
  for (let i = 0; i < hex.length; i++) {
    const c = hex[i] as string;
    out += Number.parseInt(hash[i] as string, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
