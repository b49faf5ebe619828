import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/** What jumpAnalysisCache.ts patches: @ethereumjs/evm's Interpreter class (not exported by the package). */
export interface InterpreterModule {
  Interpreter?: { prototype: unknown };
}

/**
 * Loads @ethereumjs/evm's interpreter module by file URL: the same module instance the EVM imports
 * (the package's ESM build), which its `exports` map does not name. Undefined when the layout differs
 * (another version). The bundle (bin/build.js) replaces this module with a static import of the same
 * file, so the patch reaches the bundled copy of the EVM.
 */
export async function loadInterpreterModule(): Promise<InterpreterModule | undefined> {
  const cjsIndex = createRequire(import.meta.url).resolve("@ethereumjs/evm");
  const esmFile = cjsIndex.replace(/[\\/]dist[\\/]cjs[\\/]index\.js$/, "/dist/esm/interpreter.js");
  if (esmFile === cjsIndex) return undefined;
  return (await import(pathToFileURL(esmFile).href)) as InterpreterModule;
}
