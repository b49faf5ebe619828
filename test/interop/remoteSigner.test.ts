import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { initHome } from "../../src/config/index.js";
import { rpcGet, type SpawnedNode, spawnNode, startNodeProcess } from "../integration/testNode.js";
import { freePorts } from "../integration/testnetHarness.js";
import {
  type GoProcess,
  initCometbftHome,
  missingBinaries,
  rpcCall,
  setTomlKeys,
  spawnBinary,
  startCometbft,
  waitForHeight,
} from "./binaries.js";

/**
 * `cometh signer` (docs/remote-signer.md) against CometBFT's Go code: Tendermint's remote signer
 * test harness (`tm-signer-harness run`: it listens as a node does, checks the signer's key and the
 * signatures on a proposal, a prevote and a precommit), and a Go `cometbft` validator whose
 * priv_validator_laddr our signer dials, which makes blocks with it. And the other way round: a
 * cometh validator signing through CometBFT's own signer code (`cometbft-signer`: privval's FilePV,
 * SignerDialerEndpoint and SignerServer), which it loses and gets back. Over tcp (SecretConnection)
 * and unix.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(prefix: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

async function address(transport: "tcp" | "unix", dir: string): Promise<string> {
  return transport === "tcp" ? `tcp://127.0.0.1:${(await freePorts(1))[0]}` : `unix://${join(dir, "pv.sock")}`;
}

/** `cometh signer` holding the key of `home`, dialing `addr` until stopped (by PID, at the end). */
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

function track(p: GoProcess): GoProcess {
  cleanups.push(() => p.kill());
  return p;
}

const harnessMissing = missingBinaries("tm-signer-harness");
describe.skipIf(harnessMissing !== undefined)(`tm-signer-harness ${harnessMissing ?? ""}`, () => {
  test.each(["tcp", "unix"] as const)("default: cometh signer passes the harness over %s", async (transport) => {
    const dir = await tempDir("cometh-harness-");
    const signerHome = join(dir, "signer");
    await initHome(signerHome, { chainId: "harness-chain" });
    // The harness reads the same key (to compare) from a Tendermint home of its own. Tendermint
    // v0.34 requires block.time_iota_ms in genesis (dropped in v0.38): the copy has it.
    const tmHome = join(dir, "tm");
    await mkdir(join(tmHome, "config"), { recursive: true });
    await mkdir(join(tmHome, "data"), { recursive: true });
    await copyFile(join(signerHome, "config/priv_validator_key.json"), join(tmHome, "config/priv_validator_key.json"));
    await copyFile(join(signerHome, "data/priv_validator_state.json"), join(tmHome, "data/priv_validator_state.json"));
    const genesis = JSON.parse(await readFile(join(signerHome, "config/genesis.json"), "utf8")) as {
      consensus_params: { block: Record<string, string> };
    };
    genesis.consensus_params.block.time_iota_ms = "1000";
    await writeFile(join(tmHome, "config/genesis.json"), JSON.stringify(genesis));

    const addr = await address(transport, dir);
    // The signer first: the harness waits 10 ms per accept try, far less than a start.
    const signer = startSigner(signerHome, addr);
    await waitFor(() => /dialing/.test(signer.output()));
    const harness = track(
      spawnBinary("tm-signer-harness", ["run", "-accept-retries", "6000", "-addr", addr, "-tmhome", tmHome]),
    );
    const code = await harness.exited;
    expect(code, harness.output()).toBe(0);
    expect(harness.output()).toMatch(/SUCCESS! All tests passed/);
    // The harness signed a proposal at 100 and votes at 101: the signer's guard recorded them.
    const state = JSON.parse(await readFile(join(signerHome, "data/priv_validator_state.json"), "utf8")) as {
      height: string;
      step: number;
    };
    expect(state).toMatchObject({ height: "101", step: 3 });
  });
});

const cometbftMissing = missingBinaries("cometbft");
describe.skipIf(cometbftMissing !== undefined)(`a Go cometbft validator ${cometbftMissing ?? ""}`, () => {
  test.each(["tcp", "unix"] as const)("behavior: makes blocks signed by cometh signer over %s", async (transport) => {
    const dir = await tempDir("cometh-gosigned-");
    const home = join(dir, "go");
    await initCometbftHome(home);
    const signerHome = join(dir, "signer");
    await mkdir(join(signerHome, "config"), { recursive: true });
    await mkdir(join(signerHome, "data"), { recursive: true });
    for (const f of ["config/priv_validator_key.json", "data/priv_validator_state.json", "config/genesis.json"]) {
      await copyFile(join(home, f), join(signerHome, f));
    }
    // The Go node must not sign by itself: its key file goes (it is not read with priv_validator_laddr).
    await rm(join(home, "config/priv_validator_key.json"));
    const addr = await address(transport, dir);
    await setTomlKeys(join(home, "config", "config.toml"), {
      "": { proxy_app: '"kvstore"', priv_validator_laddr: JSON.stringify(addr) },
      consensus: { timeout_commit: '"200ms"' },
    });

    const signer = startSigner(signerHome, addr);
    await waitFor(() => /dialing/.test(signer.output()));
    const node = await startCometbft(home);
    track(node);
    await waitForHeight(node.rpcUrl, 3);
    expect(signer.output()).toMatch(/connected to the node/);
    // The blocks carry the signer's validator signature.
    const key = JSON.parse(await readFile(join(signerHome, "config/priv_validator_key.json"), "utf8")) as {
      address: string;
    };
    const commit = await rpcCall<{ signed_header: { commit: { signatures: { validator_address: string }[] } } }>(
      node.rpcUrl,
      "commit",
      { height: "2" },
    );
    expect(commit.signed_header.commit.signatures.map((s) => s.validator_address)).toEqual([key.address]);
    expect(await node.stop()).toBe(0);
  });
});

const goSignerMissing = missingBinaries("cometbft-signer");
describe.skipIf(goSignerMissing !== undefined)(`cometh with CometBFT's signer ${goSignerMissing ?? ""}`, () => {
  test.each(["tcp", "unix"] as const)(
    "behavior: a cometh validator signs through Go's privval over %s",
    async (transport) => {
      const dir = await tempDir("cometh-gosigner-");
      const home = join(dir, "node");
      await initHome(home, { chainId: "go-signed" });
      const keyFile = join(dir, "priv_validator_key.json");
      const stateFile = join(dir, "priv_validator_state.json");
      await copyFile(join(home, "config/priv_validator_key.json"), keyFile);
      await copyFile(join(home, "data/priv_validator_state.json"), stateFile);
      await rm(join(home, "config/priv_validator_key.json"));
      const addr = await address(transport, dir);
      const goSigner = () =>
        track(
          spawnBinary("cometbft-signer", [
            "-addr",
            addr,
            "-key",
            keyFile,
            "-state",
            stateFile,
            "-chain-id",
            "go-signed",
          ]),
        );

      let signer = goSigner();
      await signer.waitForOutput(/cometbft-signer started/);
      const node = await startNodeProcess(home, [
        "--priv_validator_laddr",
        addr,
        "--proxy_app",
        "kvstore",
        "--consensus.timeout_commit",
        "100ms",
      ]);
      cleanups.push(() => node.kill());
      await waitForHeight(node.rpcUrl, 3);

      // Go's signer goes away: cometh stops signing and keeps running; a new one is used at once.
      await signer.kill();
      await waitFor(() => /remote signer disconnected/.test(node.output()));
      await waitFor(() => /failed signing (vote|proposal)/.test(node.output()));
      const stalled = Number(
        (await rpcGet<{ sync_info: { latest_block_height: string } }>(node.rpcUrl, "status")).sync_info
          .latest_block_height,
      );
      signer = goSigner();
      await waitForHeight(node.rpcUrl, stalled + 3);
      // Go's FilePV kept the guard: its state file moved on with the chain.
      const state = JSON.parse(await readFile(stateFile, "utf8")) as { height: string };
      expect(Number(state.height)).toBeGreaterThanOrEqual(stalled + 2);
      expect(await node.stop()).toBe(0);
    },
  );
});

/** Waits for a condition a child process reaches on its own (a line it prints), bounded. */
async function waitFor(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
