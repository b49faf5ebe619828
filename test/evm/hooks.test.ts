import { describe, expect, test } from "vitest";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import { createStructLogger, type StructLog } from "../../src/app/evm/tracer.js";
import { create2Address, createAddress } from "../../src/evm/interpreter.js";
import { OPCODES } from "../../src/evm/opcodes.js";
import { executeCall, executeTx } from "../../src/evm/transaction.js";
import type { BlockEnv, EngineHooks, EngineTx, FrameEnter, FrameExit, TxResult } from "../../src/evm/types.js";
import {
  address,
  assembleBytes,
  compareExecutors,
  formatMismatch,
  OPCODE_BY_NAME,
  randomScenario,
} from "./randomPrograms.js";
import { MemoryStateReader } from "./stateTests.js";

/**
 * The engine's tracing hooks (types.ts EngineHooks): frames entered and left in geth's order and
 * depths (calls, reverts, precompiles, accounts without code, creations, the depth limit), the traced
 * loop's opcode steps and their costs against geth's struct-logger numbers, and the traced loop
 * against the untraced one (the same outcome and state for random programs).
 */

/** Hand-assembled programs (randomPrograms.ts assemble). */
const asm = assembleBytes;

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ""), "hex"));
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

// ---- the harness -----------------------------------------------------------------------------------

const SENDER = address(0x5e5e);
const C = address(0xc0c0);
const D = address(0xd0d0);
const E = address(0xe0e0);
const EMPTY_ACCOUNT = address(0xeeee);
const IDENTITY = address(4);
const SHA256 = address(2);
const COINBASE = address(0xcb);

const block: BlockEnv = {
  number: 100n,
  timestamp: 1_700_000_000n,
  coinbase: COINBASE,
  gasLimit: 1n << 40n,
  baseFee: 0n,
  prevRandao: new Uint8Array(32),
  blobBaseFee: 1n,
  chainId: 1n,
  blockHash: () => new Uint8Array(32),
};

interface Account {
  code?: Uint8Array;
  balance?: bigint;
  storage?: Record<string, bigint>;
}

function stateOf(accounts: [Uint8Array, Account][]): OverlayStateManager {
  const pre = new MemoryStateReader();
  pre.put(SENDER, { nonce: 0n, balance: 10n ** 24n, code: new Uint8Array() });
  for (const [a, s] of accounts) {
    const storage = new Map<string, Uint8Array>();
    for (const [k, v] of Object.entries(s.storage ?? {})) {
      storage.set(k.padStart(64, "0"), bytes(v.toString(16).padStart(64, "0")));
    }
    pre.put(a, { nonce: 1n, balance: s.balance ?? 0n, code: s.code ?? new Uint8Array(), storage });
  }
  return new OverlayStateManager(pre);
}

function tx(fields: Partial<EngineTx>): EngineTx {
  return {
    type: 2,
    from: SENDER,
    to: C,
    nonce: 0n,
    gasLimit: 1_000_000n,
    value: 0n,
    data: new Uint8Array(),
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 0n,
    accessList: [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList: [],
    ...fields,
  };
}

const name = (a: Uint8Array): string => {
  const known: [Uint8Array, string][] = [
    [SENDER, "S"],
    [C, "C"],
    [D, "D"],
    [E, "E"],
    [EMPTY_ACCOUNT, "empty"],
    [IDENTITY, "identity"],
    [SHA256, "sha256"],
  ];
  return known.find(([k]) => hex(k) === hex(a))?.[1] ?? hex(a);
};

/** Frame hooks that record one line per event. */
function frameRecorder(): { lines: string[]; enters: FrameEnter[]; exits: FrameExit[]; hooks: EngineHooks } {
  const lines: string[] = [];
  const enters: FrameEnter[] = [];
  const exits: FrameExit[] = [];
  return {
    lines,
    enters,
    exits,
    hooks: {
      onEnter: (e) => {
        enters.push(e);
        const code = hex(e.codeAddress) === hex(e.to) ? "" : ` code=${name(e.codeAddress)}`;
        lines.push(
          `enter ${e.depth} ${e.type} ${name(e.from)}>${name(e.to)}${code}${e.precompile ? " precompile" : ""}`,
        );
      },
      onExit: (x) => {
        exits.push(x);
        lines.push(`exit ${x.depth} ${x.error === "" ? "ok" : x.error}${x.reverted ? " reverted" : ""}`);
      },
    },
  };
}

/** CALL-family call of `to` with all the gas, no input, no output (`value` for CALL and CALLCODE). */
function callAll(op: "CALL" | "CALLCODE" | "DELEGATECALL" | "STATICCALL", to: Uint8Array, value = 0n): string {
  const v = op === "CALL" || op === "CALLCODE" ? `PUSH32 0x${value.toString(16).padStart(64, "0")} ` : "";
  return `PUSH0 PUSH0 PUSH0 PUSH0 ${v}PUSH20 0x${hex(to)} GAS ${op}`;
}

function structLogs(state: OverlayStateManager, t: EngineTx): { result: TxResult; logs: StructLog[] } {
  const logger = createStructLogger();
  const hooks = logger.hooks({ from: t.from, to: t.to, coinbase: COINBASE, gasLimit: t.gasLimit, state });
  const result = executeTx(state, t, block, "prague", { hooks });
  const r = logger.result({
    gasUsed: result.gasUsed,
    failed: !result.success,
    returnData: result.returnData,
    vmError: result.error,
  });
  return { result, logs: r.structLogs };
}

// ---- frames ----------------------------------------------------------------------------------------

describe("onEnter and onExit", () => {
  test("default: nested CALL, DELEGATECALL and a precompile by STATICCALL, in geth's order and depths", () => {
    // C calls D; D delegates to E's code; E (in D's context) staticcalls the identity precompile.
    const state = stateOf([
      [C, { code: asm(`${callAll("CALL", D)} STOP`) }],
      [D, { code: asm(`${callAll("DELEGATECALL", E)} STOP`) }],
      [E, { code: asm("PUSH1 0x20 PUSH0 PUSH1 0x04 PUSH0 PUSH1 0x04 GAS STATICCALL STOP") }],
    ]);
    const rec = frameRecorder();
    const r = executeTx(state, tx({}), block, "prague", { hooks: rec.hooks });
    expect(r.success).toBe(true);
    expect(rec.lines).toEqual([
      "enter 0 CALL S>C",
      "enter 1 CALL C>D",
      // geth's from is the calling frame (D); the context stays D, E's code runs.
      "enter 2 DELEGATECALL D>D code=E",
      "enter 3 STATICCALL D>identity precompile",
      "exit 3 ok",
      "exit 2 ok",
      "exit 1 ok",
      "exit 0 ok",
    ]);
    // The tx's frame starts with the gas left after the intrinsic 21000 and uses what the receipt says.
    expect(rec.enters[0]?.gas).toBe(1_000_000n - 21_000n);
    expect(rec.exits.at(-1)?.gasUsed).toBe(r.gasUsed - 21_000n);
    // identity: 15 + 3 per word.
    expect(rec.exits[0]?.gasUsed).toBe(18n);
    expect(hex(rec.exits[0]?.output ?? new Uint8Array())).toBe("00".repeat(4));
  });

  test("behavior: a revert hands back its data and unused gas; an exceptional halt uses all the gas", () => {
    const state = stateOf([
      [C, { code: asm(`${callAll("CALL", D)} POP ${callAll("CALL", E)} STOP`) }],
      // 3 + 2 + (3 + 3 memory) + 3 + 2 + 0 = 16 gas, then REVERT with the word 0x2a.
      [D, { code: asm("PUSH1 0x2a PUSH0 MSTORE PUSH1 0x20 PUSH0 REVERT") }],
      [E, { code: asm("INVALID") }],
    ]);
    const rec = frameRecorder();
    const r = executeTx(state, tx({}), block, "prague", { hooks: rec.hooks });
    expect(r.success).toBe(true);
    expect(rec.lines).toEqual([
      "enter 0 CALL S>C",
      "enter 1 CALL C>D",
      "exit 1 execution reverted reverted",
      "enter 1 CALL C>E",
      "exit 1 invalid opcode: INVALID reverted",
      "exit 0 ok",
    ]);
    const [revert, invalid] = rec.exits;
    expect(revert?.gasUsed).toBe(16n);
    expect(BigInt(`0x${hex(revert?.output ?? new Uint8Array())}`)).toBe(0x2an);
    expect(invalid?.gasUsed).toBe(rec.enters[2]?.gas);
    expect(invalid?.output.length).toBe(0);
  });

  test("behavior: calls that run no code (an account without code, a precompile, a value too large) open and close a frame", () => {
    const state = stateOf([
      [
        C,
        {
          code: asm(
            `${callAll("CALL", EMPTY_ACCOUNT, 5n)} POP ${callAll("STATICCALL", SHA256)} POP ${callAll("CALL", D, 10n ** 30n)} STOP`,
          ),
          balance: 100n,
        },
      ],
    ]);
    const rec = frameRecorder();
    const r = executeTx(state, tx({}), block, "prague", { hooks: rec.hooks });
    expect(r.success).toBe(true);
    expect(rec.lines).toEqual([
      "enter 0 CALL S>C",
      "enter 1 CALL C>empty",
      "exit 1 ok",
      "enter 1 STATICCALL C>sha256 precompile",
      "exit 1 ok",
      "enter 1 CALL C>D",
      "exit 1 insufficient balance for transfer reverted",
      "exit 0 ok",
    ]);
    // A value-bearing call starts with the stipend on top and uses none of it.
    const empty = rec.enters[1];
    expect(empty?.value).toBe(5n);
    expect(rec.exits[0]?.gasUsed).toBe(0n);
    // sha256 of nothing: 60 gas.
    expect(rec.exits[1]?.gasUsed).toBe(60n);
    expect(rec.exits[2]?.gasUsed).toBe(0n);
  });

  test("behavior: a creation tx and the CREATE2 its initcode makes", () => {
    // The child's initcode returns the single byte 0x01.
    const child = asm("PUSH1 0x01 PUSH0 MSTORE8 PUSH1 0x01 PUSH0 RETURN");
    expect(child.length).toBe(8);
    const initcode = asm(`PUSH8 0x${hex(child)} PUSH0 MSTORE PUSH0 PUSH1 0x08 PUSH1 0x18 PUSH0 CREATE2 POP STOP`);
    const state = stateOf([]);
    const rec = frameRecorder();
    const r = executeTx(state, tx({ to: undefined, data: initcode }), block, "prague", { hooks: rec.hooks });
    expect(r.success).toBe(true);
    const parent = createAddress(SENDER, 0n);
    const created = create2Address(parent, new Uint8Array(32), child);
    expect(rec.lines).toEqual([
      `enter 0 CREATE S>${hex(parent)}`,
      `enter 1 CREATE2 ${hex(parent)}>${hex(created)}`,
      "exit 1 ok",
      "exit 0 ok",
    ]);
    expect(rec.enters[0]?.input).toEqual(initcode);
    expect(rec.enters[1]?.input).toEqual(child);
    expect(hex(rec.exits[0]?.output ?? new Uint8Array())).toBe("01");
  });

  test("behavior: SELFDESTRUCT is a frame of its own (gas 0, the balance as value)", () => {
    const state = stateOf([[C, { code: asm(`PUSH20 0x${hex(E)} SELFDESTRUCT`), balance: 77n }]]);
    const rec = frameRecorder();
    executeTx(state, tx({}), block, "prague", { hooks: rec.hooks });
    expect(rec.lines).toEqual(["enter 0 CALL S>C", "enter 1 SELFDESTRUCT C>E", "exit 1 ok", "exit 0 ok"]);
    expect(rec.enters[1]?.value).toBe(77n);
    expect(rec.enters[1]?.gas).toBe(0n);
  });

  test("error: the call past depth 1024 enters and exits with the depth error, using no gas", () => {
    // The contract calls itself with all its gas until the depth limit stops it.
    const state = stateOf([[C, { code: asm(`${callAll("CALL", C)} STOP`) }]]);
    const rec = frameRecorder();
    const r = executeCall(
      state,
      { from: SENDER, to: C, value: 0n, data: new Uint8Array(), gasLimit: 1n << 45n, gasPrice: 0n },
      block,
      "prague",
      { hooks: rec.hooks },
    );
    expect(r.success).toBe(true);
    expect(rec.enters).toHaveLength(1026);
    expect(rec.enters.map((e) => e.depth)).toEqual(Array.from({ length: 1026 }, (_, i) => i));
    expect(rec.exits[0]).toMatchObject({ depth: 1025, error: "max call depth exceeded", gasUsed: 0n, reverted: true });
    expect(rec.exits.slice(1).every((x) => x.error === "")).toBe(true);
    expect(rec.exits.at(-1)?.depth).toBe(0);
  });
});

// ---- opcodes ---------------------------------------------------------------------------------------

/** The log of the first `op` at `depth` (1-based). */
function logOf(logs: StructLog[], op: string, nth = 0, depth = 1): StructLog {
  const found = logs.filter((l) => l.op === op && l.depth === depth)[nth];
  if (found === undefined) throw new RangeError(`no ${op} #${nth} at depth ${depth}`);
  return found;
}

describe("struct logs on the traced loop (gas costs as geth's StructLogger reports them)", () => {
  test("default: SSTORE cold and warm, SLOAD, memory expansion", () => {
    const state = stateOf([
      [
        C,
        {
          code: asm(
            "PUSH1 0x01 PUSH0 SSTORE PUSH1 0x02 PUSH0 SSTORE PUSH1 0x07 SLOAD POP PUSH1 0x2a PUSH1 0x40 MSTORE PUSH0 MLOAD POP PUSH0 PUSH1 0x07 SSTORE STOP",
          ),
          storage: { "7": 9n },
        },
      ],
    ]);
    const { result, logs } = structLogs(state, tx({}));
    expect(result.success).toBe(true);
    // Slot 0 cold, 0 → 1: 20000 + 2100. Then 1 → 2 (original 0, dirty): 100.
    expect(logOf(logs, "SSTORE", 0).gasCost).toBe(22_100n);
    expect(logOf(logs, "SSTORE", 1).gasCost).toBe(100n);
    // SLOAD of the cold slot 7: 2100; its storage snapshot shows the value read.
    const sload = logOf(logs, "SLOAD");
    expect(sload.gasCost).toBe(2100n);
    expect(sload.storage?.get("07".padStart(64, "0"))).toEqual(bytes(9n.toString(16).padStart(64, "0")));
    // MSTORE at 0x40 on empty memory: 3 + 3 words of memory (9).
    expect(logOf(logs, "MSTORE").gasCost).toBe(12n);
    // MLOAD within memory already paid for: 3.
    expect(logOf(logs, "MLOAD").gasCost).toBe(3n);
    // Slot 7 (warm, original 9) cleared: 2900, and the refund counter gets 4800 after it.
    const clear = logOf(logs, "SSTORE", 2);
    expect(clear.gasCost).toBe(2900n);
    expect(clear.refund).toBe(0n);
    expect(logOf(logs, "STOP").refund).toBe(4800n);
    // geth's storage view: per contract, every slot touched so far.
    expect([...(clear.storage?.keys() ?? [])].sort()).toEqual(["00", "07"].map((k) => k.padStart(64, "0")));
    // Each step's gas is the last one's minus its cost.
    for (let i = 1; i < logs.length; i++) {
      const [a, b] = [logs[i - 1] as StructLog, logs[i] as StructLog];
      expect(b.gas).toBe(a.gas - a.gasCost);
    }
    expect(logs[0]?.depth).toBe(1);
  });

  test("default: CALL's cost includes the gas it hands on (not the stipend); CREATE's does not", () => {
    const gasArg = 0xffff;
    const state = stateOf([
      [
        C,
        {
          // CALL E (cold, no code) with 0xffff gas and no value; CALL D (cold, empty) with 1 wei and
          // 0xffff gas, output into 32 bytes at 0x20; CREATE with empty initcode.
          code: asm(
            `PUSH0 PUSH0 PUSH0 PUSH0 PUSH0 PUSH20 0x${hex(E)} PUSH2 0xffff CALL POP ` +
              `PUSH1 0x20 PUSH1 0x20 PUSH0 PUSH0 PUSH1 0x01 PUSH20 0x${hex(EMPTY_ACCOUNT)} PUSH2 0xffff CALL POP ` +
              "PUSH0 PUSH0 PUSH0 CREATE POP STOP",
          ),
          balance: 10n,
        },
      ],
    ]);
    const { result, logs } = structLogs(state, tx({}));
    expect(result.success).toBe(true);
    // 100 warm + 2500 cold + 0xffff handed on.
    expect(logOf(logs, "CALL", 0).gasCost).toBe(BigInt(2600 + gasArg));
    // + 9000 value + 25000 new account + memory to 0x40 (2 words: 6); the 2300 stipend is not charged.
    expect(logOf(logs, "CALL", 1).gasCost).toBe(BigInt(2600 + 9000 + 25_000 + 6 + gasArg));
    // CREATE: 32000 (empty initcode, no memory); the 63/64 it hands on is charged while it executes.
    expect(logOf(logs, "CREATE").gasCost).toBe(32_000n);
    // After each call returns, the caller has its gas back but what the callee used.
    const call0 = logOf(logs, "CALL", 0);
    const after = logs[logs.indexOf(call0) + 1] as StructLog;
    expect(after.gas).toBe(call0.gas - call0.gasCost + BigInt(gasArg));
  });

  test("default: a CALL's frame logs at depth 2, between the caller's CALL and the next opcode", () => {
    const state = stateOf([
      [C, { code: asm(`${callAll("CALL", D)} STOP`) }],
      [D, { code: asm("PUSH1 0x01 POP STOP") }],
    ]);
    const { logs } = structLogs(state, tx({}));
    expect(logs.map((l) => `${l.depth} ${l.op}`)).toEqual([
      "1 PUSH0",
      "1 PUSH0",
      "1 PUSH0",
      "1 PUSH0",
      "1 PUSH32",
      "1 PUSH20",
      "1 GAS",
      "1 CALL",
      "2 PUSH1",
      "2 POP",
      "2 STOP",
      "1 STOP",
    ]);
    // The stack before CALL: bottom first, the gas on top.
    const call = logOf(logs, "CALL");
    expect(call.stack?.slice(0, 6)).toEqual([0n, 0n, 0n, 0n, 0n, BigInt(`0x${hex(D)}`)]);
  });

  test("error: faults before an opcode executes carry geth's error; faults while it executes do not", () => {
    // ADD on an empty stack: underflow, cost the static 3.
    let { result, logs } = structLogs(stateOf([[C, { code: asm("ADD") }]]), tx({}));
    expect(result.error).toBe("stack underflow (0 <=> 2)");
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ op: "ADD", gasCost: 3n, error: "stack underflow (0 <=> 2)" });
    // SSTORE with no more than the 2300 stipend: out of gas at once, cost 0 (geth's sentry check).
    ({ result, logs } = structLogs(
      stateOf([[C, { code: asm("PUSH1 0x01 PUSH0 SSTORE") }]]),
      tx({ gasLimit: 21_000n + 2305n }),
    ));
    expect(result.error).toBe("out of gas");
    expect(logs.at(-1)).toMatchObject({ op: "SSTORE", gas: 2300n, gasCost: 0n, error: "out of gas" });
    // Running out of static gas: the log carries the static cost.
    ({ result, logs } = structLogs(stateOf([[C, { code: asm("JUMPDEST PUSH0 JUMP") }]]), tx({ gasLimit: 21_010n })));
    expect(result.error).toBe("out of gas");
    expect(logs.at(-1)?.error).toBe("out of gas");
    expect(logs.at(-1)?.gasCost).toBe(BigInt(OPCODES[OPCODE_BY_NAME.get(logs.at(-1)?.op ?? "") ?? 0]?.gas ?? -1));
    // A jump to a non-JUMPDEST fails while JUMP executes: its log has the cost 8 and no error.
    ({ result, logs } = structLogs(stateOf([[C, { code: asm("PUSH1 0x05 JUMP") }]]), tx({})));
    expect(result.error).toBe("invalid jump destination");
    expect(logs.at(-1)).toMatchObject({ op: "JUMP", gasCost: 8n });
    expect(logs.at(-1)?.error).toBeUndefined();
  });
});

// ---- the traced loop against the untraced one ------------------------------------------------------

/**
 * Every hook, checking the engine's promises: frames nest, each onOpcode gets one onOpcodeEnd before
 * the next opcode, frame or log, and within a frame the next opcode finds the gas the last one left.
 */
function checkingHooks(): EngineHooks & { done(): void } {
  const frames: number[] = [];
  let open = false;
  /** Per frame depth: the gas its next opcode must find (undefined after a CALL/CREATE or a frame). */
  const expectGas: (number | undefined)[] = [];
  let last: { gas: number; depth: number; op: number } | undefined;
  const fail = (what: string) => {
    throw new Error(`hook order: ${what}`);
  };
  return {
    onEnter: (e) => {
      if (open) fail("onEnter inside an open opcode");
      if (e.depth !== frames.length) fail(`enter depth ${e.depth} with ${frames.length} frames open`);
      frames.push(e.depth);
      expectGas[e.depth + 1] = undefined;
    },
    onExit: (x) => {
      if (open) fail("onExit inside an open opcode");
      if (frames.pop() !== x.depth) fail(`exit depth ${x.depth}`);
      expectGas[x.depth + 1] = undefined;
      expectGas[x.depth] = undefined;
    },
    onOpcode: (s) => {
      if (open) fail("onOpcode while the last one is open");
      if (s.depth !== frames.length) fail(`opcode depth ${s.depth} with ${frames.length} frames`);
      const want = expectGas[s.depth];
      if (want !== undefined && want !== s.gas) fail(`gas ${s.gas}, the last opcode left ${want}`);
      open = true;
      last = { gas: s.gas, depth: s.depth, op: s.op };
    },
    onOpcodeEnd: (cost, error) => {
      if (!open || last === undefined) fail("onOpcodeEnd without onOpcode");
      open = false;
      if (cost < 0) fail(`negative cost ${cost}`);
      const l = last as { gas: number; depth: number; op: number };
      const opensFrame = [0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa].includes(l.op);
      expectGas[l.depth] = error !== "" || opensFrame ? undefined : l.gas - cost;
    },
    onLog: () => {
      if (open) fail("onLog inside an open opcode");
    },
    done: () => {
      if (frames.length !== 0 || open) fail("frames or an opcode left open");
    },
  };
}

describe("the traced loop", () => {
  test("default: random programs give the same outcome and state traced and untraced (seeds 1..300)", async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const s = randomScenario(seed);
      const traced = (state: Parameters<typeof executeTx>[0], t: EngineTx, b: BlockEnv, fork: "cancun" | "prague") => {
        const hooks = checkingHooks();
        const r = executeTx(state, t, b, fork, { hooks });
        hooks.done();
        return r;
      };
      const m = await compareExecutors(s, executeTx, traced);
      if (m !== undefined) expect.fail(formatMismatch(m, s));
    }
  });
});
