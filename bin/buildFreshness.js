// Whether dist/ (bin/build.mjs's bundle) is at least as new as every source file it is built from:
// bin/cometh.js runs the bundle only then, and `npm test` (test/buildOnce.ts) rebuilds it otherwise.
// CommonJS, as all of bin/ except build.mjs (bin/package.json): Node starts a CommonJS entry ~20 ms
// sooner than an ES module one, whose loader it must set up first (bin/cometh.js).
const { existsSync, readdirSync, statSync } = require("node:fs");
const { fileURLToPath } = require("node:url");

/** The newest modification time of the non-test sources (and the dashboard's styles and build options) under `dir`. */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    // The dashboard's styles and esbuild options (client/esbuild.json) make dist/dashboard/ too.
    else if (
      (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) ||
      entry.name.endsWith(".css") ||
      entry.name === "esbuild.json"
    ) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/** `root`: the package's root directory, as a URL ending in a slash. */
function buildIsFresh(root) {
  const built = new URL("dist/cli/main.cjs", root);
  const stamp = new URL("dist/.built", root);
  if (!existsSync(built) || !existsSync(stamp)) return false;
  return statSync(stamp).mtimeMs >= newestSource(fileURLToPath(new URL("src", root)));
}

module.exports = { buildIsFresh };
