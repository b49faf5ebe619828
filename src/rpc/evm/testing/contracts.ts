import { keccak_256 } from "@noble/hashes/sha3.js";

/**
 * Small contracts the test chain (realChain.ts) holds at genesis, at fixed addresses. Test support
 * only.
 */

function contractAddress(last: number): Uint8Array {
  const a = new Uint8Array(20);
  a[18] = 0xc0;
  a[19] = last;
  return a;
}

/** Returns its calldata. */
export const ECHO = contractAddress(1);
/** Reverts with Error("boom"). */
export const REVERTER = contractAddress(2);
/** Reverts with Panic(0x11) (arithmetic underflow or overflow). */
export const PANICKER = contractAddress(3);
/** Runs out of gas at once (a 16 MiB memory read). */
export const FAILER = contractAddress(4);
/** Loops until its gas or the call's time runs out. */
export const SLOW = contractAddress(5);
/** Emits Transfer(caller, calldata[0:20] or itself, callvalue); storage slot 0 holds 42. */
export const LOGGER = contractAddress(6);
export const TRANSFER_TOPIC = keccak_256(Buffer.from("Transfer(address,address,uint256)"));

/** CALLDATACOPY(0, 0, size) RETURN(0, size). */
export const ECHO_CODE = Uint8Array.from([0x36, 0x5f, 0x5f, 0x37, 0x36, 0x5f, 0xf3]);

/** Code that reverts with `data` (copied from its own tail). */
function revertingWith(data: Uint8Array): Uint8Array {
  const n = data.length;
  return Uint8Array.from([0x60, n, 0x60, 10, 0x5f, 0x39, 0x60, n, 0x5f, 0xfd, ...data]);
}

/** `v` as a 32-byte big-endian word. */
export function word(v: bigint): Uint8Array {
  return Buffer.from(v.toString(16).padStart(64, "0"), "hex");
}

export const REVERTER_CODE = revertingWith(
  Buffer.concat([Buffer.from("08c379a0", "hex"), word(32n), word(4n), Buffer.from("boom".padEnd(32, "\0"))]),
);
export const PANICKER_CODE = revertingWith(Buffer.concat([Buffer.from("4e487b71", "hex"), word(0x11n)]));
/** PUSH4 0x00ffffff MLOAD STOP. */
export const FAILER_CODE = Uint8Array.from([0x63, 0x00, 0xff, 0xff, 0xff, 0x51, 0x00]);
/** JUMPDEST PUSH0 JUMP. */
export const SLOW_CODE = Uint8Array.from([0x5b, 0x5f, 0x56]);
export const LOGGER_CODE = Uint8Array.from([
  ...[0x34, 0x5f, 0x52], // mstore(0, callvalue)
  0x30, // to = address
  ...[0x60, 20, 0x36, 0x10, 0x60, 0x11, 0x57], // if calldatasize < 20 jump to 0x11
  ...[0x50, 0x5f, 0x35, 0x60, 0x60, 0x1c], // to = calldataload(0) >> 96
  0x5b,
  0x33, // from = caller
  0x7f,
  ...TRANSFER_TOPIC,
  ...[0x60, 0x20, 0x5f, 0xa3, 0x00], // log3(0, 32, topic, from, to)
]);
/** What a creation tx of the seed runs: sstore(0x40, 0x80), no runtime code. */
export const STORING_INITCODE = Uint8Array.from([0x60, 0x80, 0x60, 0x40, 0x55]);
