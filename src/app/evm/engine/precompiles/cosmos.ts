import { bech32 } from "@scure/base";
import { bytesToHex } from "../../../../util/bytes.js";
import { BECH32_BASE_GAS } from "../../bech32Precompile.js";
import { keccak256 } from "../../crypto.js";
import { P256_VERIFY_GAS, verifyP256 } from "../../p256Precompile.js";
import type { PrecompileResult } from "../types.js";
import { failure, outOfGas, success } from "./result.js";

/**
 * The app's precompiles from Cosmos EVM's evmd defaults, as src/app/evm/p256Precompile.ts and
 * bech32Precompile.ts give them to @ethereumjs/evm: P256 at 0x…0100 (RIP-7212 at Cosmos EVM's 3450
 * gas) and Bech32 at 0x…0400 (6000 gas). The P256 check is imported; the Bech32 ABI handling is a copy
 * of bech32Precompile.ts's (private there), returning this engine's results.
 */

const P256_VALID = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0));
const EMPTY = new Uint8Array(0);

/** 0x…0100: 32 bytes ending in 1 when the signature verifies, empty otherwise; 3450 gas in every case. */
export function p256Verify(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < P256_VERIFY_GAS) return outOfGas();
  return success(P256_VERIFY_GAS, verifyP256(input) ? P256_VALID.slice() : EMPTY);
}

/** Cosmos SDK's bech32 decoder accepts strings up to 1023 characters (bech32.DecodeAndConvert). */
const MAX_BECH32_LENGTH = 1023;

const selector = (signature: string) => bytesToHex(keccak256(new TextEncoder().encode(signature)).subarray(0, 4));
const HEX_TO_BECH32 = selector("hexToBech32(address,string)");
const BECH32_TO_HEX = selector("bech32ToHex(string)");

/** A call the Go precompile ends with an error: all gas consumed, the message as the VM error. */
class Bech32Failure extends Error {}

/** The ABI word at `at` as a number; fails as go-ethereum's abi decoder does when out of range. */
function wordAt(args: Uint8Array, at: number): number {
  if (at + 32 > args.length) throw new Bech32Failure("abi: cannot marshal in to go type: length insufficient");
  const w = args.subarray(at, at + 32);
  if (w.subarray(0, 24).some((b) => b !== 0))
    throw new Bech32Failure("abi: cannot marshal in to go type: offset or length too large");
  return Number(Buffer.from(w.subarray(24)).readBigUInt64BE());
}

/** A dynamic `string` argument whose offset word is at `head`. */
function stringArg(args: Uint8Array, head: number): string {
  const offset = wordAt(args, head);
  const length = wordAt(args, offset);
  if (offset + 32 + length > args.length)
    throw new Bech32Failure("abi: cannot marshal in to go type: length insufficient");
  return new TextDecoder().decode(args.subarray(offset + 32, offset + 32 + length));
}

function encodeString(s: string): Uint8Array {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(64 + Math.ceil(bytes.length / 32) * 32);
  out[31] = 0x20;
  Buffer.from(out.buffer, out.byteOffset, out.length).writeUInt32BE(bytes.length, 60);
  out.set(bytes, 64);
  return out;
}

function hexToBech32(args: Uint8Array): Uint8Array {
  if (args.length < 32) throw new Bech32Failure("abi: cannot marshal in to go type: length insufficient");
  const address = args.subarray(12, 32);
  const prefix = stringArg(args, 32);
  if (prefix.trim() === "") {
    throw new Bech32Failure(
      "invalid bech32 human readable prefix (HRP). Please provide a either an account, validator or consensus address prefix (eg: cosmos, cosmosvaloper, cosmosvalcons)",
    );
  }
  try {
    return encodeString(bech32.encode(prefix, bech32.toWords(address), MAX_BECH32_LENGTH));
  } catch (err) {
    throw new Bech32Failure(`encoding bech32 failed: ${(err as Error).message}`);
  }
}

function bech32ToHex(args: Uint8Array): Uint8Array {
  const text = stringArg(args, 0);
  const one = text.indexOf("1");
  if (text === "" || one < 0) throw new Bech32Failure(`invalid bech32 address: ${text}`);
  let bytes: Uint8Array;
  try {
    const decoded = bech32.decode(text as `${string}1${string}`, MAX_BECH32_LENGTH);
    bytes = bech32.fromWords(decoded.words);
  } catch (err) {
    throw new Bech32Failure(`decoding bech32 failed: ${(err as Error).message}`);
  }
  if (bytes.length === 0) throw new Bech32Failure("addresses cannot be empty: unknown address");
  if (bytes.length > 255) throw new Bech32Failure(`address max length is 255, got ${bytes.length}: unknown address`);
  // common.BytesToAddress: the last 20 bytes, left-padded when shorter
  const out = new Uint8Array(32);
  const tail = bytes.subarray(Math.max(0, bytes.length - 20));
  out.set(tail, 32 - tail.length);
  return out;
}

/**
 * 0x…0400: hexToBech32(address,string) / bech32ToHex(string). Input shorter than a selector reverts
 * with the rest of the gas returned; an unknown selector or bad arguments fail (all gas).
 */
export function bech32Precompile(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < BECH32_BASE_GAS) return outOfGas();
  if (input.length < 4) return { ok: "revert", gasUsed: BECH32_BASE_GAS, output: EMPTY };
  const method = bytesToHex(input.subarray(0, 4));
  const args = input.subarray(4);
  try {
    if (method === HEX_TO_BECH32) return success(BECH32_BASE_GAS, hexToBech32(args));
    if (method === BECH32_TO_HEX) return success(BECH32_BASE_GAS, bech32ToHex(args));
    return failure(`no method with id: 0x${method}`);
  } catch (err) {
    return failure(err instanceof Bech32Failure ? err.message : String(err));
  }
}
