#!/usr/bin/env node
// `npm install`'s prepare step (and `npm run build`): bundles src/ into dist/cli/ with esbuild for
// bin/cometh.js. One bundle instead of ~230 modules of ours plus the pure-JS libraries (ethereumjs,
// protobufjs, cosmjs-types, noble, commander, ws, smol-toml; ~450 files before): Node's module loader
// resolves, reads and links each file separately, which was most of the start-up time, and the bundle
// leaves out the modules nothing uses. Kept outside: packages with native addons (lmdb, secp256k1,
// keccak, sodium-native), pino (transports load files by path), and what loads only on demand (pg, prom-client).
// CommonJS, so that bin/loadBundle.js can run it with a V8 code cache (docs/dev-chain.md "Start-up");
// the modules behind a dynamic import() still run only when imported (esbuild's lazy module inits).
// The read workers' thread and the read processes get ES module bundles of their own
// (dist/cli/readWorker.mjs, dist/cli/readProcess.mjs).
// Then a priming run (bin/primeCodeCache.mjs: a dev chain started, driven and stopped) writes the code cache.
// Types are checked by `npm run check`, not here. Never fails the install: without a build the
// launcher runs the sources through tsx instead.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { primeCodeCache } from "./primeCodeCache.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = `${root}/dist`;
// Built aside, then swapped in: a node starting meanwhile sees the old build or the new one.
const staging = `${root}/.dist-${process.pid}`;
// Written last, only by a complete build; bin/cometh.js runs dist/ only when it is newer than src/.
const stamp = `${dist}/.built`;

const EXTERNAL = [
  "lmdb",
  "secp256k1",
  "keccak",
  "sodium-native",
  "pino",
  "pg",
  "prom-client",
  // Only for building the dashboard from the sources, which a build never does (it ships dist/dashboard/).
  "esbuild",
  // ws's optional native helpers
  "bufferutil",
  "utf-8-validate",
];

const require = createRequire(import.meta.url);
let esbuild;
try {
  esbuild = require("esbuild");
} catch {
  console.warn("cometh: esbuild is not installed; `npm start` runs the sources through tsx");
  process.exit(0);
}

try {
  // What the CLI bundle and the read workers' module share: Node 20, the native packages outside.
  const nodeBundle = {
    absWorkingDir: root,
    outdir: `${staging}/cli`,
    bundle: true,
    platform: "node",
    target: "node20",
    external: EXTERNAL,
    sourcemap: true,
    legalComments: "none",
    logLevel: "warning",
  };
  await esbuild.build({
    ...nodeBundle,
    // program.ts exports runCli, which bin/cometh.js calls (src/cli/main.ts, the sources' entry, has a
    // top-level await, which CommonJS cannot hold).
    entryPoints: { main: "src/cli/program.ts" },
    outExtension: { ".js": ".cjs" },
    format: "cjs",
    // import() of an external package (pg, prom-client: CommonJS) becomes require() when called: a
    // dynamic import() needs a callback that code run by vm.Script does not have.
    supported: { "dynamic-import": false },
    // import.meta.url (files found beside the bundle, createRequire) is the bundle's own URL.
    define: { "import.meta.url": "__cometh_import_meta_url" },
    banner: {
      js: '"use strict";\nconst __cometh_import_meta_url = require("node:url").pathToFileURL(__filename).href;',
    },
    // No comments or indentation: 2.2 MB instead of 3.3, all ASCII, which bin/loadBundle.js reads as
    // Latin-1 (a copy) rather than decoding UTF-8 (~25 ms). Names stay; the source map maps stack
    // traces back (node --enable-source-maps).
    minifyWhitespace: true,
    // `node dist/cli/main.cjs ...` runs the CLI by itself too.
    footer: {
      js: 'if (require.main === module && typeof module.exports.runCli === "function") module.exports.runCli(process.argv);',
    },
  });
  // The read workers' thread (src/app/evm/readPool.ts starts dist/cli/readWorker.mjs beside the
  // bundle) and the read processes (src/node/evm/readProcesses.ts forks dist/cli/readProcess.mjs): ES
  // modules of their own, as they await at their top level. Both start after the node.
  await esbuild.build({
    ...nodeBundle,
    entryPoints: { readWorker: "src/app/evm/readWorker.ts", readProcess: "src/node/evm/readProcess.ts" },
    outExtension: { ".js": ".mjs" },
    format: "esm",
    // CommonJS libraries inside an ES module bundle call require() (for Node built-ins and the
    // external packages); give them one relative to the bundle.
    banner: {
      js: 'import { createRequire as __cometh_createRequire } from "node:module"; const require = __cometh_createRequire(import.meta.url);',
    },
  });
  // The dashboard page's script and styles (src/dashboard/client/ with uPlot), read by
  // src/dashboard/assets.ts from dist/dashboard/; src/dashboard/client/esbuild.json holds the options
  // it also builds with from the sources.
  await esbuild.build({
    ...JSON.parse(readFileSync(`${root}/src/dashboard/client/esbuild.json`, "utf8")),
    absWorkingDir: root,
    entryPoints: { dashboard: "src/dashboard/client/main.ts" },
    outdir: `${staging}/dashboard`,
    logLevel: "warning",
  });
  rmSync(dist, { recursive: true, force: true });
  renameSync(staging, dist);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  const problem = await primeCodeCache(root).catch((err) => String(err?.message ?? err));
  if (problem !== undefined) console.warn(`cometh: the code cache was not written: ${problem}`);
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  // A stale or partial build must not be picked up by the launcher.
  if (existsSync(stamp)) rmSync(stamp);
  console.warn(
    `cometh: the build failed (${err instanceof Error ? err.message : err}); \`npm start\` runs the sources through tsx`,
  );
}
