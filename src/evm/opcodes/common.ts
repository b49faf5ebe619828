import { equalBytes, KECCAK256_NULL } from "../bytes.js";
import type { Frame } from "../frames.js";
import { G_COLD_ACCOUNT, G_WARM_ACCESS } from "../gas.js";
import type { Word } from "../words.js";

/** What the opcode handlers share: the handler type, the table entry, EIP-2929 account access, helper shapes. */

export type Handler = (f: Frame) => void;

export interface OpInfo {
  readonly name: string;
  /** Static gas, charged by the loop before the handler. */
  readonly gas: number;
  /** Stack items read (underflow below). */
  readonly pops: number;
  /** Stack items written (overflow check: pushes − pops). */
  readonly pushes: number;
  readonly handler: Handler;
}

export function isEmptyAccount(a: { exists: boolean; nonce: bigint; balance: bigint; codeHash: Uint8Array }): boolean {
  return !a.exists || (a.nonce === 0n && a.balance === 0n && equalBytes(a.codeHash, KECCAK256_NULL));
}

/** EIP-2929 access cost of an address given as a stack word, warming it. */
export function accountAccess(f: Frame, key: string): void {
  f.useGas(f.host.warmAddress(key) ? G_COLD_ACCOUNT : G_WARM_ACCESS);
}

/** The binary opcodes: pop `a` (the top) and `b`, push op(a, b). */
export function binary(op: (a: Word, b: Word) => Word): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    const sp = --f.sp;
    s[sp - 1] = op(s[sp] as Word, s[sp - 1] as Word);
  };
}

/** The comparisons: pop `a` and `b`, push 1 or 0. */
export function comparison(op: (a: Word, b: Word) => boolean): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    const sp = --f.sp;
    s[sp - 1] = op(s[sp] as Word, s[sp - 1] as Word) ? 1 : 0;
  };
}

/** Pushes `v`. */
export function push(f: Frame, v: Word): void {
  f.stack[f.sp++] = v;
}
