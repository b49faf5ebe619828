import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { secp256k1 as nobleSecp } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { equalBytes } from "./bytes.js";
import { bytesToWord, readWord, type Word } from "./words.js";

/**
 * Hashing and signature recovery for the engine and its host (the EVM app). Recovery is the hot path of CheckTx: the native
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

/** The exports of hash-wasm's Keccak WebAssembly module. */
interface KeccakWasmExports {
  memory: { buffer: ArrayBuffer };
  Hash_GetBuffer(): number;
  Hash_Init(bits: number): void;
  Hash_Update(length: number): void;
  Hash_Final(padding: number): void;
  /** Init, update with `length` bytes of the buffer, final: the digest is then at the buffer's start. */
  Hash_Calculate(length: number, bits: number, padding: number): void;
}

/** The WebAssembly global (the project's TypeScript libs leave out its types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/** The module's I/O buffer (hash-wasm's MAX_HEAP): inputs longer than this go through in chunks. */
const WASM_CHUNK = 16 * 1024;

/**
 * Keccak-256 in WebAssembly: the Keccak module that the `hash-wasm` package ships, instantiated here
 * and called directly. The input is copied into the module's buffer and hashed with one call; the
 * digest is read from the same buffer. Through hash-wasm's own hasher object (init, update, digest:
 * three calls, a subarray and a copy of the digest per hash) 64 bytes took ~1.7 µs of CPU, directly
 * ~1.2 µs; the native `keccak` binding ~3.4-3.7 µs (four N-API calls) and @noble/hashes ~11-14 µs
 * (measured side by side on the 2-core dev machine, 2026-11-29). The module is checked against noble
 * when loaded; when it cannot be loaded or disagrees, the native binding or noble serve instead.
 */
function loadWasmKeccak(): KeccakWasm | undefined {
  try {
    const require = createRequire(import.meta.url);
    const dist = readFileSync(require.resolve("hash-wasm/dist/keccak.umd.min.js"), "utf8");
    const data = /name:"sha3",data:"([A-Za-z0-9+/=]+)"/.exec(dist)?.[1];
    if (data === undefined) return undefined;
    const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const instance = new api.Instance(new api.Module(Buffer.from(data, "base64")), {});
    const wasm = new KeccakWasm(instance.exports as unknown as KeccakWasmExports);
    for (const probe of [new Uint8Array(0), new Uint8Array(200).fill(0xa5).subarray(3, 170), new Uint8Array(40000)]) {
      if (!equalBytes(wasm.hash(probe), keccak_256(probe))) return undefined;
    }
    return wasm;
  } catch {
    return undefined;
  }
}

class KeccakWasm {
  readonly #ex: KeccakWasmExports;
  readonly #at: number;
  readonly #buf: Uint8Array;
  readonly #view: DataView;

  constructor(ex: KeccakWasmExports) {
    this.#ex = ex;
    this.#at = ex.Hash_GetBuffer();
    this.#buf = new Uint8Array(ex.memory.buffer, this.#at, WASM_CHUNK);
    this.#view = new DataView(ex.memory.buffer);
  }

  /** Hashes `len` bytes of `src` from `off`, leaving the digest at the buffer's start. */
  #run(src: Uint8Array, off: number, len: number): void {
    const ex = this.#ex;
    const buf = this.#buf;
    if (len <= WASM_CHUNK) {
      if (len <= 128) for (let i = 0; i < len; i++) buf[i] = src[off + i] as number;
      else buf.set(src.subarray(off, off + len));
      ex.Hash_Calculate(len, 256, 0x01);
      return;
    }
    ex.Hash_Init(256);
    for (let done = 0; done < len; done += WASM_CHUNK) {
      const n = Math.min(WASM_CHUNK, len - done);
      buf.set(src.subarray(off + done, off + done + n));
      ex.Hash_Update(n);
    }
    ex.Hash_Final(0x01);
  }

  hash(data: Uint8Array): Uint8Array {
    this.#run(data, 0, data.length);
    return this.#buf.slice(0, 32);
  }

  word(src: Uint8Array, off: number, len: number): Word {
    this.#run(src, off, len);
    return readWord(this.#view, this.#at);
  }
}

const wasmKeccak = loadWasmKeccak();

/** Keccak-256 (Ethereum's): WASM when it loads, else the native `keccak` binding, else @noble/hashes. */
export const keccak256: (data: Uint8Array) => Uint8Array =
  wasmKeccak !== undefined ? (data) => wasmKeccak.hash(data) : (nativeKeccak ?? ((data) => keccak_256(data)));

/**
 * The Keccak-256 of `len` bytes of `src` from `off`, as an engine word (KECCAK256): no subarray and no
 * digest array on the WASM path.
 */
export const keccakWord: (src: Uint8Array, off: number, len: number) => Word =
  wasmKeccak !== undefined
    ? (src, off, len) => wasmKeccak.word(src, off, len)
    : (src, off, len) => bytesToWord(keccak256(src.subarray(off, off + len)));

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
