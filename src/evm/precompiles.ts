import { blake2f } from "./precompiles/blake2f.js";
import {
  blsG1Add,
  blsG1Msm,
  blsG2Add,
  blsG2Msm,
  blsMapFp2ToG2,
  blsMapFpToG1,
  blsPairing,
} from "./precompiles/bls12381.js";
import { bn254Add, bn254Mul, bn254Pairing } from "./precompiles/bn254.js";
import { ecrecover, identity, ripemd160, sha256 } from "./precompiles/hashing.js";
import { kzgPointEvaluation } from "./precompiles/kzg.js";
import { modexp } from "./precompiles/modexp.js";
import type { Fork, Precompile } from "./types.js";

/**
 * The precompiled contracts by address and fork: Cancun 0x01–0x0a (Ethereum's set: the state-test
 * fixtures put ordinary contracts at 0x…0100); Prague 0x01–0x11. A chain adds its own (Cosmos EVM's P256
 * and Bech32) as `PrecompileExtensions` through ExecOptions.extensions. Each is pure and synchronous and never throws; see the files under
 * precompiles/ for what each follows.
 */

/** Precompiles keyed by the address's last two bytes (the first 18 are zero). */
const CANCUN = new Map<number, Precompile>([
  [0x01, ecrecover],
  [0x02, sha256],
  [0x03, ripemd160],
  [0x04, identity],
  [0x05, modexp],
  [0x06, bn254Add],
  [0x07, bn254Mul],
  [0x08, bn254Pairing],
  [0x09, blake2f],
  [0x0a, kzgPointEvaluation],
]);

const PRAGUE = new Map<number, Precompile>([
  ...CANCUN,
  [0x0b, blsG1Add],
  [0x0c, blsG1Msm],
  [0x0d, blsG2Add],
  [0x0e, blsG2Msm],
  [0x0f, blsPairing],
  [0x10, blsMapFpToG1],
  [0x11, blsMapFp2ToG2],
]);

function table(fork: Fork): Map<number, Precompile> {
  return fork === "prague" ? PRAGUE : CANCUN;
}

/**
 * Precompiles a chain adds to the fork's set, keyed by the address's last two bytes (their addresses are
 * 0x00…0000–0x00…ffff, as Cosmos EVM's static precompiles are). They are warm from the start of every
 * transaction, as the fork's own are; an extension at an address the fork already uses is ignored.
 */
export type PrecompileExtensions = ReadonlyMap<number, Precompile>;

/** The precompile at `addr` under `fork` (with the chain's `extensions`), or undefined. */
export function precompileAt(addr: Uint8Array, fork: Fork, extensions?: PrecompileExtensions): Precompile | undefined {
  if (addr.length !== 20) return undefined;
  for (let i = 0; i < 18; i++) if (addr[i] !== 0) return undefined;
  const n = ((addr[18] as number) << 8) | (addr[19] as number);
  return table(fork).get(n) ?? extensions?.get(n);
}

function addressesOf(precompiles: Map<number, Precompile>): Uint8Array[] {
  return [...precompiles.keys()]
    .sort((a, b) => a - b)
    .map((n) => {
      const addr = new Uint8Array(20);
      addr[18] = n >> 8;
      addr[19] = n & 0xff;
      return addr;
    });
}

const CANCUN_ADDRESSES = addressesOf(CANCUN);
const PRAGUE_ADDRESSES = addressesOf(PRAGUE);

/**
 * Every precompile address active under `fork` (EIP-2929: warm from the start of a transaction), in
 * ascending order. A fresh array each call; the address bytes are shared and must not be written to.
 */
export function activePrecompiles(fork: Fork, extensions?: PrecompileExtensions): Uint8Array[] {
  const own = fork === "prague" ? PRAGUE_ADDRESSES : CANCUN_ADDRESSES;
  if (extensions === undefined || extensions.size === 0) return own.slice();
  const all = new Map(table(fork));
  for (const [n, p] of extensions) if (!all.has(n)) all.set(n, p);
  return addressesOf(all);
}

const keysOf = (addresses: readonly Uint8Array[]) => addresses.map((a) => Buffer.from(a).toString("hex"));
const PRAGUE_KEY_SET: ReadonlySet<string> = new Set(keysOf(PRAGUE_ADDRESSES));
const CANCUN_KEY_SET: ReadonlySet<string> = new Set(keysOf(CANCUN_ADDRESSES));
const extensionKeySets = new WeakMap<PrecompileExtensions, Map<Fork, ReadonlySet<string>>>();

/**
 * activePrecompiles as hex keys (addressKey), one set per fork and extension set, computed once: the
 * addresses every transaction finds warm.
 */
export function activePrecompileKeySet(fork: Fork, extensions?: PrecompileExtensions): ReadonlySet<string> {
  if (extensions === undefined || extensions.size === 0) return fork === "prague" ? PRAGUE_KEY_SET : CANCUN_KEY_SET;
  let byFork = extensionKeySets.get(extensions);
  if (byFork === undefined) {
    byFork = new Map();
    extensionKeySets.set(extensions, byFork);
  }
  let set = byFork.get(fork);
  if (set === undefined) {
    set = new Set(keysOf(activePrecompiles(fork, extensions)));
    byFork.set(fork, set);
  }
  return set;
}
