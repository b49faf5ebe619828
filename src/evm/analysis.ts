import type { BlockFn } from "./blockCompiler.js";
import { STACK_LIMIT } from "./frames.js";
import { OP_GAS, OP_MAX_STACK, OP_MIN_STACK, OPCODES, pushValuesOf } from "./opcodes.js";
import type { Word } from "./words.js";

/**
 * Code analysis for the interpreter's loop, done in one pass when code is first run and kept per code
 * object: the JUMPDEST map, the PUSH values, and the code's basic blocks.
 *
 * A basic block is a run of opcodes that control enters only at its first: it starts at pc 0, at each
 * JUMPDEST, and after each opcode that ends one (a jump, a halt, a call or creation: a frame resumes
 * after a call at the next opcode). For each block the analysis keeps the static gas of all its
 * opcodes and the range of stack heights at its start for which none of them underflows or overflows.
 * The loop checks these once when it enters a block, instead of once per opcode; when the check fails
 * it runs the block opcode by opcode, so the error and the point it happens are the same as without
 * blocks. Opcodes with dynamic gas see the exact gas left (`rest`: the static gas of the opcodes after
 * them in their block, already charged).
 */
export interface CodeAnalysis {
  /** The code followed by 33 zero bytes (STOP): the loop reads past a PUSH at the end without a check. */
  readonly code: Uint8Array;
  /** 1 at each JUMPDEST that is an opcode (not PUSH data). */
  readonly jumpdests: Uint8Array;
  /** The value of each PUSH by the pc after its opcode. */
  readonly pushValues: Word[];
  /** At a block's first pc: the static gas of the whole block. */
  readonly blockGas: Int32Array;
  /** At a block's first pc: the least stack height at which no opcode of the block underflows. */
  readonly blockMin: Int32Array;
  /** At a block's first pc: the greatest stack height at which no opcode of the block overflows. */
  readonly blockMax: Int32Array;
  /** At each opcode: the static gas of the opcodes after it in its block. */
  readonly rest: Int32Array;
  /** At a JUMPDEST: how many times the loop has entered its block (until it is compiled). */
  readonly blockHits: Int32Array;
  /**
   * At a JUMPDEST whose block is compiled (blockCompiler.ts): its function; 0 elsewhere. Null until the
   * code's first block is compiled.
   */
  jit: (BlockFn | 0)[] | null;
}

/** 1 for the opcodes after which a new block starts. */
export const ENDS_BLOCK = new Uint8Array(256);
for (const op of [0x00, 0x56, 0x57, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xfa, 0xfd, 0xfe, 0xff]) ENDS_BLOCK[op] = 1;
for (let op = 0; op < 256; op++) if ((OPCODES[op] as { name: string }).name.startsWith("0x")) ENDS_BLOCK[op] = 1;
/** Stack height change of each opcode. */
const OP_DELTA = Int32Array.from(OPCODES, (o) => o.pushes - o.pops);

const cache = new WeakMap<Uint8Array, CodeAnalysis>();

/** The analysis of `code`, made on first use and kept while the code object lives. */
export function analysisOf(code: Uint8Array): CodeAnalysis {
  let a = cache.get(code);
  if (a === undefined) {
    a = analyze(code);
    cache.set(code, a);
  }
  return a;
}

function analyze(code: Uint8Array): CodeAnalysis {
  const len = code.length;
  const padded = new Uint8Array(len + 33);
  padded.set(code);
  const jumpdests = new Uint8Array(len);
  // Indexed by pc up to the padding's end: a truncated PUSH at the end runs on into the padding's STOP.
  // One allocation for the five per-pc tables (a typed array's backing store costs more than its bytes).
  const n = len + 34;
  const tables = new Int32Array(5 * n);
  const blockGas = tables.subarray(0, n);
  const blockMin = tables.subarray(n, 2 * n);
  const blockMax = tables.subarray(2 * n, 3 * n).fill(STACK_LIMIT);
  /** The cumulative static gas of the block through each opcode, until close() turns it into the rest. */
  const rest = tables.subarray(3 * n, 4 * n);
  const blockHits = tables.subarray(4 * n, 5 * n);
  let start = 0;
  let gas = 0;
  let delta = 0;
  let min = 0;
  let max = STACK_LIMIT;
  /** Closes the block [start, end): its totals at its start, and each opcode's rest. */
  const close = (end: number): void => {
    blockGas[start] = gas;
    blockMin[start] = min;
    blockMax[start] = max;
    for (let at = start; at < end; ) {
      rest[at] = gas - (rest[at] as number);
      const op = code[at] as number;
      at += op >= 0x60 && op <= 0x7f ? op - 0x5e : 1;
    }
  };
  const open = (at: number): void => {
    start = at;
    gas = 0;
    delta = 0;
    min = 0;
    max = STACK_LIMIT;
  };
  let pc = 0;
  while (pc < len) {
    const op = code[pc] as number;
    if (op === 0x5b) {
      jumpdests[pc] = 1;
      if (pc !== start) {
        close(pc);
        open(pc);
      }
    }
    const need = (OP_MIN_STACK[op] as number) - delta;
    if (need > min) min = need;
    const room = (OP_MAX_STACK[op] as number) - delta;
    if (room < max) max = room;
    delta += OP_DELTA[op] as number;
    gas += OP_GAS[op] as number;
    rest[pc] = gas;
    pc += op >= 0x60 && op <= 0x7f ? op - 0x5e : 1;
    if (ENDS_BLOCK[op] === 1) {
      close(pc);
      open(pc);
    }
  }
  // A block that runs off the end stops there (the padding reads as STOP); one starting at or past
  // the end is empty.
  if (start < len) close(pc);
  return {
    code: padded,
    jumpdests,
    pushValues: pushValuesOf(code),
    blockGas,
    blockMin,
    blockMax,
    rest,
    blockHits,
    jit: null,
  };
}
