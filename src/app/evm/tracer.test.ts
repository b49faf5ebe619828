import { describe, expect, test } from "vitest";
import { address, assembleBytes, blockEnv } from "../../../test/evm/randomPrograms.js";
import { MemoryStateReader } from "../../../test/evm/stateTests.js";
import { createAddress, type EngineTx, executeTx } from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { createPrestateTracer, type PrestateResult } from "./prestateTracer.js";
import { OverlayStateManager } from "./stateManager.js";
import {
  type CallFrame,
  createCallTracer,
  createFourByteTracer,
  createStructLogger,
  type EvmTracer,
  revertReason,
} from "./tracer.js";
import { createVmTracer, type VmTrace } from "./vmTracer.js";

/**
 * The built-in tracers on cometh's EVM, run on hand-assembled contracts: callTracer (types, from/to
 * and value per frame type, revert reasons, logs and their positions, failed frames' logs dropped,
 * onlyTopCall), 4byteTracer and prestateTracer (what an opcode that fails before it runs leaves out,
 * diff mode).
 */

const asm = assembleBytes;

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

const SENDER = address(0x5e5e);
const C = address(0xc0c0);
const D = address(0xd0d0);
const E = address(0xe0e0);
const COINBASE = address(0xcb);
const block = blockEnv({ coinbase: COINBASE, baseFee: 1n });

function stateOf(accounts: [Uint8Array, { code?: Uint8Array; balance?: bigint; storage?: Record<string, bigint> }][]) {
  const pre = new MemoryStateReader();
  pre.put(SENDER, { nonce: 0n, balance: 10n ** 24n, code: new Uint8Array() });
  for (const [a, s] of accounts) {
    const storage = new Map<string, Uint8Array>();
    for (const [k, v] of Object.entries(s.storage ?? {})) {
      storage.set(k.padStart(64, "0"), new Uint8Array(Buffer.from(v.toString(16).padStart(64, "0"), "hex")));
    }
    pre.put(a, { nonce: 1n, balance: s.balance ?? 0n, code: s.code ?? new Uint8Array(), storage });
  }
  return new OverlayStateManager(pre);
}

function tx(fields: Partial<EngineTx> = {}): EngineTx {
  return {
    type: 2,
    from: SENDER,
    to: C,
    nonce: 0n,
    gasLimit: 500_000n,
    value: 0n,
    data: new Uint8Array(),
    maxFeePerGas: 10n,
    maxPriorityFeePerGas: 2n,
    accessList: [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList: [],
    ...fields,
  };
}

/** Runs `t` with `tracer` as the reader does: hooks on the state before, afterTx, result. */
function trace<T>(state: OverlayStateManager, tracer: EvmTracer<T>, t: EngineTx = tx()): T {
  const hooks = tracer.hooks({ from: t.from, to: t.to, coinbase: COINBASE, gasLimit: t.gasLimit, state });
  const r = executeTx(state, t, block, "prague", { hooks });
  tracer.afterTx?.(state);
  return tracer.result({ gasUsed: r.gasUsed, failed: !r.success, returnData: r.returnData, vmError: r.error });
}

/** `op` of `to` with all the gas; input: memory [0, inSize). */
function call(op: string, to: Uint8Array, opts: { value?: number; inSize?: number } = {}): string {
  const value = op === "CALL" || op === "CALLCODE" ? `PUSH1 0x${(opts.value ?? 0).toString(16)} ` : "";
  return `PUSH0 PUSH0 PUSH1 0x${(opts.inSize ?? 0).toString(16)} PUSH0 ${value}PUSH20 0x${hex(to)} GAS ${op}`;
}

/** Error(string) revert data of `text` (< 32 bytes), as memory-building code and then REVERT. */
function revertWith(text: string): string {
  const data = Buffer.concat([
    Buffer.from("08c379a0", "hex"),
    Buffer.from((32).toString(16).padStart(64, "0"), "hex"),
    Buffer.from(text.length.toString(16).padStart(64, "0"), "hex"),
    Buffer.from(Buffer.from(text).toString("hex").padEnd(64, "0"), "hex"),
  ]);
  let code = "";
  for (let i = 0; i < data.length; i += 32) {
    code += `PUSH32 0x${data
      .subarray(i, i + 32)
      .toString("hex")
      .padEnd(64, "0")} PUSH1 0x${i.toString(16)} MSTORE `;
  }
  return `${code}PUSH1 0x${data.length.toString(16)} PUSH0 REVERT`;
}

const LOG0 = (byte: number) => `PUSH1 0x${byte.toString(16)} PUSH0 MSTORE8 PUSH1 0x01 PUSH0 LOG0`;

describe("callTracer", () => {
  test("default: frame types, from/to, values and gas as geth's callTracer", () => {
    const state = stateOf([
      [C, { code: asm(`${call("CALL", D, { value: 3 })} POP ${call("STATICCALL", E)} POP STOP`), balance: 10n }],
      [D, { code: asm(`${call("DELEGATECALL", E)} POP STOP`) }],
      [E, { code: asm("STOP") }],
    ]);
    const root = trace(state, createCallTracer(), tx({ value: 5n })) as CallFrame;
    expect(root).toMatchObject({ type: "CALL", from: SENDER, to: C, value: 5n, gas: 500_000n });
    const [toD, toE] = root.calls;
    expect(toD).toMatchObject({ type: "CALL", from: C, to: D, value: 3n });
    // DELEGATECALL: from is the delegating contract, to the code's account, value the inherited one.
    expect(toD?.calls[0]).toMatchObject({ type: "DELEGATECALL", from: D, to: E, value: 3n });
    expect(toE).toMatchObject({ type: "STATICCALL", from: C, to: E, value: undefined });
    expect(toE?.gasUsed).toBe(0n);
  });

  test("behavior: a reverted frame keeps its output and revert reason; a failed creation loses its address", () => {
    const state = stateOf([
      [C, { code: asm(`${call("CALL", D)} POP PUSH0 PUSH0 PUSH0 CREATE POP PUSH0 PUSH0 PUSH1 0x01 CREATE POP STOP`) }],
      [D, { code: asm(revertWith("nope")) }],
    ]);
    const root = trace(state, createCallTracer()) as CallFrame;
    const [reverted, created, failedCreate] = root.calls;
    expect(reverted?.error).toBe("execution reverted");
    expect(reverted?.revertReason).toBe("nope");
    expect(hex(reverted?.output ?? new Uint8Array()).slice(0, 8)).toBe("08c379a0");
    expect(created).toMatchObject({ type: "CREATE", to: createAddress(C, 1n) });
    expect(created?.error).toBeUndefined();
    // The second CREATE sends 1 wei C does not have.
    expect(failedCreate?.type).toBe("CREATE");
    expect(failedCreate?.error).toBe("insufficient balance for transfer");
    expect(failedCreate?.to).toBeUndefined();
  });

  test("behavior: withLog keeps each frame's logs with their position among its calls, not a failed frame's", () => {
    const state = stateOf([
      [C, { code: asm(`${LOG0(1)} ${call("CALL", D)} POP ${LOG0(2)} ${call("CALL", E)} POP ${LOG0(3)} STOP`) }],
      [D, { code: asm(`${LOG0(0xd)} STOP`) }],
      [E, { code: asm(`${LOG0(0xe)} PUSH0 PUSH0 REVERT`) }],
    ]);
    const root = trace(state, createCallTracer({ withLog: true })) as CallFrame;
    // index: geth's block-wide log index; the reverted frame's log gave its index back.
    expect(root.logs?.map((l) => [hex(l.data), l.position, l.index])).toEqual([
      ["01", 0, 0],
      ["02", 1, 2],
      ["03", 2, 3],
    ]);
    expect(root.calls[0]?.logs?.map((l) => [hex(l.data), l.index])).toEqual([["0d", 1]]);
    expect(root.calls[1]?.error).toBe("execution reverted");
    expect(root.calls[1]?.logs).toBeUndefined();
    // Without withLog, no logs anywhere; with onlyTopCall, the top frame alone (and its own logs).
    expect(
      (trace(stateOf([[C, { code: asm(`${LOG0(1)} STOP`) }]]), createCallTracer()) as CallFrame).logs,
    ).toBeUndefined();
    const top = trace(
      stateOf([
        [C, { code: asm(`${call("CALL", D)} POP ${LOG0(2)} STOP`) }],
        [D, { code: asm(`${LOG0(0xd)} STOP`) }],
      ]),
      createCallTracer({ onlyTopCall: true, withLog: true }),
    ) as CallFrame;
    expect(top.calls).toEqual([]);
    expect(top.logs?.map((l) => hex(l.data))).toEqual(["02"]);
  });

  test("behavior: SELFDESTRUCT appears as a frame with the balance moved", () => {
    const state = stateOf([[C, { code: asm(`PUSH20 0x${hex(E)} SELFDESTRUCT`), balance: 9n }]]);
    const root = trace(state, createCallTracer()) as CallFrame;
    expect(root.calls[0]).toMatchObject({ type: "SELFDESTRUCT", from: C, to: E, value: 9n, gas: 0n, gasUsed: 0n });
  });

  test("error: a failed tx's top frame carries the error; its gas used is the receipt's", () => {
    const state = stateOf([[C, { code: asm("PUSH1 0x05 JUMP") }]]);
    const root = trace(state, createCallTracer()) as CallFrame;
    expect(root.error).toBe("invalid jump destination");
    expect(root.gasUsed).toBe(500_000n);
    expect(root.output).toEqual(new Uint8Array());
  });

  test("args: frameGasAtTop gives the top frame's own gas (no intrinsic gas) and what its execution used", () => {
    // PUSH0 PUSH0 RETURN: 2 + 2 + 0 gas.
    const state = stateOf([[C, { code: asm("PUSH0 PUSH0 RETURN") }]]);
    const geth = trace(state, createCallTracer()) as CallFrame;
    expect([geth.gas, geth.gasUsed]).toEqual([500_000n, 21_004n]);
    const own = trace(
      stateOf([[C, { code: asm("PUSH0 PUSH0 RETURN") }]]),
      createCallTracer({ frameGasAtTop: true }),
    ) as CallFrame;
    expect([own.gas, own.gasUsed]).toEqual([500_000n - 21_000n, 4n]);
  });
});

describe("revertReason", () => {
  test("default: Error(string) and Panic(uint256) as geth unpacks them", () => {
    const panic = (code: number) =>
      new Uint8Array(Buffer.from(`4e487b71${code.toString(16).padStart(64, "0")}`, "hex"));
    expect(revertReason(panic(0x11))).toBe("arithmetic underflow or overflow");
    expect(revertReason(panic(0x99))).toBe("unknown panic code: 0x99");
    expect(revertReason(Uint8Array.of(1, 2, 3))).toBeUndefined();
    expect(revertReason(new Uint8Array(Buffer.from("deadbeef", "hex")))).toBeUndefined();
  });
});

describe("4byteTracer", () => {
  test("default: selectors of CALL-family frames with code; DELEGATECALL to a precompile and creations count nothing", () => {
    const state = stateOf([
      [
        C,
        {
          code: asm(
            `PUSH4 0xaabbccdd PUSH0 MSTORE ${call("CALL", D, { inSize: 0x24 })} POP ${call("DELEGATECALL", address(4), { inSize: 0x20 })} POP STOP`,
          ),
        },
      ],
      [D, { code: asm("STOP") }],
    ]);
    const counts = trace(state, createFourByteTracer(), tx({ data: new Uint8Array(Buffer.from("11223344ff", "hex")) }));
    // Memory word 0 is 0x00..00aabbccdd: the selector is its first 4 bytes.
    expect([...counts]).toEqual([
      ["0x11223344-1", 1],
      ["0x00000000-32", 1],
    ]);
  });
});

describe("prestateTracer", () => {
  test("default: an opcode that fails before it runs touches nothing; one that runs does", () => {
    // BALANCE(D) runs; the CALL to E then runs out of gas while charging (cold access with too little gas).
    const state = stateOf([
      [C, { code: asm(`PUSH20 0x${hex(D)} BALANCE POP PUSH0 PUSH0 PUSH0 PUSH0 PUSH0 PUSH20 0x${hex(E)} PUSH0 CALL`) }],
      [D, { balance: 4n }],
      [E, { balance: 6n }],
    ]);
    // 21000 + BALANCE's 2600 and the pushes, leaving less than CALL's 2600.
    const r = trace(state, createPrestateTracer(), tx({ gasLimit: 21_000n + 2_620n + 100n }));
    expect(r.pre.get(bytesToHex(D))?.balance).toBe(4n);
    expect(r.pre.has(bytesToHex(E))).toBe(false);
  });

  test("behavior: SLOAD and SSTORE slots with their values before the tx; diff mode gives what changed", () => {
    const state = stateOf([
      [C, { code: asm("PUSH1 0x07 PUSH1 0x01 SSTORE PUSH1 0x02 SLOAD POP STOP"), storage: { "1": 5n, "2": 8n } }],
    ]);
    const slot = (n: number) => n.toString(16).padStart(64, "0");
    const word = (n: bigint) => new Uint8Array(Buffer.from(n.toString(16).padStart(64, "0"), "hex"));
    const pre = trace(state, createPrestateTracer());
    expect(pre.pre.get(bytesToHex(C))?.storage).toEqual(
      new Map([
        [slot(1), word(5n)],
        [slot(2), word(8n)],
      ]),
    );
    const diff: PrestateResult = trace(
      stateOf([
        [C, { code: asm("PUSH1 0x07 PUSH1 0x01 SSTORE PUSH1 0x02 SLOAD POP STOP"), storage: { "1": 5n, "2": 8n } }],
      ]),
      createPrestateTracer({ diffMode: true }),
    );
    expect(diff.pre.get(bytesToHex(C))?.storage).toEqual(new Map([[slot(1), word(5n)]]));
    expect(diff.post.get(bytesToHex(C))?.storage).toEqual(new Map([[slot(1), word(7n)]]));
    // The coinbase had nothing before: absent from pre, its tip in post.
    expect(diff.pre.has(bytesToHex(COINBASE))).toBe(false);
    expect((diff.post.get(bytesToHex(COINBASE))?.balance ?? 0n) > 0n).toBe(true);
    // The sender: nonce and balance changed.
    expect(diff.post.get(bytesToHex(SENDER))?.nonce).toBe(1n);
  });

  test("behavior: a contract created and self-destructed in the tx stays out of both sides", () => {
    // Initcode: SELFDESTRUCT to E at once.
    const initcode = asm(`PUSH20 0x${hex(E)} SELFDESTRUCT`);
    const state = stateOf([]);
    const r = trace(state, createPrestateTracer({ diffMode: true }), tx({ to: undefined, data: initcode }));
    const created = bytesToHex(createAddress(SENDER, 0n));
    expect(r.pre.has(created)).toBe(false);
    expect(r.post.has(created)).toBe(false);
  });

  test("error: diff mode without afterTx has no result", () => {
    const tracer = createPrestateTracer({ diffMode: true });
    const state = stateOf([[C, { code: asm("STOP") }]]);
    tracer.hooks({ from: SENDER, to: C, coinbase: COINBASE, gasLimit: 50_000n, state });
    expect(() => tracer.result({ gasUsed: 0n, failed: false, returnData: new Uint8Array(), vmError: "" })).toThrow();
  });
});

describe("struct logger", () => {
  test("behavior: enableMemory and enableReturnData; empty memory and return data are left out", () => {
    const state = stateOf([
      [C, { code: asm(`${call("STATICCALL", address(4), { inSize: 0 })} POP PUSH1 0x01 PUSH0 MSTORE STOP`) }],
    ]);
    const r = trace(state, createStructLogger({ enableMemory: true, enableReturnData: true }));
    const mstore = r.structLogs.find((l) => l.op === "MSTORE");
    expect(mstore?.memory).toBeUndefined();
    expect(r.structLogs.at(-1)?.memory).toEqual([new Uint8Array(Buffer.from("01".padStart(64, "0"), "hex"))]);
    expect(r.structLogs.every((l) => l.returnData === undefined)).toBe(true);
    const limited = trace(stateOf([[C, { code: asm("PUSH0 PUSH0 POP POP STOP") }]]), createStructLogger({ limit: 2 }));
    expect(limited.structLogs.map((l) => l.op)).toEqual(["PUSH0", "PUSH0"]);
    expect(limited.structLogs[1]?.gasCost).toBe(2n);
  });
});

describe("vmTracer", () => {
  test("default: each frame's code and opcodes, pushes, memory writes, stores and the frame a call opened", () => {
    const state = stateOf([
      [C, { code: asm(`PUSH1 0x2a PUSH0 MSTORE ${call("STATICCALL", E)} POP PUSH1 0x07 PUSH1 0x01 SSTORE STOP`) }],
      [E, { code: asm("PUSH0 PUSH0 REVERT") }],
    ]);
    const root = trace(state, createVmTracer()) as VmTrace;
    expect(hex(root.code)).toBe(
      hex(asm(`PUSH1 0x2a PUSH0 MSTORE ${call("STATICCALL", E)} POP PUSH1 0x07 PUSH1 0x01 SSTORE STOP`)),
    );
    const names = root.ops.map((o) => o.op);
    expect(names.slice(0, 3)).toEqual(["PUSH1", "PUSH0", "MSTORE"]);
    expect(names.slice(-4)).toEqual(["PUSH1", "PUSH1", "SSTORE", "STOP"]);
    expect(root.ops[0]).toMatchObject({ pc: 0, cost: 3n, ex: { push: [0x2an] } });
    const mstore = root.ops[2];
    expect(mstore?.ex?.mem?.off).toBe(0);
    expect(mstore?.ex?.mem?.data).toEqual(new Uint8Array(Buffer.from("2a".padStart(64, "0"), "hex")));
    const staticcall = root.ops.find((o) => o.op === "STATICCALL");
    // The call failed (E reverted): it pushed 0; its frame hangs under it and ends in REVERT.
    expect(staticcall?.ex?.push).toEqual([0n]);
    expect(staticcall?.sub?.ops.map((o) => o.op)).toEqual(["PUSH0", "PUSH0", "REVERT"]);
    expect(hex(staticcall?.sub?.code ?? new Uint8Array())).toBe(hex(asm("PUSH0 PUSH0 REVERT")));
    expect(root.ops.find((o) => o.op === "SSTORE")?.ex?.store).toEqual({ key: 1n, val: 7n });
    // Gas left only goes down, and each op's is what the next one starts with.
    const used = root.ops.map((o) => o.ex?.used ?? 0n);
    for (let i = 1; i < used.length; i++) expect(used[i]).toBeLessThanOrEqual(used[i - 1] as bigint);
  });

  test("error: an opcode that fails before it runs has no ex", () => {
    // PUSH0 ADD: a stack underflow.
    const root = trace(stateOf([[C, { code: asm("PUSH0 ADD") }]]), createVmTracer()) as VmTrace;
    expect(root.ops.map((o) => [o.op, o.ex === undefined])).toEqual([
      ["PUSH0", false],
      ["ADD", true],
    ]);
  });
});
