import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/** What jumpAnalysisCache.ts and fastStepLoop.ts patch: @ethereumjs/evm's Interpreter class (not exported by the package). */
export interface InterpreterModule {
  Interpreter?: { prototype: unknown };
}

/**
 * Loads @ethereumjs/evm's interpreter module by file URL: the same module instance the EVM imports
 * (the package's ESM build), which its `exports` map does not name. Undefined when the layout differs
 * (another version). The bundle (bin/build.js) replaces this module with a static import of the same
 * file, so the patches reach the bundled copy of the EVM, and the version below with a constant.
 */
export async function loadInterpreterModule(): Promise<InterpreterModule | undefined> {
  const esmFile = evmPackageFile("dist/esm/interpreter.js");
  if (esmFile === undefined) return undefined;
  return (await import(pathToFileURL(esmFile).href)) as InterpreterModule;
}

/** The installed @ethereumjs/evm's version (from its package.json), or undefined if it cannot be read. */
export function evmPackageVersion(): string | undefined {
  try {
    const pkgFile = evmPackageFile("package.json");
    if (pkgFile === undefined) return undefined;
    const version = (JSON.parse(readFileSync(pkgFile, "utf8")) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** A file of the @ethereumjs/evm package, found from its CommonJS entry (dist/cjs/index.js). */
function evmPackageFile(relative: string): string | undefined {
  const cjsIndex = createRequire(import.meta.url).resolve("@ethereumjs/evm");
  const file = cjsIndex.replace(/[\\/]dist[\\/]cjs[\\/]index\.js$/, `/${relative}`);
  return file === cjsIndex ? undefined : file;
}
