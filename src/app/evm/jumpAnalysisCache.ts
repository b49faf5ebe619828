import { loadInterpreterModule } from "./interpreterModule.js";

/**
 * ethereumjs analyses a contract's code (JUMPDEST map, PUSH values as bigints, per-byte opcode
 * lookups) every time a call frame starts running it: for an ERC-20 `balanceOf` that is about a
 * tenth of an eth_call. The analysis depends only on the code bytes and the opcode table, and the
 * state layer hands out one Uint8Array per code hash, so it is kept per code object (a WeakMap:
 * code that is no longer cached is forgotten with it).
 *
 * The Interpreter class is not exported by @ethereumjs/evm; interpreterModule.ts loads the module
 * instance the EVM uses. If the file or method is missing (another version), nothing is patched and
 * execution is unchanged.
 */

interface InterpreterLike {
  _evm: { _opcodeMap: unknown };
  _getValidJumpDestinations(code: Uint8Array): unknown;
}

let installed: Promise<boolean> | undefined;

export function installJumpAnalysisCache(): Promise<boolean> {
  installed ??= install();
  return installed;
}

async function install(): Promise<boolean> {
  try {
    const mod = await loadInterpreterModule();
    const proto = mod?.Interpreter?.prototype as InterpreterLike | undefined;
    if (proto === undefined || typeof proto._getValidJumpDestinations !== "function") return false;
    const original = proto._getValidJumpDestinations;
    const cache = new WeakMap<Uint8Array, { table: unknown; analysis: unknown }>();
    proto._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array) {
      const table = this._evm._opcodeMap;
      const hit = cache.get(code);
      if (hit !== undefined && hit.table === table) return hit.analysis;
      const analysis = original.call(this, code);
      cache.set(code, { table, analysis });
      return analysis;
    };
    return true;
  } catch {
    return false;
  }
}
