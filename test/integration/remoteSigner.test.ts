import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { initHome } from "../../src/config/index.js";
import {
  makeTempHome,
  rpcGet,
  runCli,
  type SpawnedNode,
  spawnNode,
  startNodeProcess,
  type TestNodeProcess,
  waitForHeight,
} from "./testNode.js";
import { freePorts } from "./testnetHarness.js";

/**
 * A validator whose key is held by a `cometh signer` process (priv_validator_laddr,
 * docs/remote-signer.md), over tcp (SecretConnection) and unix: it makes blocks; when the signer
 * is killed it stops signing (no blocks, no crash) and resumes when the signer dials back; and the
 * signer's own guard refuses what the node asks again after its data was wiped.
 */

const FAST = ["--consensus.timeout_commit", "100ms", "--consensus.timeout_propose", "1s", "--proxy_app", "kvstore"];
const CHAIN = "remote-signer-chain";

type Status = { sync_info: { latest_block_height: string } };

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A node home whose validator key has moved to a signer home (the node keeps no key file). */
async function homes(): Promise<{ node: string; signer: string; root: string }> {
  const tmp = await makeTempHome("cometh-rs-");
  cleanups.push(tmp.cleanup);
  const node = join(tmp.home, "node");
  const signer = join(tmp.home, "signer");
  await initHome(node, { chainId: CHAIN, moniker: "remote-signed" });
  mkdirSync(join(signer, "config"), { recursive: true });
  mkdirSync(join(signer, "data"), { recursive: true });
  for (const f of ["config/priv_validator_key.json", "data/priv_validator_state.json", "config/genesis.json"]) {
    copyFileSync(join(node, f), join(signer, f));
  }
  rmSync(join(node, "config/priv_validator_key.json"));
  rmSync(join(node, "data/priv_validator_state.json"));
  return { node, signer, root: tmp.home };
}

function startSigner(home: string, addr: string): SpawnedNode {
  const s = spawnNode(["signer", "--home", home, "--addr", addr]);
  // A signer announces no RPC address: `ready` only ever rejects, when it exits.
  s.ready.catch(() => {});
  cleanups.push(async () => {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill("SIGKILL");
      await s.exited;
    }
  });
  return s;
}

async function startNode(home: string, laddr: string): Promise<TestNodeProcess> {
  const n = await startNodeProcess(home, [...FAST, "--priv_validator_laddr", laddr]);
  cleanups.push(() => n.kill());
  return n;
}

async function height(rpcUrl: string): Promise<number> {
  return Number((await rpcGet<Status>(rpcUrl, "status")).sync_info.latest_block_height);
}

/** Waits until `output()` matches `re` `times` times (a log line the process writes), bounded. */
async function waitForOutput(output: () => string, re: RegExp, times = 1, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const global = new RegExp(re.source, "g");
  while ((output().match(global) ?? []).length < times) {
    if (Date.now() > deadline) throw new Error(`no ${times}× ${re} in ${timeoutMs} ms; output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(["tcp", "unix"] as const)("remote signer over %s", (transport) => {
  test("behavior: blocks through the signer; none while it is gone, no crash; they resume when it is back", async () => {
    const h = await homes();
    const laddr =
      transport === "tcp" ? `tcp://127.0.0.1:${(await freePorts(1))[0]}` : `unix://${join(h.root, "pv.sock")}`;
    // The signer first: it dials until the node listens, as an operator's signer would.
    const signer = startSigner(h.signer, laddr);
    await waitForOutput(signer.output, /dialing/);
    const node = await startNode(h.node, laddr);
    await waitForHeight(node.rpcUrl, 3);
    expect(node.output()).toMatch(/remote signer connected/);
    // The node never wrote a key file of its own: the signer holds the only one.
    expect(existsSync(join(h.node, "config/priv_validator_key.json"))).toBe(false);

    signer.child.kill("SIGKILL");
    await signer.exited;
    await waitForOutput(node.output, /remote signer disconnected/);
    const atLoss = await height(node.rpcUrl);
    // Consensus goes on trying: two failed signatures later, still no new block (one already
    // signed when the signer died may still commit).
    await waitForOutput(node.output, /failed signing (vote|proposal)/, 2);
    expect(await height(node.rpcUrl)).toBeLessThanOrEqual(atLoss + 1);
    expect(node.child.exitCode).toBeNull();
    const stalled = await height(node.rpcUrl);

    const signer2 = startSigner(h.signer, laddr);
    await waitForOutput(signer2.output, /connected to the node/);
    await waitForHeight(node.rpcUrl, stalled + 3).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; node output:\n${node.output().slice(-6000)}`);
    });
    // The state file moved on with the chain.
    const state = JSON.parse(readFileSync(join(h.signer, "data/priv_validator_state.json"), "utf8")) as {
      height: string;
    };
    expect(Number(state.height)).toBeGreaterThanOrEqual(stalled + 2);
    expect(await node.stop()).toBe(0);
  });
});

describe("the signer's guard", () => {
  test("error: a node whose data was wiped asks for old heights again; the signer refuses, nothing is signed twice", async () => {
    const h = await homes();
    const laddr = `unix://${join(h.root, "pv.sock")}`;
    const signer = startSigner(h.signer, laddr);
    const node = await startNode(h.node, laddr);
    await waitForHeight(node.rpcUrl, 3);
    expect(await node.stop()).toBe(0);
    const signedTo = JSON.parse(readFileSync(join(h.signer, "data/priv_validator_state.json"), "utf8")) as {
      height: string;
    };

    // unsafe-reset-all forgets the chain (the node has no key state to reset: the signer keeps it).
    const reset = await runCli(["unsafe-reset-all", "--home", h.node]);
    expect(reset.code).toBe(0);
    const again = await startNode(h.node, laddr);
    await waitForOutput(again.output, /the remote signer refused: height regression/);
    await waitForOutput(signer.output, /(vote|proposal) refused/);
    expect(await height(again.rpcUrl)).toBe(0);
    expect(again.child.exitCode).toBeNull();
    const after = JSON.parse(readFileSync(join(h.signer, "data/priv_validator_state.json"), "utf8")) as {
      height: string;
    };
    expect(after.height).toBe(signedTo.height);
  });

  test("error: cometh signer without an address or a key says what is missing", async () => {
    const h = await homes();
    const noAddr = await runCli(["signer", "--home", h.signer]);
    expect(noAddr.code).toBe(1);
    expect(noAddr.stderr).toMatch(/--addr is required: the node's priv_validator_laddr/);
    const noKey = await runCli(["signer", "--home", h.node, "--addr", "tcp://127.0.0.1:1"]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/priv_validator_key.json: private validator key file does not exist/);
  });
});
