import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The dashboard page's script and styles. `npm run build` (bin/build.mjs) bundles src/dashboard/client/
 * (with uPlot) into dist/dashboard/; a node running from that build reads the files there. Running
 * from the sources (tsx, tests, a stale build), there is no such file beside this module: the
 * client is bundled here with esbuild (a dependency already) the first time the page is asked for.
 */

export interface DashboardAssets {
  readonly js: string;
  readonly css: string;
}

/** Where bin/build.mjs writes the bundle, relative to the bundled node code (dist/cli/ → dist/dashboard/). */
const BUILT_DIR = new URL("../dashboard/", import.meta.url);
/** The client's entry point in the sources (beside this file). */
const CLIENT_ENTRY = new URL("./client/main.ts", import.meta.url);

/** The prebuilt bundle, when this module runs from dist/. */
function readBuilt(): DashboardAssets | undefined {
  const js = new URL("dashboard.js", BUILT_DIR);
  const css = new URL("dashboard.css", BUILT_DIR);
  if (!existsSync(js) || !existsSync(css)) return undefined;
  return { js: readFileSync(js, "utf8"), css: readFileSync(css, "utf8") };
}

async function buildFromSources(): Promise<DashboardAssets> {
  const entry = fileURLToPath(CLIENT_ENTRY);
  if (!existsSync(entry)) throw new Error(`the dashboard is not built and its sources are missing (${entry})`);
  // Loaded only here: a node running from the build never needs it.
  const esbuild = await import("esbuild");
  // The options bin/build.mjs builds dist/dashboard/ with: one file both read.
  const options = JSON.parse(readFileSync(new URL("esbuild.json", CLIENT_ENTRY), "utf8")) as Record<string, unknown>;
  const result = await esbuild.build({
    ...options,
    logLevel: "silent",
    entryPoints: { dashboard: entry },
    outdir: "/dashboard-out",
    write: false,
  });
  let js = "";
  let css = "";
  for (const f of result.outputFiles) {
    if (f.path.endsWith(".js")) js = f.text;
    else if (f.path.endsWith(".css")) css = f.text;
  }
  return { js, css };
}

let assets: Promise<DashboardAssets> | undefined;

/** The page's assets, read or built once per process. */
export function dashboardAssets(): Promise<DashboardAssets> {
  if (assets === undefined) {
    const built = readBuilt();
    assets = built === undefined ? buildFromSources() : Promise.resolve(built);
    // A failed build is retried on the next request.
    assets.catch(() => {
      assets = undefined;
    });
  }
  return assets;
}
