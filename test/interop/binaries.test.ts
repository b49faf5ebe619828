import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import {
  type CometbftNode,
  cometbftVersion,
  INTEROP_DIR,
  initCometbftHome,
  missingBinaries,
  PINNED,
  rpcCall,
  runBinary,
  setTomlKeys,
  startCometbft,
  waitForHeight,
} from "./binaries.js";

// The binaries `npm run interop:install` builds, and the helpers the interop tests run them with.
const cometbftMissing = missingBinaries("cometbft", "abci-cli");
describe.skipIf(cometbftMissing !== undefined)(`CometBFT binaries ${cometbftMissing ?? ""}`, () => {
  const dirs: string[] = [];
  let node: CometbftNode | undefined;
  afterAll(async () => {
    await node?.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test("default: cometbft is the pinned version", async () => {
    expect(await cometbftVersion()).toBe(PINNED.cometbft.version.replace(/^v/, ""));
  });

  test("default: abci-cli runs and speaks ABCI 2", async () => {
    expect((await runBinary("abci-cli", ["version"])).stdout.trim()).toMatch(/^2\.\d+\.\d+$/);
  });

  test("behavior: a cometbft home with its built-in kvstore makes blocks and commits a tx", async () => {
    const home = await mkdtemp(join(tmpdir(), "cometh-interop-"));
    dirs.push(home);
    await initCometbftHome(home);
    await setTomlKeys(join(home, "config", "config.toml"), {
      "": { proxy_app: '"kvstore"' },
      consensus: { timeout_commit: '"200ms"' },
    });
    node = await startCometbft(home);
    await waitForHeight(node.rpcUrl, 2);
    const res = await rpcCall<{ tx_result: { code: number }; height: string }>(node.rpcUrl, "broadcast_tx_commit", {
      tx: '"interop=yes"',
    });
    expect(res.tx_result.code).toBe(0);
    const q = await rpcCall<{ response: { value: string } }>(node.rpcUrl, "abci_query", { data: '"interop"' });
    expect(Buffer.from(q.response.value, "base64").toString()).toBe("yes");
    expect(await node.stop()).toBe(0);
    node = undefined;
  });
});

const gethMissing = missingBinaries("geth");
describe.skipIf(gethMissing !== undefined)(`geth binary ${gethMissing ?? ""}`, () => {
  test("default: geth is the pinned version", async () => {
    const { stdout } = await runBinary("geth", ["version"]);
    expect(stdout).toContain(`Version: ${PINNED.geth.version.replace(/^v/, "")}-stable`);
  });
});

const harnessMissing = missingBinaries("tm-signer-harness");
describe.skipIf(harnessMissing !== undefined)(`tm-signer-harness binary ${harnessMissing ?? ""}`, () => {
  test("default: tm-signer-harness is the pinned version", async () => {
    const { stdout } = await runBinary("tm-signer-harness", ["version"]);
    expect(stdout.trim()).toBe(PINNED.tendermint.version.replace(/^v/, ""));
  });
});

describe("test/interop/gosigner", () => {
  test("default: its go.mod requires the cometbft version versions.json pins", () => {
    const goMod = readFileSync(join(INTEROP_DIR, "gosigner", "go.mod"), "utf8");
    expect(goMod).toMatch(
      new RegExp(`^require github\\.com/cometbft/cometbft ${PINNED.cometbft.version.replace(/\./g, "\\.")}$`, "m"),
    );
  });
});
