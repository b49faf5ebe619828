#!/usr/bin/env node
// `npm install`'s prepare step: compiles src/ to dist/ (tsconfig.build.json) for bin/cometh.js.
// Never fails the install: without a build (no TypeScript, a type error) the launcher runs the
// sources through tsx instead, and says nothing.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const stamp = `${root}/dist/.tsbuildinfo`;
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  console.warn("cometh: typescript is not installed; `npm start` runs the sources through tsx");
  process.exit(0);
}
const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
if (r.status !== 0) {
  // A stale or partial build must not be picked up by the launcher.
  if (existsSync(stamp)) rmSync(stamp);
  console.warn("cometh: the build failed; `npm start` runs the sources through tsx");
}
