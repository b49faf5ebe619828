import type { PrecompileResult } from "../types.js";

/** Helpers shared by the precompiles: results, and big-endian words read as geth's getData does. */

const OUT_OF_GAS: PrecompileResult = Object.freeze({ ok: false, error: "out of gas" });

/** A failure: no output, all the gas the call was given is consumed. `error` is geth's text. */
export function failure(error: string): PrecompileResult {
  return { ok: false, error };
}

export function outOfGas(): PrecompileResult {
  return OUT_OF_GAS;
}

export function success(gasUsed: bigint, output: Uint8Array): PrecompileResult {
  return { ok: true, gasUsed, output };
}

/** EIP-2929-era word count: ceil(length / 32). */
export function words(length: number): bigint {
  return BigInt(Math.ceil(length / 32));
}

/** The unsigned big-endian integer of `b` (0 when empty). */
export function toBigint(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  return BigInt(`0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex")}`);
}

/**
 * The integer of `size` bytes of `input` from `start`, the bytes past the input read as zeros (geth's
 * getData, right-padded): the available bytes shifted left by the missing ones, so a huge `size`
 * allocates nothing.
 */
export function readPadded(input: Uint8Array, start: bigint, size: bigint): bigint {
  const len = BigInt(input.length);
  if (size === 0n) return 0n;
  if (start >= len) return 0n;
  const end = start + size < len ? start + size : len;
  const value = toBigint(input.subarray(Number(start), Number(end)));
  if (value === 0n) return 0n;
  return value << (8n * (size - (end - start)));
}

/** `n` as exactly `length` big-endian bytes (n < 256^length). */
export function fixedBytes(n: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  if (n === 0n) return out;
  const hex = n.toString(16);
  const bytes = Buffer.from(hex.length % 2 === 1 ? `0${hex}` : hex, "hex");
  out.set(bytes, length - bytes.length);
  return out;
}

/** `input` right-padded with zeros (or cut) to `length` bytes. */
export function padRight(input: Uint8Array, length: number): Uint8Array {
  if (input.length === length) return input;
  if (input.length > length) return input.subarray(0, length);
  const out = new Uint8Array(length);
  out.set(input);
  return out;
}
