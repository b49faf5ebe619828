// npm run e2e -- <manifest.toml> [--keep] [--dir DIR]
// Runs a network described by an e2e manifest (docs/e2e.md) on 127.0.0.1, perturbs it, checks the
// invariants and prints "N passed, N failed"; exit code 1 when a check failed, 2 on a bad manifest.
// Only the node processes it started are ever signalled, on errors and Ctrl-C too.
import { parseArgs } from "node:util";
import { loadManifest, ManifestError } from "./manifest.js";
import { killStartedNodes } from "./nodeProcess.js";
import { formatResult, runManifest } from "./run.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    keep: { type: "boolean", default: false },
    dir: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help || positionals.length !== 1) {
  console.error("usage: npm run e2e -- <manifest.toml> [--keep] [--dir DIR]   (see docs/e2e.md)");
  process.exit(values.help ? 0 : 2);
}

process.on("exit", killStartedNodes);

let manifest: ReturnType<typeof loadManifest>;
try {
  manifest = loadManifest(positionals[0] as string);
} catch (err) {
  if (err instanceof ManifestError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}

const interrupt = new AbortController();
let interrupts = 0;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    interrupts++;
    if (interrupts > 1) {
      killStartedNodes();
      process.exit(130);
    }
    console.error(`\n${sig}: stopping the network (again to stop at once)`);
    interrupt.abort(new Error(sig));
  });
}
// A backstop past the manifest's deadline: the run's own steps are bounded, this bounds the rest.
const backstop = setTimeout(() => {
  console.error("e2e: the run overran its deadline by 3 minutes; killing its nodes");
  killStartedNodes();
  process.exit(2);
}, manifest.deadlineMs + 180_000);
backstop.unref();

const result = await runManifest(manifest, {
  keep: values.keep,
  ...(values.dir === undefined ? {} : { baseDir: values.dir }),
  signal: interrupt.signal,
});
for (const line of formatResult(result)) console.log(line);
process.exit(result.failed > 0 || interrupt.signal.aborted ? 1 : 0);
