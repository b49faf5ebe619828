import type { PrecompileResult } from "../types.js";
import { failure, outOfGas, success } from "./result.js";

/**
 * 0x09 BLAKE2F (EIP-152): the BLAKE2b compression function F with a caller-chosen number of rounds,
 * one gas per round. Input: rounds (4 bytes, big-endian) ‖ h (8 × 8) ‖ m (16 × 8) ‖ t (2 × 8), words
 * little-endian ‖ f (1 byte, 0 or 1); output: the new h (64 bytes). 64-bit words are kept as two
 * 32-bit halves (low at 2i, high at 2i + 1) so no BigInt is made per round.
 */

const INPUT_LENGTH = 213;

/** RFC 7693's IV (the SHA-512 IV), as [low, high] halves. */
const IV = Uint32Array.from([
  0xf3bcc908, 0x6a09e667, 0x84caa73b, 0xbb67ae85, 0xfe94f82b, 0x3c6ef372, 0x5f1d36f1, 0xa54ff53a, 0xade682d1,
  0x510e527f, 0x2b3e6c1f, 0x9b05688c, 0xfb41bd6b, 0x1f83d9ab, 0x137e2179, 0x5be0cd19,
]);

/** RFC 7693's message schedule; round i uses row i mod 10. Entries are word indexes × 2 (halves). */
const SIGMA = Uint8Array.from(
  [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
  ]
    .flat()
    .map((i) => i * 2),
);

/** The mixing function G on words a, b, c, d of v (half indexes) with message words at x and y of m. */
function mix(v: Uint32Array, m: Uint32Array, a: number, b: number, c: number, d: number, x: number, y: number): void {
  // a = a + b + m[x]
  let lo = (v[a] as number) + (v[b] as number);
  let hi = (v[a + 1] as number) + (v[b + 1] as number) + (lo > 0xffffffff ? 1 : 0);
  lo >>>= 0;
  let lo2 = lo + (m[x] as number);
  v[a + 1] = hi + (m[x + 1] as number) + (lo2 > 0xffffffff ? 1 : 0);
  v[a] = lo2;
  // d = (d ^ a) >>> 32
  lo = (v[d] as number) ^ (v[a] as number);
  hi = (v[d + 1] as number) ^ (v[a + 1] as number);
  v[d] = hi;
  v[d + 1] = lo;
  // c = c + d
  lo = (v[c] as number) + (v[d] as number);
  v[c + 1] = (v[c + 1] as number) + (v[d + 1] as number) + (lo > 0xffffffff ? 1 : 0);
  v[c] = lo;
  // b = (b ^ c) >>> 24
  lo = (v[b] as number) ^ (v[c] as number);
  hi = (v[b + 1] as number) ^ (v[c + 1] as number);
  v[b] = (lo >>> 24) | (hi << 8);
  v[b + 1] = (hi >>> 24) | (lo << 8);
  // a = a + b + m[y]
  lo = (v[a] as number) + (v[b] as number);
  hi = (v[a + 1] as number) + (v[b + 1] as number) + (lo > 0xffffffff ? 1 : 0);
  lo >>>= 0;
  lo2 = lo + (m[y] as number);
  v[a + 1] = hi + (m[y + 1] as number) + (lo2 > 0xffffffff ? 1 : 0);
  v[a] = lo2;
  // d = (d ^ a) >>> 16
  lo = (v[d] as number) ^ (v[a] as number);
  hi = (v[d + 1] as number) ^ (v[a + 1] as number);
  v[d] = (lo >>> 16) | (hi << 16);
  v[d + 1] = (hi >>> 16) | (lo << 16);
  // c = c + d
  lo = (v[c] as number) + (v[d] as number);
  v[c + 1] = (v[c + 1] as number) + (v[d + 1] as number) + (lo > 0xffffffff ? 1 : 0);
  v[c] = lo;
  // b = (b ^ c) >>> 63, that is <<< 1
  lo = (v[b] as number) ^ (v[c] as number);
  hi = (v[b + 1] as number) ^ (v[c + 1] as number);
  v[b] = (lo << 1) | (hi >>> 31);
  v[b + 1] = (hi << 1) | (lo >>> 31);
}

/**
 * F(h, m, t, f) with `rounds` rounds (RFC 7693 3.2, rounds generalised by EIP-152). h (16 halves) is
 * updated in place; m has 32 halves, t 4 halves.
 */
export function blake2bCompress(rounds: number, h: Uint32Array, m: Uint32Array, t: Uint32Array, f: boolean): void {
  const v = new Uint32Array(32);
  v.set(h, 0);
  v.set(IV, 16);
  v[24] = (v[24] as number) ^ (t[0] as number);
  v[25] = (v[25] as number) ^ (t[1] as number);
  v[26] = (v[26] as number) ^ (t[2] as number);
  v[27] = (v[27] as number) ^ (t[3] as number);
  if (f) {
    v[28] = ~(v[28] as number);
    v[29] = ~(v[29] as number);
  }
  for (let r = 0; r < rounds; r++) {
    const s = (r % 10) * 16;
    mix(v, m, 0, 8, 16, 24, SIGMA[s] as number, SIGMA[s + 1] as number);
    mix(v, m, 2, 10, 18, 26, SIGMA[s + 2] as number, SIGMA[s + 3] as number);
    mix(v, m, 4, 12, 20, 28, SIGMA[s + 4] as number, SIGMA[s + 5] as number);
    mix(v, m, 6, 14, 22, 30, SIGMA[s + 6] as number, SIGMA[s + 7] as number);
    mix(v, m, 0, 10, 20, 30, SIGMA[s + 8] as number, SIGMA[s + 9] as number);
    mix(v, m, 2, 12, 22, 24, SIGMA[s + 10] as number, SIGMA[s + 11] as number);
    mix(v, m, 4, 14, 16, 26, SIGMA[s + 12] as number, SIGMA[s + 13] as number);
    mix(v, m, 6, 8, 18, 28, SIGMA[s + 14] as number, SIGMA[s + 15] as number);
  }
  for (let i = 0; i < 16; i++) h[i] = (h[i] as number) ^ (v[i] as number) ^ (v[i + 16] as number);
}

function halves(input: Uint8Array, at: number, count: number): Uint32Array {
  const view = new DataView(input.buffer, input.byteOffset + at, count * 4);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

export function blake2f(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (input.length !== INPUT_LENGTH) return failure("invalid input length");
  const final = input[212];
  if (final !== 0 && final !== 1) return failure("invalid final flag");
  const rounds = new DataView(input.buffer, input.byteOffset, 4).getUint32(0);
  const gas = BigInt(rounds);
  if (gasLimit < gas) return outOfGas();
  const h = halves(input, 4, 16);
  blake2bCompress(rounds, h, halves(input, 68, 32), halves(input, 196, 4), final === 1);
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 16; i++) view.setUint32(i * 4, h[i] as number, true);
  return success(gas, out);
}
