import { bech32 } from "@scure/base";
import { bytesToHex } from "../../util/bytes.js";
import { ComethError } from "../../util/errors.js";
import { keccak256 } from "./crypto.js";

/**
 * Cosmos EVM's Bech32 precompile (precompiles/bech32, enabled by evmd's genesis): the one Cosmos
 * precompile that needs no Cosmos SDK module, only address encoding.
 *
 *   hexToBech32(address addr, string prefix) returns (string)
 *   bech32ToHex(string bech32Address) returns (address)
 *
 * 6000 gas per call (precompiles/types bech32PrecompileBaseGas). As a Go precompile: input shorter
 * than a selector reverts (the rest of the gas is returned); an unknown selector, undecodable
 * arguments, an empty prefix or an invalid bech32 string fail and consume all the gas, with the error's
 * text as the call's VM error.
 */

export const BECH32_PRECOMPILE_ADDRESS = "0x0000000000000000000000000000000000000400";
export const BECH32_BASE_GAS = 6000n;
/** Cosmos SDK's bech32 decoder accepts strings up to 1023 characters (bech32.DecodeAndConvert). */
const MAX_BECH32_LENGTH = 1023;

const selector = (signature: string) => bytesToHex(keccak256(new TextEncoder().encode(signature)).subarray(0, 4));
const HEX_TO_BECH32 = selector("hexToBech32(address,string)");
const BECH32_TO_HEX = selector("bech32ToHex(string)");

class PrecompileFailure extends ComethError {}

/** The ABI word at `at` as a number; fails as go-ethereum's abi decoder does when out of range. */
function wordAt(args: Uint8Array, at: number): number {
  if (at + 32 > args.length) throw new PrecompileFailure("abi: cannot marshal in to go type: length insufficient");
  const w = args.subarray(at, at + 32);
  if (w.subarray(0, 24).some((b) => b !== 0))
    throw new PrecompileFailure("abi: cannot marshal in to go type: offset or length too large");
  return Number(Buffer.from(w.subarray(24)).readBigUInt64BE());
}

/** A dynamic `string` argument whose offset word is at `head`. */
function stringArg(args: Uint8Array, head: number): string {
  const offset = wordAt(args, head);
  const length = wordAt(args, offset);
  if (offset + 32 + length > args.length)
    throw new PrecompileFailure("abi: cannot marshal in to go type: length insufficient");
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
  if (args.length < 32) throw new PrecompileFailure("abi: cannot marshal in to go type: length insufficient");
  const address = args.subarray(12, 32);
  const prefix = stringArg(args, 32);
  if (prefix.trim() === "") {
    throw new PrecompileFailure(
      "invalid bech32 human readable prefix (HRP). Please provide a either an account, validator or consensus address prefix (eg: cosmos, cosmosvaloper, cosmosvalcons)",
    );
  }
  try {
    return encodeString(bech32.encode(prefix, bech32.toWords(address), MAX_BECH32_LENGTH));
  } catch (err) {
    throw new PrecompileFailure(`encoding bech32 failed: ${(err as Error).message}`);
  }
}

function bech32ToHex(args: Uint8Array): Uint8Array {
  const text = stringArg(args, 0);
  const one = text.indexOf("1");
  if (text === "" || one < 0) throw new PrecompileFailure(`invalid bech32 address: ${text}`);
  let bytes: Uint8Array;
  try {
    const decoded = bech32.decode(text as `${string}1${string}`, MAX_BECH32_LENGTH);
    bytes = bech32.fromWords(decoded.words);
  } catch (err) {
    throw new PrecompileFailure(`decoding bech32 failed: ${(err as Error).message}`);
  }
  if (bytes.length === 0) throw new PrecompileFailure("addresses cannot be empty: unknown address");
  if (bytes.length > 255)
    throw new PrecompileFailure(`address max length is 255, got ${bytes.length}: unknown address`);
  // common.BytesToAddress: the last 20 bytes, left-padded when shorter
  const out = new Uint8Array(32);
  const tail = bytes.subarray(Math.max(0, bytes.length - 20));
  out.set(tail, 32 - tail.length);
  return out;
}

/**
 * A call's outcome, without gas (the same for every EVM that serves it): output, a revert (input
 * shorter than a selector) or a failure with the Go precompile's text.
 */
export type Bech32Outcome = { readonly output: Uint8Array } | { readonly revert: true } | { readonly error: string };

export function runBech32(data: Uint8Array): Bech32Outcome {
  if (data.length < 4) return { revert: true };
  const method = bytesToHex(data.subarray(0, 4));
  const args = data.subarray(4);
  try {
    if (method === HEX_TO_BECH32) return { output: hexToBech32(args) };
    if (method === BECH32_TO_HEX) return { output: bech32ToHex(args) };
    return { error: `no method with id: 0x${method}` };
  } catch (err) {
    if (!(err instanceof PrecompileFailure)) throw err;
    return { error: err.message };
  }
}
