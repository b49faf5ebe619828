/**
 * The differential's test contracts, hand-assembled (no compiler is a dependency). Each is the
 * runtime code, commented opcode by opcode; `initcode` wraps runtime code in a constructor that
 * returns it.
 */

function hex(...parts: string[]): string {
  const s = parts.join("").replace(/\s+/g, "");
  if (!/^([0-9a-f]{2})*$/.test(s)) throw new Error(`bad hex ${s}`);
  return s;
}

/** PUSH2 len; DUP1; PUSH2 11; PUSH0; CODECOPY; PUSH0; RETURN — then the runtime (11-byte prefix). */
export function initcode(runtime: string): string {
  const len = runtime.length / 2;
  return `0x${hex("61", len.toString(16).padStart(4, "0"), "80", "61000b", "5f", "39", "5f", "f3")}${runtime}`;
}

/** Emits five logs with 0, 1, 2, 3 and 4 topics (topics 1..4), each with calldata word 0 as data. */
export const LOGGER = hex(
  "5f35 5f52", // mem[0..32] = calldataload(0)
  "6020 5f a0", // LOG0(0, 32)
  "6001 6020 5f a1", // LOG1(0, 32, 1)
  "6002 6001 6020 5f a2", // LOG2(0, 32, 1, 2)
  "6003 6002 6001 6020 5f a3", // LOG3(0, 32, 1, 2, 3)
  "6004 6003 6002 6001 6020 5f a4", // LOG4(0, 32, 1, 2, 3, 4)
  "00",
);

/** slot0 = calldata word 0; slot1 += 1; returns the new slot1. */
export const STORE = hex(
  "5f35 5f 55", // SSTORE(0, calldataload(0))
  "6001 54 6001 01", // SLOAD(1) + 1
  "80 6001 55", // SSTORE(1, that)
  "5f 52 6020 5f f3", // return it
);

/** Reverts with Error("nope"): the 100 ABI bytes copied from the code after the 10 opcode bytes. */
export const REVERT_REASON = hex(
  "6064 600a 5f 39", // CODECOPY(0, 10, 100)
  "6064 5f fd", // REVERT(0, 100)
  "08c379a0",
  "0000000000000000000000000000000000000000000000000000000000000020",
  "0000000000000000000000000000000000000000000000000000000000000004",
  "6e6f706500000000000000000000000000000000000000000000000000000000",
);

/** Reverts with no data. */
export const REVERT_EMPTY = hex("5f 5f fd");

/** An endless loop: runs out of gas. */
export const LOOP = hex("5b 5f 56");

/** SELFDESTRUCT to the caller. */
export const SELF_DESTRUCT = hex("33 ff");

/** The child the factory creates: initcode returning `CALLER SELFDESTRUCT` (10 bytes). */
const CHILD_INIT = hex("6133ff 5f 52 6002 601e f3");

/**
 * CREATE2(callvalue, child initcode, salt = calldata word 0), then CALLs the child (which
 * self-destructs in the tx that created it, sending the value back), and returns the child's address.
 */
export const FACTORY = hex(
  "600a 601c 5f 39", // CODECOPY(0, 28, 10): the child's initcode
  "5f35", // salt
  "600a 5f 34 f5", // CREATE2(callvalue, 0, 10, salt)
  "5f 5f 5f 5f 5f 85 5a f1 50", // CALL(gas, child, 0, 0, 0, 0, 0); drop the result
  "5f 52 6020 5f f3", // return the child's address
  CHILD_INIT,
);
