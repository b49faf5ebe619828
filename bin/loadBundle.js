// Loads bin/build.mjs's CommonJS bundle (dist/cli/main.cjs) with a V8 code cache beside it, for
// bin/cometh.js. Compiling the ~3 MB bundle, and then compiling again each function the start-up
// runs, was the largest part of `cometh dev`'s time to its first answer (docs/dev-chain.md
// "Start-up"); with the cache V8 reads the bytecode of all of them instead. Node 20 has no
// module.enableCompileCache, and caches only what vm.Script compiles, hence CommonJS and this loader.
//
// The cache is written once a command that serves has started (the functions its start-up ran are
// compiled by then): by bin/build.mjs's priming run (a dev chain started and stopped, with the npm
// scripts' Node flags), and by any serving run that finds none, or one V8 rejects (V8 checks its
// version, the source and its flags, the heap sizes included). One file per Node version and Node
// flags, so runs with other flags do not overwrite each other's. Writing is best-effort: a read-only
// install runs without a cache.
const { isAscii } = require("node:buffer");
const { createHash } = require("node:crypto");
const { readFileSync, renameSync, rmSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { dirname } = require("node:path");
const { Script } = require("node:vm");

/** What the bundle's entry (src/cli/program.ts) exports that the launcher calls. */
/** @typedef {{ runCli(argv: readonly string[]): Promise<void> }} Cli */

/**
 * Runs the bundle `file` and returns its exports, plus `saveCache` to call once the command has
 * started (a no-op when the cache was used).
 * @returns {{ cli: Cli, cacheUsed: boolean, saveCache: () => void }}
 */
function loadBundle(file) {
  const bytes = readFileSync(file);
  // bin/build.mjs's bundle is ASCII: Latin-1 then is the same text, without UTF-8's decoding.
  const source = bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
  const flags = createHash("sha256").update(process.execArgv.join(" ")).digest("hex").slice(0, 12);
  const cacheFile = `${file}.${process.version}-${process.arch}-${flags}.v8cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // CommonJS's function wrapper, as Node's loader puts around a module.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n})`;
  const script = new Script(wrapped, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const cacheUsed = cachedData !== undefined && !script.cachedDataRejected;
  const bundle = { exports: {}, filename: file, id: file, loaded: false };
  script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dirname(file));
  bundle.loaded = true;
  const saveCache = () => {
    if (cacheUsed) return;
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cacheFile);
    } catch {
      try {
        rmSync(tmp, { force: true });
      } catch {}
    }
  };
  return { cli: /** @type {Cli} */ (bundle.exports), cacheUsed, saveCache };
}

module.exports = { loadBundle };
