import { keccak256 } from "../../src/app/evm/crypto.js";
import { bigintToBytes } from "../../src/app/evm/records.js";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import { OPCODES } from "../../src/evm/opcodes.js";
import { type BlockEnv, type EngineTx, EngineTxError, type Fork, type TxResult } from "../../src/evm/types.js";
import { bytesToHex } from "../../src/util/bytes.js";
import { type Executor, MemoryStateReader } from "./stateTests.js";

/**
 * Differential testing of two Executors (docs/evm-engine.md): a seeded generator of random EVM
 * programs (valid-ish: pushes, arithmetic, memory, storage, calls to a second contract and to
 * precompiles, logs, CREATE/CREATE2, reverts, forward jumps to real JUMPDESTs, returns) and a harness
 * that runs the same transactions through both executors, each on its own copy of the same pre-state,
 * and reports the first difference in outcome or state diff.
 */

// ---- seeded randomness --------------------------------------------------------------------------------

/** mulberry32: small, fast, and the same sequence for a seed on every platform. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    this.#s = (this.#s + 0x6d2b79f5) >>> 0;
    let t = this.#s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return this.next() % n;
  }
  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

// ---- assembling -----------------------------------------------------------------------------------------

export const OP = {
  STOP: 0x00,
  ADD: 0x01,
  MUL: 0x02,
  SUB: 0x03,
  DIV: 0x04,
  SDIV: 0x05,
  MOD: 0x06,
  SMOD: 0x07,
  ADDMOD: 0x08,
  MULMOD: 0x09,
  EXP: 0x0a,
  SIGNEXTEND: 0x0b,
  LT: 0x10,
  GT: 0x11,
  SLT: 0x12,
  SGT: 0x13,
  EQ: 0x14,
  ISZERO: 0x15,
  AND: 0x16,
  OR: 0x17,
  XOR: 0x18,
  NOT: 0x19,
  BYTE: 0x1a,
  SHL: 0x1b,
  SHR: 0x1c,
  SAR: 0x1d,
  KECCAK256: 0x20,
  ADDRESS: 0x30,
  BALANCE: 0x31,
  ORIGIN: 0x32,
  CALLER: 0x33,
  CALLVALUE: 0x34,
  CALLDATALOAD: 0x35,
  CALLDATASIZE: 0x36,
  CALLDATACOPY: 0x37,
  CODESIZE: 0x38,
  CODECOPY: 0x39,
  GASPRICE: 0x3a,
  EXTCODESIZE: 0x3b,
  EXTCODECOPY: 0x3c,
  RETURNDATASIZE: 0x3d,
  RETURNDATACOPY: 0x3e,
  EXTCODEHASH: 0x3f,
  BLOCKHASH: 0x40,
  COINBASE: 0x41,
  TIMESTAMP: 0x42,
  NUMBER: 0x43,
  PREVRANDAO: 0x44,
  GASLIMIT: 0x45,
  CHAINID: 0x46,
  SELFBALANCE: 0x47,
  BASEFEE: 0x48,
  BLOBHASH: 0x49,
  BLOBBASEFEE: 0x4a,
  POP: 0x50,
  MLOAD: 0x51,
  MSTORE: 0x52,
  MSTORE8: 0x53,
  SLOAD: 0x54,
  SSTORE: 0x55,
  JUMP: 0x56,
  JUMPI: 0x57,
  PC: 0x58,
  MSIZE: 0x59,
  GAS: 0x5a,
  JUMPDEST: 0x5b,
  TLOAD: 0x5c,
  TSTORE: 0x5d,
  MCOPY: 0x5e,
  PUSH0: 0x5f,
  PUSH1: 0x60,
  PUSH2: 0x61,
  PUSH20: 0x73,
  PUSH32: 0x7f,
  DUP1: 0x80,
  SWAP1: 0x90,
  LOG0: 0xa0,
  CREATE: 0xf0,
  CALL: 0xf1,
  CALLCODE: 0xf2,
  RETURN: 0xf3,
  DELEGATECALL: 0xf4,
  CREATE2: 0xf5,
  STATICCALL: 0xfa,
  REVERT: 0xfd,
  INVALID: 0xfe,
  SELFDESTRUCT: 0xff,
} as const;

/** A byte buffer with pushes and forward labels. */
export class Assembler {
  readonly #bytes: number[] = [];

  get length(): number {
    return this.#bytes.length;
  }

  op(...ops: number[]): this {
    this.#bytes.push(...ops);
    return this;
  }

  /** The shortest PUSH of `v` (PUSH0 for zero). */
  push(v: bigint | number | Uint8Array): this {
    const b = v instanceof Uint8Array ? v : bigintToBytes(BigInt.asUintN(256, BigInt(v)));
    if (b.length === 0) return this.op(OP.PUSH0);
    this.#bytes.push(OP.PUSH1 + b.length - 1, ...b);
    return this;
  }

  /** PUSH2 with a placeholder; returns the position to patch. */
  pushLabel(): number {
    this.#bytes.push(OP.PUSH2, 0, 0);
    return this.#bytes.length - 2;
  }

  /** Places a JUMPDEST here and points the label at it. */
  jumpdest(label: number): this {
    const at = this.#bytes.length;
    this.#bytes[label] = at >> 8;
    this.#bytes[label + 1] = at & 0xff;
    return this.op(OP.JUMPDEST);
  }

  /** Writes `data` to memory at `offset` with PUSH32/MSTORE (rounded up to words). */
  toMemory(data: Uint8Array, offset: number): this {
    for (let i = 0; i < data.length; i += 32) {
      const w = new Uint8Array(32);
      w.set(data.subarray(i, i + 32));
      this.#bytes.push(OP.PUSH32, ...w);
      this.push(offset + i).op(OP.MSTORE);
    }
    return this;
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

// ---- the generator ------------------------------------------------------------------------------------

const TWO_255 = 1n << 255n;
const MAX = (1n << 256n) - 1n;

function value(rng: Rng): bigint {
  switch (rng.int(8)) {
    case 0:
      return rng.pick([0n, 1n, 2n, 31n, 32n, 255n, 256n, TWO_255, MAX, MAX - 1n, TWO_255 - 1n, 1n << 128n]);
    case 1:
      return BigInt(rng.int(8));
    case 2:
      return BigInt(rng.int(65536));
    default: {
      const n = 1 + rng.int(32);
      return BigInt(`0x${bytesToHex(rng.bytes(n))}`);
    }
  }
}

const BINARY = [
  OP.ADD,
  OP.MUL,
  OP.SUB,
  OP.DIV,
  OP.SDIV,
  OP.MOD,
  OP.SMOD,
  OP.EXP,
  OP.SIGNEXTEND,
  OP.LT,
  OP.GT,
  OP.SLT,
  OP.SGT,
  OP.EQ,
  OP.AND,
  OP.OR,
  OP.XOR,
  OP.BYTE,
  OP.SHL,
  OP.SHR,
  OP.SAR,
];
const NULLARY = [
  OP.ADDRESS,
  OP.ORIGIN,
  OP.CALLER,
  OP.CALLVALUE,
  OP.CALLDATASIZE,
  OP.CODESIZE,
  OP.GASPRICE,
  OP.RETURNDATASIZE,
  OP.COINBASE,
  OP.TIMESTAMP,
  OP.NUMBER,
  OP.PREVRANDAO,
  OP.GASLIMIT,
  OP.CHAINID,
  OP.SELFBALANCE,
  OP.BASEFEE,
  OP.BLOBBASEFEE,
  OP.MSIZE,
  OP.PC,
];

/** Addresses a random program talks to. */
export interface ProgramContext {
  /** The other contract of the pair. */
  other: Uint8Array;
  /** More addresses worth calling or inspecting (EOAs, empty accounts). */
  extra: readonly Uint8Array[];
}

function target(rng: Rng, ctx: ProgramContext): Uint8Array | bigint {
  switch (rng.int(6)) {
    case 0:
    case 1:
      return ctx.other;
    case 2:
      // ecrecover, sha256, ripemd160, identity, modexp
      return BigInt(1 + rng.int(5));
    case 3:
      return rng.pick(ctx.extra);
    case 4:
      return 0n; // ADDRESS below
    default:
      return rng.bytes(20);
  }
}

/** The result on the stack goes to storage, memory, or away. */
function sink(a: Assembler, rng: Rng): void {
  switch (rng.int(4)) {
    case 0:
      a.push(rng.int(8)).op(OP.SSTORE);
      return;
    case 1:
      a.push(rng.int(8) * 32).op(OP.MSTORE);
      return;
    default:
      a.op(OP.POP);
  }
}

/** Small init code: returns a short runtime, stores first, reverts, or runs a random program. */
function initCode(rng: Rng, ctx: ProgramContext, depth: number): Uint8Array {
  const a = new Assembler();
  const kind = rng.int(5);
  if (kind === 0) return a.push(rng.int(4)).push(0).op(OP.REVERT).bytes();
  if (kind === 1 && depth < 2) return randomProgram(rng, ctx, { depth: depth + 1, size: 6 });
  if (kind === 2) a.push(value(rng)).push(rng.int(4)).op(OP.SSTORE);
  // The runtime: a few random bytes, sometimes starting with 0xef (EIP-3541 rejects it).
  const runtime = rng.chance(0.1) ? Uint8Array.of(0xef, ...rng.bytes(3)) : rng.bytes(rng.int(40));
  a.toMemory(runtime, 0);
  return a.push(runtime.length).push(0).op(OP.RETURN).bytes();
}

function snippet(a: Assembler, rng: Rng, ctx: ProgramContext, depth: number): void {
  const r = rng.int(100);
  if (r < 18) {
    const op = rng.pick(BINARY);
    a.push(value(rng)).push(value(rng)).op(op);
    sink(a, rng);
  } else if (r < 21) {
    a.push(value(rng))
      .push(value(rng))
      .push(value(rng))
      .op(rng.pick([OP.ADDMOD, OP.MULMOD]));
    sink(a, rng);
  } else if (r < 24) {
    a.push(value(rng)).op(rng.pick([OP.ISZERO, OP.NOT]));
    sink(a, rng);
  } else if (r < 32) {
    a.op(rng.pick(NULLARY));
    sink(a, rng);
  } else if (r < 36) {
    const t = target(rng, ctx);
    if (t === 0n) a.op(OP.ADDRESS);
    else a.push(t);
    a.op(rng.pick([OP.BALANCE, OP.EXTCODESIZE, OP.EXTCODEHASH]));
    sink(a, rng);
  } else if (r < 38) {
    a.push(rng.pick([0n, 1n, 999n, 1000n, 1001n, 744n, 743n, value(rng)])).op(OP.BLOCKHASH);
    sink(a, rng);
  } else if (r < 44) {
    a.push(value(rng))
      .push(rng.int(300))
      .op(rng.pick([OP.MSTORE, OP.MSTORE8]));
  } else if (r < 47) {
    a.push(rng.int(300)).op(OP.MLOAD);
    sink(a, rng);
  } else if (r < 55) {
    // Zeros often, so clearing slots earns refunds.
    a.push(rng.chance(0.4) ? 0n : value(rng))
      .push(rng.int(8))
      .op(OP.SSTORE);
  } else if (r < 58) {
    a.push(rng.int(8)).op(OP.SLOAD);
    sink(a, rng);
  } else if (r < 61) {
    if (rng.chance(0.5)) a.push(value(rng)).push(rng.int(4)).op(OP.TSTORE);
    else {
      a.push(rng.int(4)).op(OP.TLOAD);
      sink(a, rng);
    }
  } else if (r < 67) {
    const n = rng.int(5);
    for (let i = 0; i < n; i++) a.push(value(rng));
    a.push(rng.int(80))
      .push(rng.int(200))
      .op(OP.LOG0 + n);
  } else if (r < 70) {
    a.push(rng.int(100)).push(rng.int(200)).op(OP.KECCAK256);
    sink(a, rng);
  } else if (r < 74) {
    const op = rng.pick([OP.CALLDATACOPY, OP.CODECOPY, OP.MCOPY, OP.RETURNDATACOPY]);
    // RETURNDATACOPY past the return data fails the frame: keep it rare by copying little.
    const size = op === OP.RETURNDATACOPY ? rng.int(3) : rng.int(100);
    a.push(size).push(rng.int(64)).push(rng.int(200)).op(op);
  } else if (r < 76) {
    a.push(rng.int(40)).op(OP.CALLDATALOAD);
    sink(a, rng);
  } else if (r < 87) {
    const op = rng.pick([OP.CALL, OP.CALL, OP.STATICCALL, OP.DELEGATECALL, OP.CALLCODE]);
    a.push(rng.int(64)).push(rng.int(128)).push(rng.int(64)).push(rng.int(128));
    if (op === OP.CALL || op === OP.CALLCODE) a.push(rng.chance(0.5) ? 0n : BigInt(rng.int(1000)));
    const t = target(rng, ctx);
    if (t === 0n) a.op(OP.ADDRESS);
    else a.push(t);
    if (rng.chance(0.3)) a.op(OP.GAS);
    else a.push(rng.pick([0, 2300, 5000, 30_000, 100_000, 300_000]));
    a.op(op);
    sink(a, rng);
  } else if (r < 92) {
    const code = initCode(rng, ctx, depth);
    a.toMemory(code, 0);
    const create2 = rng.chance(0.5);
    if (create2) a.push(rng.int(3));
    a.push(code.length)
      .push(0)
      .push(rng.chance(0.7) ? 0 : rng.int(100))
      .op(create2 ? OP.CREATE2 : OP.CREATE);
    sink(a, rng);
  } else if (r < 97) {
    // A forward conditional jump over the next snippet.
    if (rng.chance(0.5)) a.push(rng.int(2));
    else a.push(rng.int(4)).op(OP.SLOAD);
    const label = a.pushLabel();
    a.op(OP.JUMPI);
    snippet(a, rng, ctx, depth);
    a.jumpdest(label);
  } else if (r < 98) {
    // A jump to a byte that is not a JUMPDEST (the frame fails), behind a condition.
    a.push(rng.int(2))
      .push(rng.int(a.length + 1))
      .op(OP.JUMPI);
  } else if (r < 99) {
    a.push(rng.int(2)).push(rng.int(8)).op(OP.SSTORE, OP.PUSH0, OP.PUSH0, OP.REVERT);
  } else {
    const t = target(rng, ctx);
    if (t === 0n) a.op(OP.ADDRESS);
    else a.push(t);
    a.op(OP.SELFDESTRUCT);
  }
}

/** A random program of about `size` snippets, ending in RETURN, REVERT, STOP or nothing. */
export function randomProgram(rng: Rng, ctx: ProgramContext, opts: { size?: number; depth?: number } = {}): Uint8Array {
  const a = new Assembler();
  const n = 1 + rng.int(opts.size ?? 30);
  for (let i = 0; i < n; i++) snippet(a, rng, ctx, opts.depth ?? 0);
  switch (rng.int(5)) {
    case 0:
      a.push(rng.int(64)).push(rng.int(128)).op(OP.REVERT);
      break;
    case 1:
      a.op(OP.STOP);
      break;
    case 2:
      break;
    default:
      a.push(rng.int(96)).push(rng.int(128)).op(OP.RETURN);
  }
  return a.bytes();
}

// ---- scenarios ---------------------------------------------------------------------------------------

export interface ScenarioAccount {
  addr: Uint8Array;
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  /** Slot (32-byte hex, no 0x) → value. */
  storage?: Map<string, Uint8Array>;
}

/** A pre-state and transactions run in order on it. */
export interface Scenario {
  name: string;
  fork: Fork;
  block: BlockEnv;
  accounts: ScenarioAccount[];
  txs: EngineTx[];
  /** The programs to print when the scenario fails (name → code). */
  programs: { name: string; code: Uint8Array }[];
}

export function address(n: number | bigint): Uint8Array {
  const out = new Uint8Array(20);
  const b = bigintToBytes(BigInt(n));
  out.set(b, 20 - b.length);
  return out;
}

export function blockEnv(overrides: Partial<BlockEnv> = {}): BlockEnv {
  return {
    number: 1000n,
    timestamp: 1_700_000_000n,
    coinbase: address(0xc0ffeen),
    gasLimit: 30_000_000n,
    baseFee: 7n,
    prevRandao: keccak256(Uint8Array.of(1)),
    blobBaseFee: 1n,
    chainId: 9000n,
    blockHash: (n) => keccak256(new TextEncoder().encode(n.toString())),
    ...overrides,
  };
}

/** A dynamic-fee transaction with defaults. */
export function engineTx(fields: Partial<EngineTx> & Pick<EngineTx, "from" | "nonce">): EngineTx {
  return {
    type: 2,
    to: undefined,
    gasLimit: 3_000_000n,
    value: 0n,
    data: new Uint8Array(0),
    maxFeePerGas: 100n,
    maxPriorityFeePerGas: 2n,
    accessList: [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList: [],
    ...fields,
  };
}

export const SENDER = address(0x5e4de4n);
const CONTRACT_A = address(0xaaaan);
const CONTRACT_B = address(0xbbbbn);

function randomStorage(rng: Rng): Map<string, Uint8Array> {
  const m = new Map<string, Uint8Array>();
  for (let i = 0; i < 8; i++) {
    if (rng.chance(0.4)) m.set(bytesToHex(word(i)), bigintToBytes(value(rng)));
  }
  return m;
}

function word(n: number): Uint8Array {
  const out = new Uint8Array(32);
  const b = bigintToBytes(BigInt(n));
  out.set(b, 32 - b.length);
  return out;
}

/** The scenario of a seed: contracts A and B with random programs, one or two transactions. */
export function randomScenario(seed: number): Scenario {
  const rng = new Rng(seed);
  const empty = address(0xee00n + BigInt(rng.int(4)));
  const ctxA: ProgramContext = { other: CONTRACT_B, extra: [SENDER, empty, address(0xc0ffeen)] };
  const ctxB: ProgramContext = { other: CONTRACT_A, extra: [SENDER, empty] };
  const codeA = randomProgram(rng, ctxA);
  const codeB = randomProgram(rng, ctxB, { size: 12 });
  const accounts: ScenarioAccount[] = [
    { addr: SENDER, nonce: 0n, balance: 10n ** 24n, code: new Uint8Array(0) },
    { addr: CONTRACT_A, nonce: 1n, balance: BigInt(rng.int(5000)), code: codeA, storage: randomStorage(rng) },
    { addr: CONTRACT_B, nonce: 1n, balance: BigInt(rng.int(5000)), code: codeB, storage: randomStorage(rng) },
  ];
  if (rng.chance(0.5)) accounts.push({ addr: empty, nonce: 0n, balance: 0n, code: new Uint8Array(0) });
  const programs = [
    { name: "A", code: codeA },
    { name: "B", code: codeB },
  ];
  const txs: EngineTx[] = [];
  const ntx = 1 + rng.int(2);
  for (let i = 0; i < ntx; i++) {
    const create = rng.chance(0.15);
    const data = create ? randomProgram(rng, ctxA, { size: 10 }) : rng.bytes(rng.int(70));
    if (create) programs.push({ name: `initcode of tx ${i}`, code: data });
    const accessList = rng.chance(0.3) ? [{ address: CONTRACT_A, storageKeys: [word(rng.int(8))] }] : [];
    txs.push(
      engineTx({
        from: SENDER,
        nonce: BigInt(i),
        to: create ? undefined : CONTRACT_A,
        data,
        value: rng.chance(0.5) ? 0n : BigInt(rng.int(10_000)),
        gasLimit: BigInt(100_000 + rng.int(2_000_000)),
        accessList,
        type: accessList.length > 0 || rng.chance(0.5) ? 2 : 0,
      }),
    );
  }
  return {
    name: `seed ${seed}`,
    fork: rng.chance(0.5) ? "prague" : "cancun",
    block: blockEnv({ prevRandao: rng.bytes(32) }),
    accounts,
    txs,
    programs,
  };
}

// ---- comparing ---------------------------------------------------------------------------------------

/** The first difference between the two executors, with the scenario's programs to print. */
export interface Mismatch {
  scenario: string;
  tx: number;
  what: string;
  a: string;
  b: string;
}

function hex(b: Uint8Array | undefined): string {
  return b === undefined ? "none" : `0x${bytesToHex(b)}`;
}

type Outcome = { kind: "invalid"; message: string } | { kind: "ran"; result: TxResult };

async function run(executor: Executor, state: OverlayStateManager, s: Scenario, tx: EngineTx): Promise<Outcome> {
  try {
    const r = executor(state, tx, s.block, s.fork);
    return { kind: "ran", result: r instanceof Promise ? await r : r };
  } catch (err) {
    if (err instanceof EngineTxError) return { kind: "invalid", message: err.message };
    throw err;
  }
}

/**
 * Error texts that name the same failure: ethereumjs reports RETURNDATACOPY past the return data as
 * "out of gas" (the frame consumes all its gas either way), geth as "return data out of bounds".
 */
const ERROR_ALIASES: Record<string, string> = { "return data out of bounds": "out of gas" };

function outcomeFields(o: Outcome): [string, string][] {
  if (o.kind === "invalid") return [["valid", "false"]];
  const r = o.result;
  return [
    ["valid", "true"],
    ["success", String(r.success)],
    ["gasUsed", r.gasUsed.toString()],
    ["refund", r.refund.toString()],
    ["returnData", hex(r.returnData)],
    ["error", ERROR_ALIASES[r.error] ?? r.error],
    ["createdAddress", hex(r.createdAddress)],
    ["logs", r.logs.map((l) => `${hex(l.address)}[${l.topics.map(hex).join(",")}]${hex(l.data)}`).join(" ")],
  ];
}

/** The overlay's diff as sorted lines (accounts with incarnations, storage by incarnation, codes). */
export function diffLines(state: OverlayStateManager): string[] {
  const d = state.diff();
  const lines = [
    ...d.accounts.map(
      ({ addr, account: a }) =>
        `account ${hex(addr)} exists=${a.exists} nonce=${a.nonce} balance=${a.balance} code=${hex(a.codeHash)} inc=${a.incarnation}`,
    ),
    ...d.storage.map((s) => `storage ${hex(s.addr)} inc=${s.incarnation} ${hex(s.slot)}=${hex(s.value)}`),
    ...d.codes.map((c) => `code ${hex(c.hash)}`),
  ];
  return lines.sort();
}

function preState(s: Scenario): MemoryStateReader {
  const r = new MemoryStateReader();
  for (const a of s.accounts) {
    r.put(a.addr, { nonce: a.nonce, balance: a.balance, code: a.code, ...(a.storage ? { storage: a.storage } : {}) });
  }
  return r;
}

/**
 * Runs the scenario's transactions in order through `a` and `b`, each on its own overlay over the same
 * pre-state; compares every outcome (validity, success, gas used, refund, return data, error, created
 * address, logs) and the state diff after each. Undefined when they agree.
 */
export async function compareExecutors(s: Scenario, a: Executor, b: Executor): Promise<Mismatch | undefined> {
  const pre = preState(s);
  const sa = new OverlayStateManager(pre);
  const sb = new OverlayStateManager(pre);
  for (const [i, tx] of s.txs.entries()) {
    const oa = await run(a, sa, s, tx);
    const ob = await run(b, sb, s, tx);
    const fa = outcomeFields(oa);
    const fb = new Map(outcomeFields(ob));
    for (const [what, va] of fa) {
      const vb = fb.get(what) ?? "";
      if (va !== vb) return { scenario: s.name, tx: i, what, a: va, b: vb };
    }
    const da = diffLines(sa);
    const db = diffLines(sb);
    const n = Math.max(da.length, db.length);
    for (let k = 0; k < n; k++) {
      if (da[k] !== db[k])
        return { scenario: s.name, tx: i, what: "state diff", a: da[k] ?? "(none)", b: db[k] ?? "(none)" };
    }
  }
  return undefined;
}

/** A mismatch as text: the scenario, the first difference, and every program in hex. */
export function formatMismatch(m: Mismatch, s: Scenario): string {
  return [
    `${m.scenario} (${s.fork}): tx ${m.tx}: ${m.what} differs`,
    `  a: ${m.a}`,
    `  b: ${m.b}`,
    ...s.programs.map((p) => `  program ${p.name}: ${hex(p.code)}`),
    ...s.txs.map((t, i) => `  tx ${i}: to ${hex(t.to)} value ${t.value} gas ${t.gasLimit} data ${hex(t.data)}`),
  ].join("\n");
}

// ---- a tiny assembler for hand-written test programs -------------------------------------------------

/** Opcode numbers by name. */
export const OPCODE_BY_NAME: ReadonlyMap<string, number> = new Map(OPCODES.map((o, i) => [o.name, i]));

/**
 * "PUSH1 0x01 0x0203 ADD" as hex (no 0x): names are opcodes, each PUSHn followed by its immediate
 * (left-padded to n bytes); a bare 0x… literal is pushed with the PUSH of its size.
 */
export function assemble(src: string): string {
  let out = "";
  const tokens = src.trim().split(/\s+/);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t.startsWith("0x")) {
      const hex = t.slice(2);
      if (hex.length % 2 !== 0 || hex.length === 0 || hex.length > 64) throw new RangeError(`bad literal ${t}`);
      out += (0x5f + hex.length / 2).toString(16) + hex;
      continue;
    }
    const op = OPCODE_BY_NAME.get(t);
    if (op === undefined) throw new RangeError(`unknown opcode ${t}`);
    out += op.toString(16).padStart(2, "0");
    if (t.startsWith("PUSH") && t !== "PUSH0") {
      out += (tokens[++i] ?? "").replace(/^0x/, "").padStart(Number(t.slice(4)) * 2, "0");
    }
  }
  return out;
}

/** {@link assemble} as bytes. */
export function assembleBytes(src: string): Uint8Array {
  return new Uint8Array(Buffer.from(assemble(src), "hex"));
}
