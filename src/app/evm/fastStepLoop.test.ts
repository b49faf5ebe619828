import { Common, Hardfork, Mainnet } from "@ethereumjs/common";
import { createEVM } from "@ethereumjs/evm";
import { Address, hexToBytes } from "@ethereumjs/util";
import { afterEach, describe, expect, test, vi } from "vitest";
import { installFastStepLoop } from "./fastStepLoop.js";
import { loadInterpreterModule } from "./interpreterModule.js";

const A = new Address(hexToBytes("0x00000000000000000000000000000000000000a1")); // returns 5
const R = new Address(hexToBytes("0x00000000000000000000000000000000000000a2")); // reverts with 0xaa
const TARGET = new Address(hexToBytes("0x00000000000000000000000000000000000000b0"));
const CALLER = new Address(hexToBytes("0x00000000000000000000000000000000000000c0"));

/** `CALL(gas, to, 0, 0, 0, 0, 32)` then return the 32 output bytes. */
const callAndReturn = (to: Address) => `6020600060006000600073${to.toString().slice(2)}5af160206000f3`;

/** Hand-assembled programs covering each way a frame ends and each kind of step (static, dynamic and async gas). */
const PROGRAMS: Record<string, string> = {
  "arithmetic and RETURN": "600260030160005260206000f3",
  "REVERT with data": "60aa60005260206000fd",
  "INVALID (0xfe)": "fe",
  "out of gas in a loop": "5b600056",
  "jump to a non-JUMPDEST": "600356",
  "STOP mid-code": "6001006002",
  "SSTORE then SLOAD": "600760015560015460005260206000f3",
  LOG1: "6011600052602260206000a100",
  KECCAK256: "602060002060005260206000f3",
  "stack underflow": "01",
  CREATE: "600060006000f060005260206000f3",
  "nested CALL that returns": callAndReturn(A),
  "nested CALL that reverts": callAndReturn(R),
  "code past the end (PUSH2 with one byte)": "6101",
};

async function run(code: string, gasLimit: bigint, traced: boolean, hardfork: string = Hardfork.Prague) {
  const common = new Common({ chain: Mainnet, hardfork });
  const evm = await createEVM({ common });
  await evm.stateManager.putCode(A, hexToBytes("0x600560005260206000f3"));
  await evm.stateManager.putCode(R, hexToBytes("0x60aa60005260206000fd"));
  await evm.stateManager.putCode(TARGET, hexToBytes(`0x${code}`));
  const steps: string[] = [];
  if (traced) evm.events.on("step", (s) => void steps.push(s.opcode.name));
  const r = await evm.runCall({ to: TARGET, caller: CALLER, gasLimit, data: new Uint8Array() });
  const slot = new Uint8Array(32);
  slot[31] = 1;
  const stored = await evm.stateManager.getStorage(TARGET, slot);
  return {
    result: {
      error: r.execResult.exceptionError?.error,
      returnValue: Buffer.from(r.execResult.returnValue).toString("hex"),
      gasUsed: r.execResult.executionGasUsed,
      gasRefund: r.execResult.gasRefund,
      logs: (r.execResult.logs ?? []).map((l) =>
        l.map((x) => (x instanceof Uint8Array ? Buffer.from(x).toString("hex") : x)),
      ),
      createdAddress: r.createdAddress?.toString(),
      stored: Buffer.from(stored).toString("hex"),
    },
    steps,
  };
}

afterEach(() => vi.restoreAllMocks());

describe("fast step loop", () => {
  test("behavior: installed on the EVM's Interpreter; the package's runStep is bypassed when nothing listens", async () => {
    expect(await installFastStepLoop()).toBe(true);
    const proto = (await loadInterpreterModule())?.Interpreter?.prototype as { runStep(): unknown };
    const runStep = vi.spyOn(proto, "runStep");
    await run(PROGRAMS["SSTORE then SLOAD"] as string, 100_000n, false);
    expect(runStep).not.toHaveBeenCalled();
    // a `step` listener (tracers) gets the package's own loop, which emits the events
    const traced = await run(PROGRAMS["SSTORE then SLOAD"] as string, 100_000n, true);
    expect(runStep).toHaveBeenCalled();
    expect(traced.steps.slice(0, 3)).toEqual(["PUSH1", "PUSH1", "SSTORE"]);
    // Amsterdam activates EIP-7928 (per-step deferred out-of-gas): the package's loop runs it
    runStep.mockClear();
    await run(PROGRAMS["SSTORE then SLOAD"] as string, 100_000n, false, Hardfork.Amsterdam);
    expect(runStep).toHaveBeenCalled();
  });

  test.each(Object.keys(PROGRAMS))("behavior: same outcome as the package's loop: %s", async (name) => {
    await installFastStepLoop();
    const code = PROGRAMS[name] as string;
    for (const gas of [100_000n, 30_000n, 2_000n]) {
      const fast = await run(code, gas, false);
      const reference = await run(code, gas, true);
      expect(fast.result).toEqual(reference.result);
    }
  });

  test("behavior: each kind of ending is covered (the cases above are not all alike)", async () => {
    await installFastStepLoop();
    const errors = new Set<string | undefined>();
    for (const code of Object.values(PROGRAMS))
      errors.add((await run(code, 100_000n, false)).result.error?.replace(/ at .*/, ""));
    expect([...errors].sort()).toEqual(
      [undefined, "revert", "invalid opcode", "out of gas", "invalid JUMP", "stack underflow"].sort(),
    );
  });
});
