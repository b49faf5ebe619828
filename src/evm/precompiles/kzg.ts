import { bls12_381 as curve } from "@noble/curves/bls12-381.js";
import { sha256 } from "@noble/hashes/sha2.js";
import type { PrecompileResult } from "../types.js";
import { failure, fixedBytes, outOfGas, success, toBigint } from "./result.js";

/**
 * 0x0a KZG point evaluation (EIP-4844): checks that the blob committed to by `commitment` evaluates
 * to y at z, given a KZG proof. Input: versioned hash ‖ z ‖ y ‖ commitment (48) ‖ proof (48).
 *
 * The check is c-kzg-4844's verify_kzg_proof, written over @noble/curves' BLS12-381 pairing:
 * e(C − [y]G1, G2) = e(π, [τ]G2 − [z]G2), checked as e(C − [y]G1 + [z]π, G2) · e(−π, [τ]G2) = 1
 * (the same equation with the scalar work moved to G1). Of the trusted setup it needs only [τ]G2,
 * the ceremony's g2_monomial[1]; the tests check it against the setup kzg-wasm ships and compare the
 * whole precompile with c-kzg (kzg-wasm). kzg-wasm is not used here: loading its setup takes ~10 s of
 * CPU (c-kzg precomputes for PeerDAS cells), and it only loads asynchronously.
 */

const GAS = 50000n;
const INPUT_LENGTH = 192;
const VERSIONED_HASH_VERSION_KZG = 0x01;
const FIELD_ELEMENTS_PER_BLOB = 4096n;
/** The scalar field's modulus r (EIP-4844 BLS_MODULUS). */
export const BLS_MODULUS = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;
/** The mainnet KZG ceremony's [τ]G2 (g2_monomial[1]), compressed. */
export const TRUSTED_SETUP_TAU_G2 =
  "b5bfd7dd8cdeb128843bc287230af38926187075cbfbefa81009a2ce615ac53d2914e5870cb452d2afaaab24f3499f72185cbfee53492714734429b7b38608e23926c911cceceac9a36851477ba4c60b087041de621000edc98edada20c1def2";

const { Fp, Fp12 } = curve.fields;
const G1 = curve.G1.Point;
const G2 = curve.G2.Point;
type G1Point = InstanceType<typeof G1>;
type G2Point = InstanceType<typeof G2>;

/** [τ]G2, decompressed the first time a proof is checked (not when the engine loads: a G2 square root). */
let tauG2: G2Point | undefined;
function tauG2Point(): G2Point {
  tauG2 ??= G2.fromHex(TRUSTED_SETUP_TAU_G2);
  return tauG2;
}
const OUTPUT = new Uint8Array([...fixedBytes(FIELD_ELEMENTS_PER_BLOB, 32), ...fixedBytes(BLS_MODULUS, 32)]);

/**
 * A 48-byte compressed G1 point as blst_p1_uncompress and c-kzg's validate_kzg_g1 accept it: the
 * compression flag set; infinity exactly 0xc0 ‖ zeros; otherwise x below p, on the curve, y chosen
 * by the sort flag (set: the larger of y, p − y), and in the r-order subgroup. Undefined otherwise.
 */
export function decodeCompressedG1(bytes: Uint8Array): G1Point | undefined {
  const flags = bytes[0] as number;
  if ((flags & 0x80) === 0) return undefined;
  const infinity = (flags & 0x40) !== 0;
  const larger = (flags & 0x20) !== 0;
  if (infinity) {
    if (larger || (flags & 0x1f) !== 0) return undefined;
    for (let i = 1; i < 48; i++) if (bytes[i] !== 0) return undefined;
    return G1.ZERO;
  }
  const xBytes = bytes.slice(0, 48);
  xBytes[0] = flags & 0x1f;
  const x = toBigint(xBytes);
  if (x >= Fp.ORDER) return undefined;
  let y: bigint;
  try {
    y = Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), 4n));
  } catch {
    return undefined; // x³ + 4 is not a square: no point
  }
  if (y * 2n > Fp.ORDER !== larger) y = Fp.neg(y);
  const point = G1.fromAffine({ x, y });
  try {
    point.assertValidity();
  } catch {
    return undefined;
  }
  return point;
}

function times(p: G1Point, k: bigint): G1Point {
  return k === 0n || p.is0() ? G1.ZERO : p.multiplyUnsafe(k);
}

/** c-kzg's verify_kzg_proof: z and y below BLS_MODULUS, commitment and proof valid G1 points. */
export function verifyKzgProof(commitment: Uint8Array, z: bigint, y: bigint, proof: Uint8Array): boolean {
  if (z >= BLS_MODULUS || y >= BLS_MODULUS) return false;
  const c = decodeCompressedG1(commitment);
  const pi = decodeCompressedG1(proof);
  if (c === undefined || pi === undefined) return false;
  const lhs = c.subtract(times(G1.BASE, y)).add(times(pi, z));
  const pairs = [];
  if (!lhs.is0()) pairs.push({ g1: lhs, g2: G2.BASE });
  if (!pi.is0()) pairs.push({ g1: pi.negate(), g2: tauG2Point() });
  return Fp12.eql(curve.pairingBatch(pairs), Fp12.ONE);
}

export function kzgPointEvaluation(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < GAS) return outOfGas();
  if (input.length !== INPUT_LENGTH) return failure("invalid input length");
  const commitment = input.subarray(96, 144);
  const hash = sha256(commitment);
  hash[0] = VERSIONED_HASH_VERSION_KZG;
  for (let i = 0; i < 32; i++) if (hash[i] !== input[i]) return failure("mismatched versioned hash");
  const z = toBigint(input.subarray(32, 64));
  const y = toBigint(input.subarray(64, 96));
  try {
    if (!verifyKzgProof(commitment, z, y, input.subarray(144, 192))) return failure("error verifying kzg proof");
  } catch {
    return failure("error verifying kzg proof");
  }
  return success(GAS, OUTPUT.slice());
}
