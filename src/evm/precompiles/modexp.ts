import type { PrecompileResult } from "../types.js";
import { failure, fixedBytes, outOfGas, readPadded, success } from "./result.js";

/**
 * 0x05 MODEXP: EIP-198 with EIP-2565's gas (Berlin to Prague; EIP-7823's length cap and EIP-7883's
 * prices are Osaka's). The lengths are 256-bit words and the operands are read past the input as
 * zeros, so gas is computed from the lengths alone, before anything is allocated.
 */

const MIN_GAS = 200n;
/** Past this, geth's gas is 2^64-1 at least, and ethereumjs fails the call whatever the gas. */
const MAX_LENGTH = 2147483647n;
const EMPTY = new Uint8Array(0);

/** EIP-2565's gas for the lengths and the exponent's first (at most 32) bytes. */
export function modexpGas(baseLen: bigint, expLen: bigint, modLen: bigint, expHead: bigint): bigint {
  const maxLen = baseLen > modLen ? baseLen : modLen;
  const w = (maxLen + 7n) / 8n;
  let iterations = expLen > 32n ? (expLen - 32n) * 8n : 0n;
  if (expHead > 0n) iterations += BigInt(expHead.toString(2).length - 1);
  if (iterations < 1n) iterations = 1n;
  const gas = (w * w * iterations) / 3n;
  return gas < MIN_GAS ? MIN_GAS : gas;
}

export function modexp(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const baseLen = readPadded(input, 0n, 32n);
  const expLen = readPadded(input, 32n, 32n);
  const modLen = readPadded(input, 64n, 32n);
  const expStart = 96n + baseLen;
  const expHead = readPadded(input, expStart, expLen < 32n ? expLen : 32n);
  const gas = modexpGas(baseLen, expLen, modLen, expHead);
  if (gasLimit < gas) return outOfGas();
  if (baseLen === 0n && modLen === 0n) return success(gas, EMPTY);
  // Unreachable below ~5.7e9 gas (modLen or baseLen) or ~5.7e9 gas (expLen with a 1-byte modulus)
  if (baseLen > MAX_LENGTH || expLen > MAX_LENGTH || modLen > MAX_LENGTH) return failure("out of gas");
  const mod = readPadded(input, expStart + expLen, modLen);
  const size = Number(modLen);
  if (mod === 0n) return success(gas, new Uint8Array(size));
  const base = readPadded(input, 96n, baseLen);
  const exp = readPadded(input, expStart, expLen);
  return success(gas, fixedBytes(powMod(base, exp, mod), size));
}

/** base^exp mod m (m > 0): a fixed 4-bit window over the exponent's hex digits. */
export function powMod(base: bigint, exp: bigint, m: bigint): bigint {
  if (m === 1n) return 0n;
  const b = base % m;
  if (exp === 0n) return 1n;
  if (b === 0n || b === 1n) return b;
  const table: bigint[] = [1n, b];
  for (let i = 2; i < 16; i++) table.push(((table[i - 1] as bigint) * b) % m);
  const hex = exp.toString(16);
  let r = table[Number.parseInt(hex[0] as string, 16)] as bigint;
  for (let i = 1; i < hex.length; i++) {
    r = (r * r) % m;
    r = (r * r) % m;
    r = (r * r) % m;
    r = (r * r) % m;
    const digit = Number.parseInt(hex[i] as string, 16);
    if (digit !== 0) r = (r * (table[digit] as bigint)) % m;
  }
  return r;
}
