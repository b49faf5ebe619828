/**
 * Keccak-256 as a small WebAssembly module that this file assembles at load time (no binary is shipped,
 * nothing is fetched): Keccak-f[1600] on 64-bit lanes, which WebAssembly has and JavaScript does not.
 *
 * Why our own: the permutation is 24 rounds of XOR, AND-NOT and rotations over 25 64-bit lanes. In
 * JavaScript a lane is two 32-bit halves and a rotation four shifts; as WebAssembly `i64.rotl` it is one
 * instruction. hash-wasm's Keccak module (compiled from C, with init/update/final around a byte-oriented
 * absorb) took ~0.9–1.0 µs of CPU per 64-byte input; this module ~0.55–0.7 µs (CPU time, the two
 * interleaved in one process on the 2-core dev machine, 2026-11-29). A fully unrolled permutation (24
 * copies of the round, constants inline) was slower than the loop (~0.95 µs): 18 kB of code and more
 * spills.
 *
 * Memory layout (one 64 KiB page):
 *   0..200     the state: 25 lanes, little-endian (lane x + 5y at byte 8(x + 5y)), the digest in its
 *              first 32 bytes after a hash
 *   200..392   the 24 round constants (a data segment)
 *   INPUT..    the input, padded by the caller to whole 136-byte blocks (the rate of Keccak-256)
 *
 * Exports: `memory`; `absorb(blocks)`: XOR `blocks` blocks from INPUT into the state, permuting after
 * each; `hash(blocks)`: zero the state, then absorb. Padding (Keccak's 0x01 ... 0x80, not SHA-3's 0x06)
 * is the caller's (crypto.ts).
 */

/** Where the input starts in the module's memory. */
export const INPUT = 512;
/** Keccak-256's rate in bytes: the block size of the sponge. */
export const RATE = 136;
/** Input bytes that fit in the module's memory at once (whole blocks; longer inputs are absorbed in turns). */
export const INPUT_BLOCKS = Math.floor((65536 - INPUT) / RATE);

const ROUND_CONSTANTS = [
  0x0000000000000001n,
  0x0000000000008082n,
  0x800000000000808an,
  0x8000000080008000n,
  0x000000000000808bn,
  0x0000000080000001n,
  0x8000000080008081n,
  0x8000000000008009n,
  0x000000000000008an,
  0x0000000000000088n,
  0x0000000080008009n,
  0x000000008000000an,
  0x000000008000808bn,
  0x800000000000008bn,
  0x8000000000008089n,
  0x8000000000008003n,
  0x8000000000008002n,
  0x8000000000000080n,
  0x000000000000800an,
  0x800000008000000an,
  0x8000000080008081n,
  0x8000000000008080n,
  0x0000000080000001n,
  0x8000000080008008n,
];
/** ρ: the rotation of lane x + 5y. */
const RHO = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

// WebAssembly opcodes and encodings used below.
const I32 = 0x7f;
const I64 = 0x7e;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I64_LOAD = 0x29;
const I64_STORE = 0x37;
const I64_XOR = 0x85;
const I64_AND = 0x83;
const I64_ROTL = 0x89;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const I32_LT_U = 0x49;
const I32_EQZ = 0x45;
const CALL = 0x10;
const BLOCK = 0x02;
const LOOP = 0x03;
const BR = 0x0c;
const BR_IF = 0x0d;
const END = 0x0b;
const VOID = 0x40;
/** memarg alignment 2^3 for i64 loads and stores. */
const ALIGN8 = 3;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(value: bigint): number[] {
  let v = BigInt.asIntN(64, value);
  const out: number[] = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
const name = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
const get = (l: number): number[] => [LOCAL_GET, ...uleb(l)];
const set = (l: number): number[] => [LOCAL_SET, ...uleb(l)];
const i32 = (v: number): number[] => [I32_CONST, ...sleb(BigInt(v))];
const i64 = (v: bigint): number[] => [I64_CONST, ...sleb(v)];

/** permute(): Keccak-f[1600] on the state at 0, through 60 i64 locals and an i32 round counter. */
function permuteBody(): number[] {
  const a = (i: number) => i;
  const b = (i: number) => 25 + i;
  const c = (x: number) => 50 + x;
  const d = (x: number) => 55 + x;
  const round = 60;
  const code: number[] = [];
  for (let i = 0; i < 25; i++) code.push(...i32(0), I64_LOAD, ALIGN8, ...uleb(8 * i), ...set(a(i)));
  code.push(...i32(0), ...set(round), LOOP, VOID);
  // θ: column parities, then each lane XOR the parity of its left neighbour and the rotated right one.
  for (let x = 0; x < 5; x++) {
    code.push(...get(a(x)), ...get(a(x + 5)), I64_XOR, ...get(a(x + 10)), I64_XOR, ...get(a(x + 15)), I64_XOR);
    code.push(...get(a(x + 20)), I64_XOR, ...set(c(x)));
  }
  for (let x = 0; x < 5; x++) {
    code.push(...get(c((x + 4) % 5)), ...get(c((x + 1) % 5)), ...i64(1n), I64_ROTL, I64_XOR, ...set(d(x)));
  }
  // ρ and π: lane (x, y) rotated by ρ lands at (y, 2x + 3y).
  for (let x = 0; x < 5; x++) {
    for (let y = 0; y < 5; y++) {
      const i = x + 5 * y;
      code.push(...get(a(i)), ...get(d(x)), I64_XOR);
      if (RHO[i] !== 0) code.push(...i64(BigInt(RHO[i] as number)), I64_ROTL);
      code.push(...set(b(y + 5 * ((2 * x + 3 * y) % 5))));
    }
  }
  // χ: each lane XOR (NOT its right neighbour AND the one after).
  for (let y = 0; y < 5; y++) {
    for (let x = 0; x < 5; x++) {
      code.push(...get(b(x + 5 * y)), ...get(b(((x + 1) % 5) + 5 * y)), ...i64(-1n), I64_XOR);
      code.push(...get(b(((x + 2) % 5) + 5 * y)), I64_AND, I64_XOR, ...set(a(x + 5 * y)));
    }
  }
  // ι: lane 0 XOR the round constant at 200 + 8·round; then the next round while round < 24.
  code.push(...get(a(0)), ...get(round), ...i32(3), I32_SHL, I64_LOAD, ALIGN8, ...uleb(200), I64_XOR, ...set(a(0)));
  code.push(...get(round), ...i32(1), I32_ADD, LOCAL_TEE, ...uleb(round), ...i32(24), I32_LT_U, BR_IF, 0, END);
  for (let i = 0; i < 25; i++) code.push(...i32(0), ...get(a(i)), I64_STORE, ALIGN8, ...uleb(8 * i));
  code.push(END);
  return [
    ...vec([
      [...uleb(60), I64],
      [1, I32],
    ]),
    ...code,
  ];
}

/** absorb(blocks): for each block at INPUT + 136k, XOR its 17 lanes into the state and permute. */
function absorbBody(): number[] {
  const blocks = 0;
  const at = 1;
  const code: number[] = [];
  code.push(...i32(INPUT), ...set(at), BLOCK, VOID, LOOP, VOID, ...get(blocks), I32_EQZ, BR_IF, 1);
  for (let i = 0; i < RATE / 8; i++) {
    code.push(...i32(0), ...i32(0), I64_LOAD, ALIGN8, ...uleb(8 * i));
    code.push(...get(at), I64_LOAD, ALIGN8, ...uleb(8 * i), I64_XOR, I64_STORE, ALIGN8, ...uleb(8 * i));
  }
  code.push(CALL, 0, ...get(at), ...i32(RATE), I32_ADD, ...set(at));
  code.push(...get(blocks), ...i32(1), I32_SUB, ...set(blocks), BR, 0, END, END, END);
  return [...vec([[1, I32]]), ...code];
}

/** hash(blocks): zero the state, then absorb(blocks). */
function hashBody(): number[] {
  const code: number[] = [];
  for (let i = 0; i < 25; i++) code.push(...i32(0), ...i64(0n), I64_STORE, ALIGN8, ...uleb(8 * i));
  code.push(...get(0), CALL, 1, END);
  return [...vec([]), ...code];
}

/** The module's bytes. */
export function keccakModuleBytes(): Uint8Array {
  const body = (b: number[]) => [...uleb(b.length), ...b];
  const constants: number[] = [];
  for (const rc of ROUND_CONSTANTS) for (let i = 0n; i < 8n; i++) constants.push(Number((rc >> (8n * i)) & 0xffn));
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(
      1,
      vec([
        [0x60, 0, 0],
        [0x60, 1, I32, 0],
      ]),
    ),
    ...section(3, vec([[0], [1], [1]])),
    ...section(5, vec([[0, 1]])),
    ...section(
      7,
      vec([
        [...name("memory"), 2, 0],
        [...name("absorb"), 0, 1],
        [...name("hash"), 0, 2],
      ]),
    ),
    ...section(10, vec([body(permuteBody()), body(absorbBody()), body(hashBody())])),
    ...section(11, vec([[0, ...i32(200), END, ...uleb(constants.length), ...constants]])),
  ]);
}
