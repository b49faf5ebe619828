import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { runCli, type SpawnedNode, spawnNode } from "../integration/testNode.js";
import {
  type AbciKvstore,
  type CometbftNode,
  initCometbftHome,
  missingBinaries,
  rpcCall,
  setTomlKeys,
  startAbciKvstore,
  startCometbft,
  waitForHeight,
} from "./binaries.js";

/**
 * cometh drives Go's example application, `abci-cli kvstore`, over CometBFT's ABCI socket protocol
 * (`proxy_app` = its address), and a Go `cometbft` node drives another `abci-cli kvstore` with the
 * same txs: the results and app hashes must be the same. Killing the application stops the node.
 */

const missing = missingBinaries("cometbft", "abci-cli");

interface TxResult {
  code: number;
  data: string | null;
  log: string;
  info: string;
  gas_wanted: string;
  gas_used: string;
  events: unknown[];
  codespace: string;
}
interface BroadcastCommit {
  check_tx: { code: number };
  tx_result: TxResult;
  hash: string;
  height: string;
}

const dirs: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** Stopped at the end of the file whatever happens (by PID, through their handles). */
const running: { stop(): Promise<unknown> }[] = [];

function comethHandle(node: SpawnedNode): { stop(): Promise<unknown> } {
  return {
    async stop() {
      if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill("SIGKILL");
      await node.exited;
    },
  };
}

async function initComethHome(): Promise<string> {
  const home = await tempDir("cometh-abci-home-");
  const init = await runCli(["init", "--home", home, "--chain-id", "abci-socket"]);
  expect(init.code, init.stderr).toBe(0);
  return home;
}

/** A cometh home from `cometh init`, started through bin/cometh.js with `proxy_app` = the app's address. */
async function startComethOn(
  app: AbciKvstore,
  abci: "socket" | "grpc" = "socket",
): Promise<{ node: SpawnedNode; rpcUrl: string; home: string }> {
  const home = await initComethHome();
  const node = spawnComethOn(home, app.address, ["--abci", abci]);
  const rpcUrl = `http://${await node.ready}`;
  return { node, rpcUrl, home };
}

function spawnComethOn(home: string, address: string, flags: readonly string[] = []): SpawnedNode {
  const node = spawnNode(
    [
      "start",
      "--home",
      home,
      "--proxy_app",
      address,
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      "--p2p.laddr",
      "tcp://127.0.0.1:0",
      "--json-rpc.enable=false",
      "--consensus.timeout_commit",
      "200ms",
      ...flags,
    ],
    { launcher: true },
  );
  running.push(comethHandle(node));
  return node;
}

/** Resolves once the child has printed a line matching `re` (checked as its output arrives). */
function outputMatches(node: SpawnedNode, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!re.test(node.output())) return;
      node.child.stdout?.off("data", check);
      node.child.stderr?.off("data", check);
      resolve();
    };
    node.child.stdout?.on("data", check);
    node.child.stderr?.on("data", check);
    void node.exited.then((code) =>
      reject(new Error(`node exited (${code}) before printing ${re}:\n${node.output()}`)),
    );
    check();
  });
}

async function startGoApp(unix: boolean, abci: "socket" | "grpc" = "socket"): Promise<AbciKvstore> {
  const dir = await tempDir("cometh-abci-app-");
  const app = await startAbciKvstore({
    persistDir: join(dir, "db"),
    abci,
    ...(unix ? { unixPath: join(dir, "app.sock") } : {}),
  });
  running.push(app);
  return app;
}

async function startGoNodeOn(app: AbciKvstore, abci: "socket" | "grpc" = "socket"): Promise<CometbftNode> {
  const home = await tempDir("cometbft-abci-home-");
  await initCometbftHome(home);
  await setTomlKeys(join(home, "config", "config.toml"), {
    // CometBFT's gRPC client hands proxy_app to grpc-go as a target, which reads "tcp://" as an
    // unknown URL scheme: it takes a bare host:port (docs/compatibility.md).
    "": {
      proxy_app: JSON.stringify(abci === "grpc" ? app.address.replace(/^tcp:\/\//, "") : app.address),
      abci: JSON.stringify(abci),
    },
    consensus: { timeout_commit: '"200ms"' },
  });
  const node = await startCometbft(home);
  running.push(node);
  return node;
}

function broadcast(rpcUrl: string, tx: string): Promise<BroadcastCommit> {
  return rpcCall<BroadcastCommit>(rpcUrl, "broadcast_tx_commit", { tx: JSON.stringify(tx) });
}

async function queryValue(rpcUrl: string, key: string): Promise<{ code: number; value: string | null; log: string }> {
  const q = await rpcCall<{ response: { code: number; value: string | null; log: string } }>(rpcUrl, "abci_query", {
    data: JSON.stringify(key),
  });
  return {
    code: q.response.code,
    value: q.response.value === null ? null : Buffer.from(q.response.value, "base64").toString(),
    log: q.response.log,
  };
}

async function latestAppHash(rpcUrl: string): Promise<{ height: number; appHash: string }> {
  const b = await rpcCall<{ block: { header: { height: string; app_hash: string } } }>(rpcUrl, "block");
  return { height: Number(b.block.header.height), appHash: b.block.header.app_hash };
}

/** Waits until a block above `height` is stored, so that the app hash of everything before it is in a header. */
async function appHashAfter(rpcUrl: string, height: number): Promise<string> {
  await waitForHeight(rpcUrl, height + 1);
  const h = await rpcCall<{ header: { app_hash: string } }>(rpcUrl, "header", { height: String(height + 1) });
  return h.header.app_hash;
}

afterAll(async () => {
  for (const p of running.reverse()) await p.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const TXS = ["alpha=1", "beta=2", "gamma=3", "alpha=4"];

describe.skipIf(missing !== undefined)(`cometh driving abci-cli kvstore over a socket or gRPC ${missing ?? ""}`, () => {
  for (const transport of ["unix", "tcp", "grpc"] as const) {
    test(`behavior: over ${transport}, txs commit with the app's results, and its hashes are in the headers`, async () => {
      const abci = transport === "grpc" ? "grpc" : "socket";
      const app = await startGoApp(transport === "unix", abci);
      expect(app.address.startsWith(transport === "unix" ? "unix:///" : "tcp://127.0.0.1:")).toBe(true);
      const { node, rpcUrl, home } = await startComethOn(app, abci);
      await waitForHeight(rpcUrl, 2);

      const results: BroadcastCommit[] = [];
      for (const tx of TXS) results.push(await broadcast(rpcUrl, tx));
      for (const r of results) {
        expect(r.check_tx.code).toBe(0);
        expect(r.tx_result.code).toBe(0);
        // The Go app's events, as it wrote them.
        expect(JSON.stringify(r.tx_result.events)).toContain("Cosmoshi Netowoko");
      }
      // CheckTx over the mempool connection: the Go app refuses a tx without "=" (CodeTypeInvalidTxFormat).
      const bad = await rpcCall<{ code: number }>(rpcUrl, "broadcast_tx_sync", { tx: '"novalue"' });
      expect(bad.code).toBe(2);

      // Query over the query connection.
      expect(await queryValue(rpcUrl, "alpha")).toMatchObject({ code: 0, value: "4", log: "exists" });
      expect(await queryValue(rpcUrl, "nothing")).toMatchObject({ code: 0, value: null, log: "does not exist" });

      // The app hash after the last tx (the Go kvstore's: its tx count, varint-encoded) is in the next header.
      const last = Math.max(...results.map((r) => Number(r.height)));
      expect(await appHashAfter(rpcUrl, last)).toBe("0800000000000000");
      const info = await rpcCall<{ response: { last_block_height: string; last_block_app_hash: string } }>(
        rpcUrl,
        "abci_info",
      );
      expect(Number(info.response.last_block_height)).toBeGreaterThan(last);
      expect(Buffer.from(info.response.last_block_app_hash, "base64").toString("hex").toUpperCase()).toBe(
        "0800000000000000",
      );

      // A validator update from the app (FinalizeBlock's validator_updates) is applied at H+2.
      const key = JSON.parse(await readFile(join(home, "config", "priv_validator_key.json"), "utf8")) as {
        pub_key: { value: string };
      };
      // The Go kvstore's validator tx: "val=" type "!" base64 key "!" power.
      const val = await broadcast(rpcUrl, `val=ed25519!${key.pub_key.value}!7`);
      expect(val.check_tx.code).toBe(0);
      expect(val.tx_result.code).toBe(0);
      const at = Number(val.height) + 2;
      await waitForHeight(rpcUrl, at);
      const vals = await rpcCall<{ validators: { voting_power: string }[] }>(rpcUrl, "validators", {
        height: String(at),
      });
      expect(vals.validators.map((v) => v.voting_power)).toEqual(["7"]);

      // Killing the application stops the node, with the reason in its log.
      await app.kill();
      expect(await node.exited).toBe(1);
      expect(node.output()).toMatch(/connection terminated\. Did the application crash\? Please restart cometh/);
    });
  }

  test("behavior: the node waits for an application not listening yet; a restarted node carries on with the app's state", async () => {
    const dir = await tempDir("cometh-abci-late-");
    const socket = join(dir, "app.sock");
    const home = await initComethHome();
    const first = spawnComethOn(home, `unix://${socket}`);
    // As CometBFT: no application yet, so it logs and retries (every 3 s).
    await outputMatches(first, /abci\.socketClient failed to connect to unix:\/\/\S+app\.sock\. {2}Retrying after 3s/);
    const app = await startAbciKvstore({ persistDir: join(dir, "db"), unixPath: socket });
    running.push(app);
    const rpcUrl = `http://${await first.ready}`;
    await waitForHeight(rpcUrl, 2);
    const tx = await broadcast(rpcUrl, "late=yes");
    expect(tx.tx_result.code).toBe(0);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    // The app kept its state; the node's handshake finds it at the node's height and goes on.
    const second = spawnComethOn(home, app.address);
    const rpc2 = `http://${await second.ready}`;
    const info = await rpcCall<{ response: { last_block_height: string } }>(rpc2, "abci_info");
    const appHeight = Number(info.response.last_block_height);
    expect(appHeight).toBeGreaterThanOrEqual(Number(tx.height));
    await waitForHeight(rpc2, appHeight + 2);
    expect(await queryValue(rpc2, "late")).toMatchObject({ code: 0, value: "yes" });
    expect(second.output()).toMatch(/Completed ABCI Handshake/);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  test.each(["socket", "grpc"] as const)(
    "behavior: a Go node and a cometh node, each driving its own abci-cli kvstore over %s, get the same results and app hashes",
    async (abci) => {
      const [goApp, comethApp] = await Promise.all([startGoApp(false, abci), startGoApp(abci === "socket", abci)]);
      const goNode = await startGoNodeOn(goApp, abci);
      const cometh = await startComethOn(comethApp, abci);
      await Promise.all([waitForHeight(goNode.rpcUrl, 2), waitForHeight(cometh.rpcUrl, 2)]);

      // "novalue" fails CheckTx: both answer with the app's check_tx and an empty tx_result.
      const txs = [...TXS, "novalue", "epsilon=5", "beta=6"];
      for (const tx of txs) {
        const [go, ours] = await Promise.all([broadcast(goNode.rpcUrl, tx), broadcast(cometh.rpcUrl, tx)]);
        expect(ours.hash).toBe(go.hash);
        expect(ours.check_tx.code).toBe(go.check_tx.code);
        expect(ours.tx_result).toEqual(go.tx_result);
        if (go.check_tx.code !== 0) expect(ours.height).toBe(go.height);
      }
      // Both apps hold the same values.
      for (const key of ["alpha", "beta", "gamma", "epsilon", "zeta"]) {
        expect(await queryValue(cometh.rpcUrl, key)).toEqual(await queryValue(goNode.rpcUrl, key));
      }
      // Once both chains have a block after their last tx, their latest app hashes agree.
      const [goTip, ourTip] = await Promise.all([latestAppHash(goNode.rpcUrl), latestAppHash(cometh.rpcUrl)]);
      const [goHash, ourHash] = await Promise.all([
        appHashAfter(goNode.rpcUrl, goTip.height),
        appHashAfter(cometh.rpcUrl, ourTip.height),
      ]);
      expect(ourHash).toBe(goHash);
      expect(ourHash).toBe("0C00000000000000");
      const [goInfo, ourInfo] = await Promise.all([
        rpcCall<{ response: Record<string, string> }>(goNode.rpcUrl, "abci_info"),
        rpcCall<{ response: Record<string, string> }>(cometh.rpcUrl, "abci_info"),
      ]);
      for (const field of ["data", "version", "app_version", "last_block_app_hash"]) {
        expect(ourInfo.response[field], field).toBe(goInfo.response[field]);
      }

      // Over the socket protocol CometBFT stops when its application is killed; cometh stops on both.
      if (abci === "socket") {
        await goApp.kill();
        await goNode.exited;
        expect(goNode.output()).toMatch(/connection terminated\. Did the application crash\?/);
      }
      await comethApp.kill();
      expect(await cometh.node.exited).toBe(1);
    },
  );
});
