import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SpawnedNode, spawnNode } from "./testNode.js";

/**
 * A real Hardhat 2 project (test/hardhat) runs its mocha suite against `cometh dev`, as a Hardhat user
 * would against Anvil: hardhat-network-helpers' loadFixture, snapshots, mine, time, impersonation and
 * the set* cheats on the repo's ERC-20, through @nomicfoundation/hardhat-ethers.
 *
 * The project has its own package.json (Hardhat is not a project dependency); `.ci/run` installs it
 * (`npm run hardhat:install`). Without it this suite is skipped.
 */

const PROJECT = fileURLToPath(new URL("../hardhat", import.meta.url));
const HARDHAT = join(PROJECT, "node_modules", ".bin", "hardhat");
const HAS_HARDHAT = existsSync(HARDHAT);
/** The suite's `it(` count: mocha must report at least this many passing. */
const SUITE_TESTS = HAS_HARDHAT
  ? (readFileSync(join(PROJECT, "test", "networkHelpers.js"), "utf8").match(/^\s*it\(/gm)?.length ?? 0)
  : 0;
const START_TIMEOUT_MS = 60_000;
const HARDHAT_TIMEOUT_MS = 120_000;

let dev: SpawnedNode | undefined;
let rpcUrl: string;

/** Waits for `cometh dev`'s `Listening on HOST:PORT` line (its Ethereum JSON-RPC) and returns the URL. */
async function waitForListening(node: SpawnedNode, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void node.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    const m = /^Listening on (\S+:\d+)$/m.exec(node.output());
    if (m?.[1] !== undefined) return `http://${m[1]}`;
    if (exitCode !== undefined) throw new Error(`cometh dev exited with ${exitCode}:\n${node.output()}`);
    if (Date.now() > deadline) throw new Error(`cometh dev not listening after ${timeoutMs} ms:\n${node.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `hardhat <args>` with the project's own Hardhat (not a global one); never rejects. */
function runHardhat(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [HARDHAT, ...args],
      {
        cwd: PROJECT,
        timeout: HARDHAT_TIMEOUT_MS - 5_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", NO_COLOR: "1", FORCE_COLOR: "0" },
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : null;
        resolve({ code, output: `${stdout}${stderr}${err !== null && code === null ? `\n${err.message}` : ""}` });
      },
    );
  });
}

describe.skipIf(!HAS_HARDHAT)("Hardhat 2 with hardhat-network-helpers against cometh dev", () => {
  beforeAll(async () => {
    dev = spawnNode(["dev", "--port", "0", "--rpc.laddr", "tcp://127.0.0.1:0"]);
    // `ready` waits for `cometh start`'s RPC line, which `cometh dev` does not print: only its exit matters here.
    dev.ready.catch(() => undefined);
    rpcUrl = await waitForListening(dev, START_TIMEOUT_MS - 5_000);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    if (dev === undefined || dev.child.exitCode !== null || dev.child.signalCode !== null) return;
    dev.child.kill("SIGTERM");
    const stopped = await Promise.race([
      dev.exited.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 15_000)),
    ]);
    if (!stopped) {
      dev.child.kill("SIGKILL");
      await dev.exited;
    }
  }, 30_000);

  test(
    "default: `hardhat test --network cometh` passes every test",
    async () => {
      expect(SUITE_TESTS).toBeGreaterThanOrEqual(10);
      const { code, output } = await runHardhat(["test", "--network", "cometh", "--no-compile"], {
        COMETH_RPC_URL: rpcUrl,
      });
      const passing = Number(/^\s*(\d+) passing\b/m.exec(output)?.[1] ?? 0);
      const failing = Number(/^\s*(\d+) failing\b/m.exec(output)?.[1] ?? 0);
      if (code !== 0 || passing < SUITE_TESTS || failing > 0) {
        console.log(`hardhat test exited with ${code}:\n${output}\n--- cometh dev output ---\n${dev?.output()}`);
      }
      expect({ code, failing }).toEqual({ code: 0, failing: 0 });
      expect(passing).toBeGreaterThanOrEqual(SUITE_TESTS);
    },
    HARDHAT_TIMEOUT_MS,
  );
});
