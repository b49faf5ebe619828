import { STACK_LIMIT } from "./frames.js";
import {
  G_BASE,
  G_BLOCKHASH,
  G_EXP,
  G_HIGH,
  G_JUMPDEST,
  G_KECCAK,
  G_LOG,
  G_LOG_TOPIC,
  G_LOW,
  G_MID,
  G_SELFDESTRUCT,
  G_TRANSIENT,
  G_VERYLOW,
  G_ZERO,
} from "./gas.js";
import { opExp, opIszero, opKeccak, opNot, opStop, ternary } from "./opcodes/arithmetic.js";
import { binary, comparison, type Handler, type OpInfo } from "./opcodes/common.js";
import {
  opAddress,
  opBalance,
  opBasefee,
  opBlobbasefee,
  opBlobhash,
  opBlockhash,
  opCalldatacopy,
  opCalldataload,
  opCalldatasize,
  opCaller,
  opCallvalue,
  opChainid,
  opCodecopy,
  opCodesize,
  opCoinbase,
  opExtcodecopy,
  opExtcodehash,
  opExtcodesize,
  opGaslimit,
  opGasprice,
  opNumber,
  opOrigin,
  opPrevrandao,
  opReturndatacopy,
  opReturndatasize,
  opSelfbalance,
  opTimestamp,
} from "./opcodes/environment.js";
import {
  opGas,
  opJump,
  opJumpdest,
  opJumpi,
  opMcopy,
  opMload,
  opMsize,
  opMstore,
  opMstore8,
  opPc,
  opPop,
  opSload,
  opSstore,
  opTload,
  opTstore,
} from "./opcodes/flow.js";
import { makeDup, makePush, makeSwap, opPush0 } from "./opcodes/stack.js";
import {
  makeLog,
  opCall,
  opCallcode,
  opCreate,
  opCreate2,
  opDelegatecall,
  opInvalid,
  opReturn,
  opRevert,
  opSelfdestruct,
  opStaticcall,
  undefinedOp,
} from "./opcodes/system.js";
import {
  add,
  addmod,
  and,
  byte,
  div,
  mod,
  mul,
  mulmod,
  or,
  sar,
  sdiv,
  shl,
  shr,
  signextend,
  slt,
  smod,
  sub,
  xor,
} from "./wordOps.js";

/**
 * The opcode table (handlers by category in opcodes/): one entry per opcode with its name, static gas, stack arity and handler. Dynamic
 * gas (memory, cold access, copies, SSTORE, calls) is charged by the handler before it changes
 * anything; an exceptional halt throws VmError, which the interpreter turns into a failed frame.
 * Cancun and Prague share the table: Prague's EIP-7702 changes frames (interpreter.ts), not opcodes.
 */

export { pushValuesOf } from "./opcodes/stack.js";
export type { Handler, OpInfo };

// ---- the table --------------------------------------------------------------------------------

function op(name: string, gas: number, pops: number, pushes: number, handler: Handler): OpInfo {
  return { name, gas, pops, pushes, handler };
}

function buildTable(): OpInfo[] {
  const t: OpInfo[] = [];
  for (let i = 0; i < 256; i++) t.push(op(`0x${i.toString(16).padStart(2, "0")}`, 0, 0, 0, undefinedOp(i)));
  const set = (code: number, info: OpInfo): void => {
    t[code] = info;
  };
  set(0x00, op("STOP", G_ZERO, 0, 0, opStop));
  set(0x01, op("ADD", G_VERYLOW, 2, 1, binary(add)));
  set(0x02, op("MUL", G_LOW, 2, 1, binary(mul)));
  set(0x03, op("SUB", G_VERYLOW, 2, 1, binary(sub)));
  set(0x04, op("DIV", G_LOW, 2, 1, binary(div)));
  set(0x05, op("SDIV", G_LOW, 2, 1, binary(sdiv)));
  set(0x06, op("MOD", G_LOW, 2, 1, binary(mod)));
  set(0x07, op("SMOD", G_LOW, 2, 1, binary(smod)));
  set(0x08, op("ADDMOD", G_MID, 3, 1, ternary(addmod)));
  set(0x09, op("MULMOD", G_MID, 3, 1, ternary(mulmod)));
  set(0x0a, op("EXP", G_EXP, 2, 1, opExp));
  set(0x0b, op("SIGNEXTEND", G_LOW, 2, 1, binary(signextend)));
  set(
    0x10,
    op(
      "LT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a < b),
    ),
  );
  set(
    0x11,
    op(
      "GT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a > b),
    ),
  );
  set(0x12, op("SLT", G_VERYLOW, 2, 1, comparison(slt)));
  set(
    0x13,
    op(
      "SGT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => slt(b, a)),
    ),
  );
  set(
    0x14,
    op(
      "EQ",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a === b),
    ),
  );
  set(0x15, op("ISZERO", G_VERYLOW, 1, 1, opIszero));
  set(0x16, op("AND", G_VERYLOW, 2, 1, binary(and)));
  set(0x17, op("OR", G_VERYLOW, 2, 1, binary(or)));
  set(0x18, op("XOR", G_VERYLOW, 2, 1, binary(xor)));
  set(0x19, op("NOT", G_VERYLOW, 1, 1, opNot));
  set(0x1a, op("BYTE", G_VERYLOW, 2, 1, binary(byte)));
  set(0x1b, op("SHL", G_VERYLOW, 2, 1, binary(shl)));
  set(0x1c, op("SHR", G_VERYLOW, 2, 1, binary(shr)));
  set(0x1d, op("SAR", G_VERYLOW, 2, 1, binary(sar)));
  set(0x20, op("KECCAK256", G_KECCAK, 2, 1, opKeccak));
  set(0x30, op("ADDRESS", G_BASE, 0, 1, opAddress));
  set(0x31, op("BALANCE", G_ZERO, 1, 1, opBalance));
  set(0x32, op("ORIGIN", G_BASE, 0, 1, opOrigin));
  set(0x33, op("CALLER", G_BASE, 0, 1, opCaller));
  set(0x34, op("CALLVALUE", G_BASE, 0, 1, opCallvalue));
  set(0x35, op("CALLDATALOAD", G_VERYLOW, 1, 1, opCalldataload));
  set(0x36, op("CALLDATASIZE", G_BASE, 0, 1, opCalldatasize));
  set(0x37, op("CALLDATACOPY", G_VERYLOW, 3, 0, opCalldatacopy));
  set(0x38, op("CODESIZE", G_BASE, 0, 1, opCodesize));
  set(0x39, op("CODECOPY", G_VERYLOW, 3, 0, opCodecopy));
  set(0x3a, op("GASPRICE", G_BASE, 0, 1, opGasprice));
  set(0x3b, op("EXTCODESIZE", G_ZERO, 1, 1, opExtcodesize));
  set(0x3c, op("EXTCODECOPY", G_ZERO, 4, 0, opExtcodecopy));
  set(0x3d, op("RETURNDATASIZE", G_BASE, 0, 1, opReturndatasize));
  set(0x3e, op("RETURNDATACOPY", G_VERYLOW, 3, 0, opReturndatacopy));
  set(0x3f, op("EXTCODEHASH", G_ZERO, 1, 1, opExtcodehash));
  set(0x40, op("BLOCKHASH", G_BLOCKHASH, 1, 1, opBlockhash));
  set(0x41, op("COINBASE", G_BASE, 0, 1, opCoinbase));
  set(0x42, op("TIMESTAMP", G_BASE, 0, 1, opTimestamp));
  set(0x43, op("NUMBER", G_BASE, 0, 1, opNumber));
  set(0x44, op("PREVRANDAO", G_BASE, 0, 1, opPrevrandao));
  set(0x45, op("GASLIMIT", G_BASE, 0, 1, opGaslimit));
  set(0x46, op("CHAINID", G_BASE, 0, 1, opChainid));
  set(0x47, op("SELFBALANCE", G_LOW, 0, 1, opSelfbalance));
  set(0x48, op("BASEFEE", G_BASE, 0, 1, opBasefee));
  set(0x49, op("BLOBHASH", G_VERYLOW, 1, 1, opBlobhash));
  set(0x4a, op("BLOBBASEFEE", G_BASE, 0, 1, opBlobbasefee));
  set(0x50, op("POP", G_BASE, 1, 0, opPop));
  set(0x51, op("MLOAD", G_VERYLOW, 1, 1, opMload));
  set(0x52, op("MSTORE", G_VERYLOW, 2, 0, opMstore));
  set(0x53, op("MSTORE8", G_VERYLOW, 2, 0, opMstore8));
  set(0x54, op("SLOAD", G_ZERO, 1, 1, opSload));
  set(0x55, op("SSTORE", G_ZERO, 2, 0, opSstore));
  set(0x56, op("JUMP", G_MID, 1, 0, opJump));
  set(0x57, op("JUMPI", G_HIGH, 2, 0, opJumpi));
  set(0x58, op("PC", G_BASE, 0, 1, opPc));
  set(0x59, op("MSIZE", G_BASE, 0, 1, opMsize));
  set(0x5a, op("GAS", G_BASE, 0, 1, opGas));
  set(0x5b, op("JUMPDEST", G_JUMPDEST, 0, 0, opJumpdest));
  set(0x5c, op("TLOAD", G_TRANSIENT, 1, 1, opTload));
  set(0x5d, op("TSTORE", G_TRANSIENT, 2, 0, opTstore));
  set(0x5e, op("MCOPY", G_VERYLOW, 3, 0, opMcopy));
  set(0x5f, op("PUSH0", G_BASE, 0, 1, opPush0));
  for (let n = 1; n <= 32; n++) {
    set(0x5f + n, op(`PUSH${n}`, G_VERYLOW, 0, 1, makePush(n)));
  }
  for (let n = 1; n <= 16; n++) {
    set(0x7f + n, op(`DUP${n}`, G_VERYLOW, n, n + 1, makeDup(n)));
    set(0x8f + n, op(`SWAP${n}`, G_VERYLOW, n + 1, n + 1, makeSwap(n)));
  }
  for (let n = 0; n <= 4; n++) {
    set(0xa0 + n, op(`LOG${n}`, G_LOG + n * G_LOG_TOPIC, n + 2, 0, makeLog(n)));
  }
  set(0xf0, op("CREATE", 0, 3, 1, opCreate));
  set(0xf1, op("CALL", 0, 7, 1, opCall));
  set(0xf2, op("CALLCODE", 0, 7, 1, opCallcode));
  set(0xf3, op("RETURN", G_ZERO, 2, 0, opReturn));
  set(0xf4, op("DELEGATECALL", 0, 6, 1, opDelegatecall));
  set(0xf5, op("CREATE2", 0, 4, 1, opCreate2));
  set(0xfa, op("STATICCALL", 0, 6, 1, opStaticcall));
  set(0xfd, op("REVERT", G_ZERO, 2, 0, opRevert));
  set(0xfe, op("INVALID", G_ZERO, 0, 0, opInvalid));
  set(0xff, op("SELFDESTRUCT", G_SELFDESTRUCT, 1, 0, opSelfdestruct));
  return t;
}

/** The opcode table (Cancun and Prague). */
export const OPCODES: readonly OpInfo[] = buildTable();

/** Flat copies of the table for the interpreter loop. */
export const OP_GAS: Int32Array = Int32Array.from(OPCODES, (o) => o.gas);
export const OP_MIN_STACK: Int32Array = Int32Array.from(OPCODES, (o) => o.pops);
/** The largest stack height at which the opcode may run without overflowing. */
export const OP_MAX_STACK: Int32Array = Int32Array.from(OPCODES, (o) => STACK_LIMIT - (o.pushes - o.pops));
export const OP_HANDLERS: readonly Handler[] = OPCODES.map((o) => o.handler);
