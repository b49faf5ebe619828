import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { FilePV } from "../privval/index.js";
import { SIGNED_MSG_TYPE } from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { ConfigError } from "./errors.js";
import { loadGenesis } from "./genesis.js";
import { initHome, resetHome, resolveHome } from "./home.js";
import { loadNodeConfig } from "./nodeConfig.js";
import { loadNodeKey, loadOrGenerateNodeKey } from "./nodeKey.js";

let home: string;
beforeEach(() => {
  home = join(mkdtempSync(join(tmpdir(), "cometh-home-")), "h");
});
afterEach(() => {
  rmSync(join(home, ".."), { recursive: true, force: true });
});

function listTree(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? [`${prefix}${e.name}/`, ...listTree(join(dir, e.name), `${prefix}${e.name}/`)]
        : [`${prefix}${e.name}`],
    )
    .sort();
}

describe("resolveHome", () => {
  test("default: ~/.cometh", () => {
    expect(resolveHome(undefined, {})).toBe(join(homedir(), ".cometh"));
  });
  test("args: --home wins over COMETH_HOME, which wins over the default", () => {
    expect(resolveHome("/a", { COMETH_HOME: "/b" })).toBe("/a");
    expect(resolveHome(undefined, { COMETH_HOME: "/b" })).toBe("/b");
    expect(resolveHome("~/x", {})).toBe(join(homedir(), "x"));
  });
});

/** The files and folders `initHome` writes: CometBFT's layout. */
const HOME_LAYOUT = [
  "config/",
  "config/app.toml",
  "config/config.toml",
  "config/genesis.json",
  "config/node_key.json",
  "config/priv_validator_key.json",
  "data/",
  "data/priv_validator_state.json",
];

describe("initHome", () => {
  test("default: writes CometBFT's layout", async () => {
    const r = await initHome(home, { chainId: "my-chain", moniker: "alice" });
    expect(listTree(home)).toEqual(HOME_LAYOUT);
    expect(r.chainId).toBe("my-chain");
    expect(r.files.every((f) => f.action === "generated")).toBe(true);
    expect(statSync(join(home, "config/node_key.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "config/priv_validator_key.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "data")).mode & 0o777).toBe(0o700);

    const config = loadNodeConfig(home);
    expect(config.base.moniker).toBe("alice");
    expect(config.warnings).toEqual([]);

    const genesis = loadGenesis(config.base.genesisFile);
    const pv = await FilePV.load(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
    expect(genesis.chainId).toBe("my-chain");
    expect(genesis.initialHeight).toBe(1);
    expect(genesis.validators).toEqual([{ address: pv.address(), pubKey: pv.pubKey(), power: 10n, name: "" }]);
    expect(Number(genesis.genesisTime / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000);

    const nodeKey = JSON.parse(readFileSync(join(home, "config/node_key.json"), "utf8")) as Record<string, unknown>;
    expect(Object.keys(nodeKey)).toEqual(["priv_key"]);
    expect((await loadNodeKey(config.base.nodeKeyFile)).id).toBe(r.nodeId);
    expect(r.nodeId).toMatch(/^[0-9a-f]{40}$/);
  });

  test("args: durable false (a temporary dev home) writes the same layout, modes and loadable files, with no temporary files left", async () => {
    const r = await initHome(home, { chainId: "dev-chain", durable: false });
    expect(listTree(home)).toEqual(HOME_LAYOUT);
    expect(statSync(join(home, "config/node_key.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "config/priv_validator_key.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "data/priv_validator_state.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "config/genesis.json")).mode & 0o777).toBe(0o644);
    const config = loadNodeConfig(home);
    const genesis = loadGenesis(config.base.genesisFile);
    const pv = await FilePV.load(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
    expect(genesis.chainId).toBe("dev-chain");
    expect(genesis.validators).toEqual([{ address: pv.address(), pubKey: pv.pubKey(), power: 10n, name: "" }]);
    expect((await loadNodeKey(config.base.nodeKeyFile)).id).toBe(r.nodeId);
  });

  test("default: chain id test-chain-<6 random letters or digits>", async () => {
    const r = await initHome(home);
    expect(r.chainId).toMatch(/^test-chain-[A-Za-z0-9]{6}$/);
  });

  test("behavior: idempotent — existing files are kept", async () => {
    const first = await initHome(home, { chainId: "one" });
    const before = Object.fromEntries(
      listTree(home)
        .filter((p) => !p.endsWith("/"))
        .map((p) => [p, readFileSync(join(home, p), "utf8")]),
    );
    const second = await initHome(home, { chainId: "two", moniker: "other" });
    expect(second.chainId).toBe("one");
    expect(second.nodeId).toBe(first.nodeId);
    expect(second.files.every((f) => f.action === "found")).toBe(true);
    for (const [p, text] of Object.entries(before)) expect(readFileSync(join(home, p), "utf8")).toBe(text);
  });

  test("behavior: a missing file is regenerated, the others kept", async () => {
    const first = await initHome(home);
    rmSync(join(home, "config/genesis.json"));
    const second = await initHome(home);
    expect(second.nodeId).toBe(first.nodeId);
    expect(second.files.filter((f) => f.action === "generated").map((f) => f.path)).toEqual([
      join(home, "config/genesis.json"),
    ]);
  });
});

describe("resetHome", () => {
  test("default: removes the data and WAL, keeps keys and config, resets the sign state", async () => {
    await initHome(home);
    const config = loadNodeConfig(home);
    const pv = await FilePV.load(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
    await pv.signVote("c", {
      type: SIGNED_MSG_TYPE.prevote,
      height: 7,
      round: 0,
      blockId: { hash: EMPTY_BYTES, partSetHeader: { total: 0, hash: EMPTY_BYTES } },
      timestamp: 1n,
      validatorAddress: pv.address(),
      validatorIndex: 0,
      signature: EMPTY_BYTES,
      extension: EMPTY_BYTES,
      extensionSignature: EMPTY_BYTES,
    });
    mkdirSync(join(home, "data/cs.wal"), { recursive: true });
    writeFileSync(join(home, "data/cs.wal/wal"), "wal");
    mkdirSync(join(home, "data/blockstore.lmdb"));
    writeFileSync(join(home, "data/blockstore.lmdb/data.mdb"), "x");
    writeFileSync(join(home, "config/addrbook.json"), "{}");
    const keyBefore = readFileSync(config.base.privValidatorKeyFile, "utf8");

    await resetHome(config, { keepAddrBook: true });
    expect(listTree(home)).toEqual([
      "config/",
      "config/addrbook.json",
      "config/app.toml",
      "config/config.toml",
      "config/genesis.json",
      "config/node_key.json",
      "config/priv_validator_key.json",
      "data/",
      "data/priv_validator_state.json",
    ]);
    expect(JSON.parse(readFileSync(config.base.privValidatorStateFile, "utf8"))).toEqual({
      height: "0",
      round: 0,
      step: 0,
    });
    expect(readFileSync(config.base.privValidatorKeyFile, "utf8")).toBe(keyBefore);

    await resetHome(config);
    expect(existsSync(join(home, "config/addrbook.json"))).toBe(false);
  });

  test("error: refuses when db_dir would contain the config", async () => {
    await initHome(home);
    writeFileSync(join(home, "config/config.toml"), 'db_dir = "."\n');
    const config = loadNodeConfig(home);
    await expect(resetHome(config)).rejects.toBeInstanceOf(ConfigError);
    expect(existsSync(join(home, "config/genesis.json"))).toBe(true);
  });
});

describe("node key", () => {
  test("behavior: loadOrGenerateNodeKey generates once, then loads", async () => {
    mkdirSync(home, { recursive: true });
    const path = join(home, "node_key.json");
    const a = await loadOrGenerateNodeKey(path);
    const b = await loadOrGenerateNodeKey(path);
    expect(a.generated).toBe(true);
    expect(b.generated).toBe(false);
    expect(b.id).toBe(a.id);
    expect(b.pubKey).toEqual(a.pubKey);
  });

  test("error: malformed node key", async () => {
    mkdirSync(home, { recursive: true });
    const path = join(home, "node_key.json");
    writeFileSync(path, '{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"AAAA"}}');
    await expect(loadNodeKey(path)).rejects.toThrow(/priv_key: ed25519 private key must be 64 bytes, got 3/);
  });
});
