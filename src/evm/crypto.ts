import { createRequire } from "node:module";
import { dirname } from "node:path";
import { secp256k1 as nobleSecp } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { equalBytes } from "./bytes.js";
import { INPUT, INPUT_BLOCKS, keccakModuleBytes, RATE } from "./keccakWasm.js";
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

/** The exports of the Keccak module (keccakWasm.ts). */
interface KeccakWasmExports {
  memory: { buffer: ArrayBuffer };
  absorb(blocks: number): void;
  hash(blocks: number): void;
}

/** The WebAssembly global (the project's TypeScript libs leave out its types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/**
 * Known digests the module is checked against when it loads (computed once with @noble/hashes; computing
 * them at every start cost ~0.1 s, mostly noble on the 40 000 bytes): "", 135 and 136 bytes (the padding
 * in one byte, and a block of its own), 167 bytes (two blocks), 40 000 zero bytes (more than the module's
 * memory takes at once).
 */
const WASM_PROBES: [Uint8Array, string][] = [
  [new Uint8Array(0), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"],
  [new Uint8Array(135).fill(7), "316ef5fac392334013c099d269106bf60e177aa75b6b3e0ccefc0cd19ef6adb2"],
  [new Uint8Array(136).fill(7), "fe7b19f0a766c96fdae42d45fa0de3423bfe68a710492afee13853eb6004d9c4"],
  [new Uint8Array(167).fill(0xa5), "58a953a5947cb5a8460dfd672eb92fae60d5825cef3d86ca6b1d73444ab7ab70"],
  [new Uint8Array(40000), "c625f79680f7083b0bdaef0ba2e4e67b9132ea5edfcecefb31b2b5f3a5a9282e"],
];

/**
 * Keccak-256 in WebAssembly: our own module (keccakWasm.ts), assembled and instantiated here and called
 * directly. The input is copied into the module's memory and padded, hashed with one call, and the
 * digest read from the state. ~0.55–0.7 µs of CPU for 64 bytes, against ~0.9–1.0 µs for hash-wasm's
 * Keccak module called the same way, ~3.4–3.7 µs for the native `keccak` binding (four N-API calls) and
 * ~11–14 µs for @noble/hashes (measured side by side on the 2-core dev machine, 2026-11-29). The module
 * is checked against known digests when loaded; when it cannot be loaded or disagrees, the native binding
 * or noble serve instead.
 */
function loadWasmKeccak(): KeccakWasm | undefined {
  try {
    const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const instance = new api.Instance(new api.Module(keccakModuleBytes()), {});
    const wasm = new KeccakWasm(instance.exports as unknown as KeccakWasmExports);
    for (const [probe, digest] of WASM_PROBES) {
      if (Buffer.from(wasm.hash(probe)).toString("hex") !== digest) return undefined;
    }
    return wasm;
  } catch {
    return undefined;
  }
}

/** Input bytes absorbed per call for inputs too long for the module's memory at once (whole blocks). */
const CHUNK = INPUT_BLOCKS * RATE;

class KeccakWasm {
  readonly #ex: KeccakWasmExports;
  readonly #mem: Uint8Array;
  readonly #view: DataView;

  constructor(ex: KeccakWasmExports) {
    this.#ex = ex;
    this.#mem = new Uint8Array(ex.memory.buffer);
    this.#view = new DataView(ex.memory.buffer);
  }

  /** Hashes `len` bytes of `src` from `off`, leaving the digest in the state's first 32 bytes. */
  #run(src: Uint8Array, off: number, len: number): void {
    const mem = this.#mem;
    let rest = len;
    let from = off;
    if (len >= CHUNK) {
      // hash(0) zeroes the state; then whole chunks, then the padded rest below.
      this.#ex.hash(0);
      while (rest >= CHUNK) {
        mem.set(src.subarray(from, from + CHUNK), INPUT);
        this.#ex.absorb(INPUT_BLOCKS);
        from += CHUNK;
        rest -= CHUNK;
      }
    }
    if (rest <= 128) for (let i = 0; i < rest; i++) mem[INPUT + i] = src[from + i] as number;
    else mem.set(src.subarray(from, from + rest), INPUT);
    const blocks = Math.floor(rest / RATE) + 1;
    const end = INPUT + blocks * RATE;
    mem.fill(0, INPUT + rest, end);
    mem[INPUT + rest] = 0x01;
    mem[end - 1] = (mem[end - 1] as number) | 0x80;
    if (len >= CHUNK) this.#ex.absorb(blocks);
    else this.#ex.hash(blocks);
  }

  hash(data: Uint8Array): Uint8Array {
    this.#run(data, 0, data.length);
    return this.#mem.slice(0, 32);
  }

  word(src: Uint8Array, off: number, len: number): Word {
    this.#run(src, off, len);
    return readWord(this.#view, 0);
  }
}

const wasmKeccak = loadWasmKeccak();
/** The native binding, loaded only when the WebAssembly module is not there (loading it costs start-up time). */
const nativeKeccak = wasmKeccak === undefined ? loadNativeKeccak() : undefined;

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
