import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ConfigError } from "./errors.js";
import { loadGenesis } from "./genesis.js";
import { loadNodeConfig } from "./nodeConfig.js";
import { createTestnet } from "./testnet.js";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cometh-testnet-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("createTestnet", () => {
  test("default: four validators share one genesis and list each other as persistent peers", async () => {
    const out = tempDir();
    const r = await createTestnet({ outputDir: out, validators: 4, nonValidators: 1, chainId: "tn-1" });
    expect(r.nodes.map((n) => n.name)).toEqual(["node0", "node1", "node2", "node3", "node4"]);
    expect(r.nodes.map((n) => n.p2pPort)).toEqual([26656, 26666, 26676, 26686, 26696]);
    expect(r.nodes.map((n) => n.rpcPort)).toEqual([26657, 26667, 26677, 26687, 26697]);
    const genesisTexts = r.nodes.map((n) => readFileSync(join(n.home, "config", "genesis.json"), "utf8"));
    expect(new Set(genesisTexts).size).toBe(1);
    const genesis = loadGenesis(join(r.nodes[0]?.home ?? "", "config", "genesis.json"));
    expect(genesis.chainId).toBe("tn-1");
    expect(genesis.validators).toHaveLength(4);
    expect(genesis.validators.every((v) => v.power === 1n)).toBe(true);
    for (const n of r.nodes) {
      const c = loadNodeConfig(n.home);
      expect(c.p2p.laddr).toBe(`tcp://127.0.0.1:${n.p2pPort}`);
      expect(c.rpc.laddr).toBe(`tcp://127.0.0.1:${n.rpcPort}`);
      expect(c.rpc.dashboard).toBe(true);
      expect(c.p2p.addrBookStrict).toBe(false);
      expect(c.p2p.allowDuplicateIp).toBe(true);
      expect(c.base.moniker).toBe(n.name);
      const peers = c.p2p.persistentPeers.split(",");
      expect(peers).toHaveLength(4);
      expect(peers).not.toContain(`${n.nodeId}@127.0.0.1:${n.p2pPort}`);
      for (const o of r.nodes) if (o !== n) expect(peers).toContain(`${o.nodeId}@127.0.0.1:${o.p2pPort}`);
    }
  });

  test("args: --starting-ip-address gives consecutive addresses and the same ports", async () => {
    const r = await createTestnet({
      outputDir: tempDir(),
      validators: 2,
      nonValidators: 0,
      startingIp: "192.167.10.254",
    });
    expect(r.nodes.map((n) => `${n.host}:${n.p2pPort}`)).toEqual(["192.167.10.254:26656", "192.167.10.255:26656"]);
    expect(loadNodeConfig(r.nodes[0]?.home ?? "").p2p.laddr).toBe("tcp://0.0.0.0:26656");
  });

  test("args: --hostname-prefix names the hosts and keeps the ports", async () => {
    const r = await createTestnet({ outputDir: tempDir(), validators: 2, nonValidators: 0, hostnamePrefix: "val" });
    expect(r.nodes.map((n) => `${n.host}:${n.p2pPort}`)).toEqual(["val0:26656", "val1:26656"]);
    const peers = loadNodeConfig(r.nodes[0]?.home ?? "").p2p.persistentPeers;
    expect(peers).toBe(`${r.nodes[1]?.nodeId}@val1:26656`);
  });

  test("error: a non-empty node directory is refused", async () => {
    const out = tempDir();
    await createTestnet({ outputDir: out, validators: 1, nonValidators: 0 });
    await expect(createTestnet({ outputDir: out, validators: 1, nonValidators: 0 })).rejects.toThrow(ConfigError);
    await expect(createTestnet({ outputDir: tempDir(), validators: 0, nonValidators: 0 })).rejects.toThrow(
      /at least 1/,
    );
  });
});
