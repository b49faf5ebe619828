#!/usr/bin/env node
// `npm install`'s prepare step (and `npm run build`): bundles src/ into dist/cli/ with esbuild for
// bin/cometh.js. One bundle instead of ~230 modules of ours plus the pure-JS libraries (ethereumjs,
// protobufjs, cosmjs-types, noble, commander, ws, smol-toml; ~450 files before): Node's module loader
// resolves, reads and links each file separately, which was most of the start-up time, and the bundle
// leaves out the modules nothing uses. Kept outside: packages with native addons (lmdb, secp256k1,
// keccak), pino (transports load files by path), and what loads only on demand (pg, prom-client).
// Dynamic imports become separate chunks, so they stay lazy.
// Types are checked by `npm run check`, not here. Never fails the install: without a build the
// launcher runs the sources through tsx instead.
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

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
  await esbuild.build({
    absWorkingDir: root,
    // The read workers' thread (src/app/evm/readPool.ts starts dist/cli/readWorker.js beside it);
    // splitting shares the modules both entries use.
    entryPoints: { main: "src/cli/main.ts", readWorker: "src/app/evm/readWorker.ts" },
    outdir: `${staging}/cli`,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: EXTERNAL,
    // CommonJS libraries inside an ES module bundle call require() (for Node built-ins and the
    // external packages); give them one relative to the bundle.
    banner: {
      js: 'import { createRequire as __cometh_createRequire } from "node:module"; const require = __cometh_createRequire(import.meta.url);',
    },
    sourcemap: true,
    legalComments: "none",
    logLevel: "warning",
  });
  // The dashboard page's script and styles (src/dashboard/client/ with uPlot), read by
  // src/dashboard/assets.ts from dist/dashboard/ (the same options as its build from the sources).
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { dashboard: "src/dashboard/client/main.ts" },
    outdir: `${staging}/dashboard`,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  rmSync(dist, { recursive: true, force: true });
  renameSync(staging, dist);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  // A stale or partial build must not be picked up by the launcher.
  if (existsSync(stamp)) rmSync(stamp);
  console.warn(
    `cometh: the build failed (${err instanceof Error ? err.message : err}); \`npm start\` runs the sources through tsx`,
  );
}
