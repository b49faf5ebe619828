import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { buildIsFresh } from "../bin/buildFreshness.js";

/**
 * `npm test`'s global setup: rebuilds dist/ (bin/build.mjs, a few seconds) when a source is newer
 * than it, so that the nodes the tests start as child processes (test/integration/testNode.ts,
 * through bin/cometh.js) run the bundle of the sources under test rather than the sources through
 * tsx's loader, which costs each child several times the CPU to start. A failed build leaves no
 * stamp, and the children then run the sources, as bin/cometh.js does.
 */
export default function setup(): void {
  const root = new URL("..", import.meta.url);
  if (buildIsFresh(root)) return;
  const started = Date.now();
  spawnSync(process.execPath, [fileURLToPath(new URL("bin/build.mjs", root))], { stdio: "inherit" });
  console.log(`npm test: rebuilt dist/ (sources newer than the build) in ${Date.now() - started} ms`);
}
