import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runCli, type SpawnedNode, spawnNode } from "./testNode.js";
import { freePorts } from "./testnetHarness.js";

/**
 * `cometh dev` as a user starts it: Anvil's flags (accounts, balance, chain id, no mining), the state
 * file written at exit and loaded at start, and a home that is not a dev chain refused.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cometh-devcmd-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `cometh dev` on free ports; resolves once its Ethereum JSON-RPC answers. */
async function startDev(args: string[], env?: Record<string, string>): Promise<{ node: SpawnedNode; url: string }> {
  const [port] = (await freePorts(1)) as [number];
  const node = spawnNode(["dev", "--port", String(port), "--rpc.laddr", "tcp://127.0.0.1:0", ...args], {
    ...(env === undefined ? {} : { env }),
  });
  node.ready.catch(() => undefined);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await rpc(url, "eth_chainId");
      return { node, url };
    } catch {
      if (node.child.exitCode !== null || Date.now() > deadline) {
        node.child.kill("SIGKILL");
        throw new Error(`cometh dev did not answer:\n${node.output()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function stop(node: SpawnedNode): Promise<number | null> {
  node.child.kill("SIGTERM");
  const code = await Promise.race([node.exited, new Promise<"late">((r) => setTimeout(() => r("late"), 20_000))]);
  if (code === "late") {
    node.child.kill("SIGKILL");
    return node.exited;
  }
  return code;
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

describe("cometh dev", () => {
  test("flags: --accounts, --balance, --chain-id (default 31337), --no-mining; SIGTERM writes --dump-state, --load-state reads it", async () => {
    const file = join(dir, "state.json");
    const { node, url } = await startDev([
      "--accounts",
      "3",
      "--balance",
      "5",
      "--chain-id",
      "4242",
      "--no-mining",
      "--dump-state",
      file,
      "--silent",
    ]);
    let code: number | null;
    try {
      // --silent: no banner, no request log.
      expect(node.output()).toBe("");
      expect(await rpc(url, "eth_chainId")).toBe("0x1092");
      const accounts = (await rpc(url, "eth_accounts")) as string[];
      expect(accounts).toHaveLength(3);
      expect(await rpc(url, "eth_getBalance", [accounts[0], "latest"])).toBe(`0x${(5n * 10n ** 18n).toString(16)}`);
      expect(await rpc(url, "anvil_getAutomine")).toBe(false);
      const hash = await rpc(url, "eth_sendTransaction", [{ from: accounts[0], to: accounts[1], value: "0x1" }]);
      expect(await rpc(url, "eth_blockNumber")).toBe("0x0");
      await rpc(url, "evm_mine");
      expect(await rpc(url, "eth_getTransactionReceipt", [hash])).not.toBeNull();
      await rpc(url, "anvil_setBalance", ["0x00000000000000000000000000000000000000d1", "0x1234"]);
    } finally {
      code = await stop(node);
    }
    if (code !== 0) console.log(node.output(), node.child.signalCode);
    expect(code).toBe(0);
    expect(existsSync(file)).toBe(true);
    const state = JSON.parse(readFileSync(file, "utf8")) as { accounts: Record<string, { balance: string }> };
    expect(state.accounts["0x00000000000000000000000000000000000000d1"]?.balance).toBe("0x1234");

    const again = await startDev(["--load-state", file, "--silent"]);
    try {
      // Without --chain-id a dev chain is 31337, as Anvil and Hardhat are.
      expect(await rpc(again.url, "eth_chainId")).toBe("0x7a69");
      expect(await rpc(again.url, "eth_getBalance", ["0x00000000000000000000000000000000000000d1", "latest"])).toBe(
        "0x1234",
      );
    } finally {
      const c = await stop(again.node);
      if (c !== 0) console.log(again.node.output(), again.node.child.signalCode);
      expect(c).toBe(0);
    }
  }, 90_000);

  test("--init: a geth genesis.json sets the chain id, alloc, coinbase, gas limit and base fee; gas used is charged", async () => {
    const file = join(dir, "genesis.json");
    const { writeFileSync } = await import("node:fs");
    const funded = "0x71562b71999873db5b286df957af199ec94617f7";
    const coinbase = "0x00000000000000000000000000000000000000c0";
    writeFileSync(
      file,
      JSON.stringify({
        config: { chainId: 1337 },
        gasLimit: "0xaf79e0",
        baseFeePerGas: "0x3b9aca00",
        coinbase,
        alloc: {
          [funded]: { balance: "0xd3c21bcecceda1000000" },
          "0x00000000000000000000000000000000000000aa": { code: "0x60016000f3", nonce: "0x1" },
        },
      }),
    );
    const { node, url } = await startDev(["--init", file, "--accounts", "1", "--silent"]);
    try {
      expect(await rpc(url, "eth_chainId")).toBe("0x539");
      expect(await rpc(url, "eth_getBalance", [funded, "latest"])).toBe("0xd3c21bcecceda1000000");
      expect(await rpc(url, "eth_getCode", ["0x00000000000000000000000000000000000000aa", "latest"])).toBe(
        "0x60016000f3",
      );
      const genesis = (await rpc(url, "eth_getBlockByNumber", ["0x0", false])) as Record<string, string>;
      expect(genesis.gasLimit).toBe("0xaf79e0");
      expect(genesis.baseFeePerGas).toBe("0x3b9aca00");
      // Block 0 shows the genesis' fee recipient, as geth shows its genesis file's coinbase.
      expect(genesis.miner).toBe(coinbase);
      // A transfer with a generous gas limit is charged 21000 (no 0.5 × gas limit floor), the tip goes to coinbase.
      const [dev] = (await rpc(url, "eth_accounts")) as string[];
      const hash = await rpc(url, "eth_sendTransaction", [
        { from: dev, to: funded, value: "0x1", gas: "0x186a0", maxPriorityFeePerGas: "0x2" },
      ]);
      const receipt = (await rpc(url, "eth_getTransactionReceipt", [hash])) as Record<string, string>;
      expect(receipt.gasUsed).toBe("0x5208");
      expect(await rpc(url, "eth_getBalance", [coinbase, "latest"])).toBe(`0x${(21000n * 2n).toString(16)}`);
    } finally {
      await stop(node);
    }
    const clash = await runCli(["dev", "--init", file, "--chain-id", "5"]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/--chain-id 5 differs from config.chainId 1337/);
  }, 90_000);

  test("behavior: a dev chain killed with SIGKILL (its WAL holds only the height in progress in memory) restarts on its home and keeps mining", async () => {
    const home = join(dir, "killed");
    const first = await startDev(["--home", home, "--silent"]);
    await rpc(first.url, "hardhat_mine", ["0x14"]);
    const acct = "0x00000000000000000000000000000000000000aa";
    await rpc(first.url, "hardhat_setBalance", [acct, "0x1234"]);
    const head = Number(await rpc(first.url, "eth_blockNumber"));
    expect(head).toBe(21);
    first.node.child.kill("SIGKILL");
    await first.node.exited;
    const again = await startDev(["--home", home, "--silent"]);
    try {
      expect(Number(await rpc(again.url, "eth_blockNumber"))).toBe(head);
      expect(await rpc(again.url, "eth_getBalance", [acct, "latest"])).toBe("0x1234");
      await rpc(again.url, "evm_mine");
      expect(Number(await rpc(again.url, "eth_blockNumber"))).toBe(head + 1);
    } finally {
      await stop(again.node);
    }
  }, 90_000);

  test("memdb: a temporary home's chain lives in memory (no LMDB file, no WAL); --db_backend memdb on a --home starts from genesis each time; an LMDB home and `cometh start` refuse it", async () => {
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const blockNumber = async (url: string) => Number(await rpc(url, "eth_blockNumber"));
    const onTemp = await startDev(["--silent"], { TMPDIR: tmp });
    try {
      await rpc(onTemp.url, "hardhat_mine", ["0x5"]);
      expect(await blockNumber(onTemp.url)).toBe(5);
      // Running from the sources, tsx keeps its cache in TMPDIR too.
      const homes = readdirSync(tmp).filter((f) => f.startsWith("cometh-dev-"));
      expect(homes).toHaveLength(1);
      const files = readdirSync(join(tmp, homes[0] as string), { recursive: true }).map(String);
      expect(files.filter((f) => f.endsWith(".mdb") || f.includes("cs.wal"))).toEqual([]);
      expect(files).toContain(join("config", "genesis.json"));
    } finally {
      await stop(onTemp.node);
    }
    expect(readdirSync(tmp).filter((f) => f.startsWith("cometh-dev-"))).toEqual([]);

    const home = join(dir, "memdb-home");
    for (const run of [1, 2]) {
      const dev = await startDev(["--home", home, "--db_backend", "memdb", "--silent"]);
      try {
        expect(await blockNumber(dev.url), `run ${run} starts from genesis`).toBe(0);
        await rpc(dev.url, "hardhat_mine", ["0x3"]);
        expect(await blockNumber(dev.url)).toBe(3);
      } finally {
        await stop(dev.node);
      }
    }

    const lmdbHome = join(dir, "lmdb-home");
    const first = await startDev(["--home", lmdbHome, "--silent"]);
    await rpc(first.url, "evm_mine");
    await stop(first.node);
    const refused = await runCli([
      "dev",
      "--home",
      lmdbHome,
      "--db_backend",
      "memdb",
      "--port",
      "0",
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /db_backend "memdb" starts the chain from its genesis, but .*cs\.wal.* holds an earlier run's WAL/,
    );
    const again = await startDev(["--home", lmdbHome, "--silent"]);
    try {
      expect(await blockNumber(again.url)).toBe(1);
    } finally {
      await stop(again.node);
    }

    const plain = join(dir, "plain-memdb");
    expect((await runCli(["init", "--home", plain])).code).toBe(0);
    const start = await runCli([
      "start",
      "--home",
      plain,
      "--db_backend",
      "memdb",
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      "--p2p.laddr",
      "tcp://127.0.0.1:0",
    ]);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(
      /db_backend "memdb" keeps no block, state or WAL across restarts: it is for dev chains only/,
    );
  }, 90_000);

  test("errors: a --home holding a chain that is not a dev chain is refused; bad flags name themselves", async () => {
    const home = join(dir, "plain");
    expect((await runCli(["init", "--home", home])).code).toBe(0);
    const r = await runCli(["dev", "--home", home, "--port", "0", "--rpc.laddr", "tcp://127.0.0.1:0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not a dev chain/);
    const bad = await runCli(["dev", "--accounts", "many"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--accounts/);
    const garbage = join(dir, "garbage.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(garbage, "{not json");
    const badState = await runCli(["dev", "--load-state", garbage]);
    expect(badState.code).toBe(1);
    expect(badState.stderr).toMatch(/--load-state.*not a state file/);
  }, 60_000);
});
