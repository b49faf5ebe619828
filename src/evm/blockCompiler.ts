import type { CodeAnalysis } from "./analysis.js";
import { countJump, ERR, type Frame, VmError } from "./frames.js";
import { G_KECCAK_WORD, words } from "./gas.js";
import { keccakMemoWord } from "./keccakMemo.js";
import * as wordOps from "./wordOps.js";
import { loadWord, readWord, toWord, type Word, writeWord } from "./words.js";

/**
 * Basic blocks that run often, compiled to JavaScript functions.
 *
 * The loop (`runFrame`) decodes and dispatches every opcode: a switch on the byte, the stack array read
 * and written at each step. For a block it enters again and again (a loop's body, a function a contract
 * calls in a loop) that dispatch is most of the cost. Once a block has been entered `threshold` times,
 * its opcodes up to the first one this compiler does not take are translated into one function: the
 * stack entries the block reads become locals, each opcode one statement on them (the same word
 * functions the loop calls), and the entries it leaves are written back once at the end. V8 then
 * optimises that function like any other.
 *
 * What a compiled block does is exactly what the loop would do for those opcodes: the caller has
 * already checked the block's stack bounds and charged its static gas (CodeAnalysis), and the opcodes
 * taken here are stack and arithmetic opcodes, comparisons and bitwise opcodes, CALLDATALOAD,
 * CALLDATASIZE, CALLVALUE, ADDRESS, CALLER, CODESIZE, RETURNDATASIZE, PC, MSIZE, MLOAD, MSTORE, MSTORE8,
 * KECCAK256, and the block's JUMP or JUMPI. Only the last four have dynamic gas (memory growth, hashed
 * words): while a compiled block runs, the frame's gas is in `f.gas` (the loop puts it there around the
 * call), and they charge it as the loop charges a handler's, against the exact gas left. The function
 * returns the pc at which the loop goes on and leaves the stack height in `f.sp`; or it returns -1 when
 * a dynamic charge left less gas than the rest of the block needs, with the stack written back and
 * `f.pc` at the next opcode, for the loop to go on opcode by opcode (runChecked) from there. An opcode
 * that cannot pay throws out of gas, as its handler does.
 *
 * The compiled form is kept with the code's analysis, so it serves every later call of the same code
 * (the state store hands out one code object per code hash).
 */

/**
 * A compiled prefix of a basic block: runs it on `s` from height `sp` with the frame's gas in `f.gas`, sets
 * f.sp, returns the next pc (or -1: go on opcode by opcode from f.pc).
 */
export type BlockFn = (s: Word[], sp: number, f: Frame) => number;

/** Blocks whose compiled prefix is shorter than this many opcodes are left to the loop. */
const MIN_OPS = 4;
/** At most this many opcodes go into one function (a huge block would make a function V8 will not optimise). */
const MAX_OPS = 400;

let threshold = 128;

/** How many entries of a block before it is compiled (0: never). Tests set 1 to compile every block. */
export function setBlockCompileThreshold(n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError("the block compile threshold is a whole number ≥ 0");
  threshold = n;
}

/** The current threshold (0: blocks are never compiled). */
export function blockCompileThreshold(): number {
  return threshold;
}

function invalidJump(): never {
  throw new VmError(ERR.invalidJump);
}

/** Binary opcodes as a call of a word function on (top, second), by opcode. */
const BINARY: (string | undefined)[] = [];
for (const [op, name] of [
  [0x01, "add"],
  [0x02, "mul"],
  [0x03, "sub"],
  [0x04, "div"],
  [0x05, "sdiv"],
  [0x06, "mod"],
  [0x07, "smod"],
  [0x0b, "signextend"],
  [0x16, "and"],
  [0x17, "or"],
  [0x18, "xor"],
  [0x1a, "byte"],
  [0x1b, "shl"],
  [0x1c, "shr"],
  [0x1d, "sar"],
] as const) {
  BINARY[op] = name;
}

/** The functions the generated code calls, by the names it calls them; the factory receives them in this order. */
const HELPERS: Record<string, unknown> = {
  countJump,
  invalidJump,
  keccakMemoWord,
  loadWord,
  readWord,
  toWord,
  words,
  writeWord,
};
for (const name of [...BINARY.filter((n) => n !== undefined), "addmod", "mulmod", "not", "slt"]) {
  HELPERS[name] = (wordOps as Record<string, unknown>)[name];
}
const HELPER_NAMES = Object.keys(HELPERS);
const HELPER_VALUES = Object.values(HELPERS);

/**
 * The function for the block starting at `start` of `a`, or undefined when its compilable prefix is too
 * short to be worth it.
 */
export function compileBlock(a: CodeAnalysis, start: number): BlockFn | undefined {
  const code = a.code;
  /** The symbolic stack: names of locals or literals, deepest first, covering the top `st.length` entries. */
  const st: string[] = [];
  /** How many entries below the entry height the block has read (they are the locals i1..iN, i1 the top). */
  let inputs = 0;
  let temps = 0;
  let body = "";
  let ops = 0;
  /**
   * The PUSH values and exit pcs, which the function reads as parameters of its factory (k0, k1, ...)
   * rather than as literals: its source then depends on the block's opcodes alone, and V8, which keeps
   * compiled functions by their source text, compiles each shape of block once for every contract and
   * every offset that has it (Solidity emits the same shapes again and again; code seen once would
   * otherwise start cold, in V8's interpreter, every time).
   */
  const consts: (Word | number)[] = [];
  const constant = (v: Word | number): string => {
    consts.push(v);
    return `k${consts.length - 1}`;
  };

  const ensure = (n: number): void => {
    while (st.length < n) {
      inputs++;
      body += `const i${inputs} = s[sp - ${inputs}];\n`;
      st.unshift(`i${inputs}`);
    }
  };
  const pop = (): string => {
    ensure(1);
    return st.pop() as string;
  };
  const temp = (expr: string): void => {
    temps++;
    body += `const t${temps} = ${expr};\n`;
    st.push(`t${temps}`);
  };
  /** Statements that write the changed stack entries back and set f.sp. */
  const writeBack = (): string => {
    let out = "";
    for (let k = 0; k < st.length; k++) {
      const depth = inputs - k; // the entry at sp - depth
      if (st[k] !== `i${depth}`) {
        out += `s[sp${depth === 0 ? "" : depth > 0 ? ` - ${depth}` : ` + ${-depth}`}] = ${st[k]};\n`;
      }
    }
    const h = st.length - inputs;
    return `${out}f.sp = sp${h === 0 ? "" : h > 0 ? ` + ${h}` : ` - ${-h}`};\n`;
  };
  /** Statements that write the stack back and leave at `pc`, for the loop to go on from. */
  const exit = (pc: number): string => `${writeBack()}return ${constant(pc)};\n`;
  /**
   * Opcodes with dynamic gas (memory growth, KECCAK256's words) charge it to `f.gas`, which holds the
   * frame's gas while a compiled block runs, against the exact gas left: the rest of the block (`rest`,
   * charged with it by the loop) is given back around the charge, as the loop does for a handler. An
   * opcode that cannot pay throws out of the gas (VmError). One that can, but leaves less than the rest
   * of the block needs, ends the block after itself: the stack is written back, `f.pc` is the next opcode,
   * and the function returns -1, for the loop to go on opcode by opcode (runChecked) from there.
   */
  const charge = (p: number, what: string): string => {
    const r = a.rest[p] as number;
    return r === 0 ? what : `f.gas += ${r};\n${what}f.gas -= ${r};\n`;
  };
  /** Ends the block after the opcode at `p` (its effect `effect` done) when the gas left is short. */
  const leaveIfShort = (p: number, effect: string): string => {
    const r = a.rest[p] as number;
    return `if (f.gas < 0) {\n${effect}${r === 0 ? "" : `f.gas += ${r};\n`}${writeBack()}f.pc = ${constant(p + 1)};\nreturn -1;\n}\n`;
  };
  /**
   * A memory access at `p` of x..x+width: when the memory does not cover it, the growth is charged (and
   * `effect`, the access itself, done on the way out if the gas left is short); then `effect`.
   */
  const access = (x: string, width: number, p: number, effect: string): string =>
    `if (typeof ${x} !== "number" || ${x} + ${width} > f.memory.size) {\n${charge(p, `f.expand(${x}, ${width});\n`)}${leaveIfShort(p, effect)}}\n${effect}`;

  /**
   * Checks and charges, as the loop does when it enters one, the block at `at`, the stack `h` entries above
   * the function's entry height; runs `fail` when the block's gas or stack bounds do not allow it.
   */
  const enter = (at: number, h: number, fail: string): string => {
    const height = `sp${h === 0 ? "" : h > 0 ? ` + ${h}` : ` - ${-h}`}`;
    return `if (f.gas < ${a.blockGas[at]} || ${height} < ${a.blockMin[at]} || ${height} > ${a.blockMax[at]}) {\n${fail}}\nf.gas -= ${a.blockGas[at]};\n`;
  };

  let pc = start;
  if (code[pc] === 0x5b) pc++; // the JUMPDEST that starts the block (charged with it by the caller)
  /** Whether a jump goes back to the start inside the function (its body then runs in a loop). */
  let loops = false;
  for (; ops < MAX_OPS; ops++) {
    const op = code[pc] as number;
    if (op >= 0x60 && op <= 0x7f) {
      st.push(constant(a.pushValues[pc + 1] as Word));
      pc += op - 0x5e;
      continue;
    }
    if (op >= 0x80 && op <= 0x8f) {
      const n = op - 0x7f;
      ensure(n);
      st.push(st[st.length - n] as string);
      pc++;
      continue;
    }
    if (op >= 0x90 && op <= 0x9f) {
      const n = op - 0x8f;
      ensure(n + 1);
      const top = st.length - 1;
      const t = st[top] as string;
      st[top] = st[top - n] as string;
      st[top - n] = t;
      pc++;
      continue;
    }
    const fn = BINARY[op];
    if (fn !== undefined) {
      const x = pop();
      const y = pop();
      temp(`${fn}(${x}, ${y})`);
      pc++;
      continue;
    }
    switch (op) {
      case 0x5f:
        st.push("0");
        pc++;
        continue;
      case 0x50:
        pop();
        pc++;
        continue;
      case 0x08:
      case 0x09: {
        const x = pop();
        const y = pop();
        const n = pop();
        temp(`${op === 0x08 ? "addmod" : "mulmod"}(${x}, ${y}, ${n})`);
        pc++;
        continue;
      }
      case 0x10:
      case 0x11:
      case 0x14: {
        const x = pop();
        const y = pop();
        temp(`${x} ${op === 0x10 ? "<" : op === 0x11 ? ">" : "==="} ${y} ? 1 : 0`);
        pc++;
        continue;
      }
      case 0x12:
      case 0x13: {
        const x = pop();
        const y = pop();
        temp(op === 0x12 ? `slt(${x}, ${y}) ? 1 : 0` : `slt(${y}, ${x}) ? 1 : 0`);
        pc++;
        continue;
      }
      case 0x15:
        temp(`${pop()} === 0 ? 1 : 0`);
        pc++;
        continue;
      case 0x19:
        temp(`not(${pop()})`);
        pc++;
        continue;
      case 0x35: {
        const x = pop();
        temp(`typeof ${x} === "number" ? loadWord(f.input, ${x}) : 0`);
        pc++;
        continue;
      }
      case 0x36:
        temp("f.input.length");
        pc++;
        continue;
      case 0x38:
        temp("f.code.length");
        pc++;
        continue;
      case 0x3d:
        temp("f.returnData.length");
        pc++;
        continue;
      case 0x58:
        st.push(constant(pc));
        pc++;
        continue;
      case 0x59:
        temp("f.memory.size");
        pc++;
        continue;
      case 0x34:
        temp("toWord(f.value)");
        pc++;
        continue;
      case 0x30:
        temp("f.addressWord()");
        pc++;
        continue;
      case 0x33:
        temp("f.callerWord()");
        pc++;
        continue;
      case 0x51: {
        const x = pop();
        temps++;
        const t = `t${temps}`;
        // Pushed first: the stack written back on the way out holds the loaded word.
        st.push(t);
        body += access(x, 32, pc, `const ${t} = readWord(f.memory.dv, ${x});\n`);
        pc++;
        continue;
      }
      case 0x20: {
        const x = pop();
        const size = pop();
        temps++;
        const t = `t${temps}`;
        body += charge(
          pc,
          `const o${temps} = f.expand(${x}, ${size});\nf.useGas(${G_KECCAK_WORD} * words(${size}));\nconst ${t} = keccakMemoWord(f.memory.buf, f.memory.dv, o${temps}, ${size});\n`,
        );
        st.push(t);
        body += leaveIfShort(pc, "");
        pc++;
        continue;
      }
      case 0x56:
      case 0x57: {
        // The block's jump: taken, it returns the destination (a JUMPDEST, which the loop charges and
        // runs next). JUMPI not taken goes on into the block after it (below), or, when that block starts
        // with a JUMPDEST, leaves at the JUMPI itself, its operands on the stack: the loop runs it and
        // charges the block after it, as for any JUMPI.
        ensure(op === 0x57 ? 2 : 1);
        const notTaken = op === 0x57 ? exit(pc) : "";
        const d = pop();
        const c = op === 0x57 ? pop() : "";
        // A destination pushed in this block is checked here, once; any other when the jump runs.
        const known = /^k\d+$/.test(d) ? consts[Number(d.slice(1))] : undefined;
        const check =
          known === undefined
            ? `if (typeof ${d} !== "number" || ${d} >= f.code.length || f.jumpdests[${d}] !== 1) invalidJump();\n`
            : typeof known === "number" && known < a.jumpdests.length && a.jumpdests[known] === 1
              ? ""
              : "invalidJump();\n";
        const jump = `countJump(f.host);\n${check}`;
        // Taken: leave with the destination. A jump back to the JUMPDEST this function starts at (a loop
        // whose body is this function) goes round inside it instead: the stack is written back, that block
        // is checked and charged as the loop would (if its check fails, the function leaves with the
        // destination, for the loop to fail the same way), and the function body runs again.
        // (An empty `check` means a destination pushed here and known to be a JUMPDEST.)
        const back = check === "" && known === start;
        if (back) loops = true;
        const taken = back
          ? `${writeBack()}${jump}sp = f.sp;\n${enter(start, 0, `return ${d};\n`)}continue;\n`
          : `${writeBack()}${jump}return ${d};\n`;
        const next = pc + 1;
        if (op === 0x57 && next < code.length && code[next] !== 0x5b && ops + 1 < MAX_OPS) {
          // JUMPI whose fall-through starts a block of its own (no JUMPDEST): not taken, that block is
          // checked and charged here as the loop would, and its opcodes follow in this function. If its
          // check fails, the function leaves at the JUMPI, for the loop to run it and fail the same way.
          body += `if (${c} !== 0) {\n${taken}}\n${enter(next, st.length - inputs, notTaken)}`;
          pc = next;
          continue;
        }
        ops++;
        if (op === 0x57) body += `if (${c} === 0) {\n${notTaken}}\n`;
        body += taken;
        return finish(body, consts, ops, loops);
      }
      case 0x53: {
        const x = pop();
        const v = pop();
        body += access(x, 1, pc, `f.memory.buf[${x}] = typeof ${v} === "number" ? ${v} % 256 : Number(${v} & 255n);\n`);
        pc++;
        continue;
      }
      case 0x52: {
        const x = pop();
        const v = pop();
        body += access(x, 32, pc, `writeWord(f.memory.dv, ${x}, ${v});\n`);
        pc++;
        continue;
      }
    }
    break;
  }
  body += exit(pc);
  return finish(body, consts, ops, loops);
}

/** The function of a block's body (which ends in a return), or undefined when it is too short to gain. */
function finish(body: string, consts: readonly (Word | number)[], ops: number, loops: boolean): BlockFn | undefined {
  if (ops < MIN_OPS) return undefined;
  const names = consts.map((_, i) => `k${i}`);
  // Every path of the body ends in a return, or (a jump back to the start) in a continue.
  const src = `"use strict";\nreturn function block(s, sp, f) {\n${loops ? `for (;;) {\n${body}}\n` : body}};`;
  const factory = new Function(...HELPER_NAMES, ...names, src) as (...args: unknown[]) => BlockFn;
  return factory(...HELPER_VALUES, ...consts);
}
