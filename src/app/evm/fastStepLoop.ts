import { EVMError } from "@ethereumjs/evm";
import { evmPackageVersion, loadInterpreterModule } from "./interpreterModule.js";

/**
 * ethereumjs runs every opcode through `await this.runStep(op)`, an async method: each of the ~300
 * opcodes of an ERC-20 transfer allocates a promise and an argument array and waits a microtask
 * turn, even when neither its gas function nor its handler is asynchronous. This loop runs the same
 * steps (same gas charging order, same errors, same jump analysis) and awaits only what returns a
 * promise (the dynamic-gas functions, which the package declares async, and the handlers it marks
 * `isAsync`).
 *
 * It takes over only the plain case: no profiler, no `step` listeners (tracers) and no DEBUG
 * logging, legacy (non-EOF) code, and none of the EIPs whose extra per-step work the original loop
 * does (6800/7864 code-chunk witnesses, 7928 deferred call out-of-gas). Everything else runs the
 * package's own `run`.
 *
 * When the state manager has a `checkDeadline()` (OverlayStateManager: an eth_call's evm-timeout),
 * the loop calls it every DEADLINE_STEPS steps, as geth's interpreter checks its abort flag, so a
 * call that loops without touching state stops at the timeout instead of running to its gas cap.
 *
 * The loop mirrors @ethereumjs/evm 10.1's `Interpreter.run`/`runStep`: with
 * another version installed nothing is patched (a test fails, so whoever upgrades compares the
 * loops again).
 */

/** The @ethereumjs/evm versions whose interpreter loop this one was checked against. */
const CHECKED_VERSIONS = /^10\.1\.\d+$/;

interface OpEntry {
  opcodeInfo: { code: number; feeBigInt: bigint; dynamicGas: boolean; isInvalid: boolean; isAsync: boolean };
  gasHandler: (rs: RunState, gas: bigint, common: unknown) => Promise<bigint> | bigint;
  opHandler: (rs: RunState, common: unknown) => unknown;
}

interface RunState {
  code: Uint8Array;
  stateManager: { checkDeadline?: () => void };
  programCounter: number;
  opCode: number;
  validJumps: unknown;
  cachedPushes: unknown;
  shouldDoJumpAnalysis: boolean;
  gasLeft: bigint;
  env: { accessWitness?: { commit(): void; revert(): void } };
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean;
}

interface CommonLike {
  isActivatedEIP(eip: number): boolean;
}

interface InterpreterLike {
  _runState: RunState;
  _evm: { DEBUG: boolean; events: { listenerCount(name: string): number }; _opcodeMap: OpEntry[] };
  common: CommonLike;
  profilerOpts?: { enabled?: boolean };
  _getValidJumpDestinations(code: Uint8Array): { jumps: unknown; pushes: unknown; opcodesCached: OpEntry[] };
  useGas(amount: bigint, context: unknown): void;
  run(code: Uint8Array, opts?: { pc?: number }): Promise<{ runState: RunState; exceptionError?: unknown }>;
}

/** EVMErrorTypeString in @ethereumjs/evm (not exported). */
const EVM_ERROR_TYPE = "EVMError";

/** Steps between deadline checks: a few hundred microseconds of execution. */
const DEADLINE_STEPS = 1024;

let installed: Promise<boolean> | undefined;

export function installFastStepLoop(): Promise<boolean> {
  installed ??= install();
  return installed;
}

/**
 * Whether the Common's active EIPs let the fast loop run. Asked per call frame, not kept: a Common's
 * hardfork (and so its EIPs) can change under the same object.
 */
function isPlain(common: CommonLike): boolean {
  return !(
    common.isActivatedEIP(3540) ||
    common.isActivatedEIP(6800) ||
    common.isActivatedEIP(7864) ||
    common.isActivatedEIP(7928)
  );
}

async function install(): Promise<boolean> {
  try {
    if (!CHECKED_VERSIONS.test(evmPackageVersion() ?? "")) return false;
    const mod = (await loadInterpreterModule()) as { Interpreter?: { prototype: InterpreterLike } } | undefined;
    const proto = mod?.Interpreter?.prototype;
    if (proto === undefined || typeof proto.run !== "function" || typeof proto.useGas !== "function") return false;
    const original = proto.run;
    proto.run = async function (this: InterpreterLike, code: Uint8Array, opts: { pc?: number } = {}) {
      const evm = this._evm;
      if (
        this.profilerOpts?.enabled === true ||
        evm.DEBUG ||
        evm.events.listenerCount("step") > 0 ||
        !isPlain(this.common)
      ) {
        return original.call(this, code, opts);
      }
      const rs = this._runState;
      rs.code = code;
      rs.programCounter = opts.pc ?? rs.programCounter;
      const start = rs.programCounter;
      if (start !== 0 && (start < 0 || start >= code.length)) {
        throw new Error("Internal error: program counter not in range");
      }
      const common = this.common;
      const opcodeMap = evm._opcodeMap;
      let err: unknown;
      let cached: OpEntry[] | undefined;
      const deadline = typeof rs.stateManager.checkDeadline === "function" ? rs.stateManager : undefined;
      let steps = 0;
      while (rs.programCounter < code.length) {
        if (deadline !== undefined && ++steps === DEADLINE_STEPS) {
          steps = 0;
          deadline.checkDeadline?.();
        }
        const pc = rs.programCounter;
        let entry: OpEntry;
        let opCode: number;
        if (cached === undefined) {
          opCode = code[pc] as number;
          if (opCode === 0x56 || opCode === 0x57 || opCode === 0x5e) {
            const { jumps, pushes, opcodesCached } = this._getValidJumpDestinations(code);
            rs.validJumps = jumps;
            rs.cachedPushes = pushes;
            rs.shouldDoJumpAnalysis = false;
            cached = opcodesCached;
          }
          entry = opcodeMap[opCode] as OpEntry;
        } else {
          entry = cached[pc] as OpEntry;
          opCode = entry.opcodeInfo.code;
        }
        rs.opCode = opCode;
        try {
          const info = entry.opcodeInfo;
          let gas = info.feeBigInt;
          if (info.dynamicGas) {
            const g = entry.gasHandler(rs, gas, common);
            gas = typeof g === "bigint" ? g : await g;
          }
          if (info.isInvalid) throw new EVMError(EVMError.errorMessages.INVALID_OPCODE);
          this.useGas(gas, info);
          rs.programCounter++;
          if (info.isAsync) await entry.opHandler(rs, common);
          else entry.opHandler(rs, common);
          rs.env.accessWitness?.commit();
        } catch (e) {
          rs.env.accessWitness?.revert();
          const error = e as { errorType?: string; error?: string };
          if (typeof e !== "object" || e === null || error.errorType !== EVM_ERROR_TYPE) throw e;
          if (error.error !== EVMError.errorMessages.STOP) err = e;
          break;
        }
      }
      if (err === undefined && rs.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && rs.gasLeft > 0n) {
        // As the package's loop: the frame halts out of gas so the CREATE nonce bump is reverted (EIP-8037).
        rs.gasLeft = 0n;
        err = new EVMError(EVMError.errorMessages.OUT_OF_GAS);
      }
      return { runState: rs, exceptionError: err };
    };
    return true;
  } catch {
    return false;
  }
}
