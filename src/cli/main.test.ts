import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const pkgVersion = (JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string }).version;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cometh(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      // The launcher: the build in dist/ while fresh, else the sources through tsx.
      [join(repo, "bin/cometh.js"), ...args],
      { cwd: repo, env: { ...process.env, COMETH_HOME: "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let root: string;
let home: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "cometh-cli-"));
  home = join(root, "home");
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("cometh cli", () => {
  test("default: version", async () => {
    const r = await cometh(["version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`cometh ${pkgVersion} (CometBFT 0.38.25 compatible)`);
  });

  test("behavior: start's and dev's setting flags are listed by `help <command>`, `<command> --help` and an alias's help", async () => {
    for (const args of [
      ["help", "start"],
      ["start", "--help"],
      ["node", "--help"],
      ["help", "dev"],
      ["dev", "--help"],
    ]) {
      const r = await cometh(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).toContain("--consensus.timeout_commit <value>");
      expect(r.stdout, args.join(" ")).toContain("--json-rpc.address <value>");
    }
    const init = await cometh(["help", "init"]);
    expect(init.stdout).not.toContain("--consensus.timeout_commit");
  });

  test("default: init writes the home layout", async () => {
    const r = await cometh(["init", "--home", home, "--chain-id", "cli-chain", "--moniker", "bob"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    for (const f of [
      "config/config.toml",
      "config/app.toml",
      "config/genesis.json",
      "config/node_key.json",
      "config/priv_validator_key.json",
      "data/priv_validator_state.json",
    ]) {
      expect(existsSync(join(home, f))).toBe(true);
      expect(r.stdout).toContain(`Generated ${join(home, f)}`);
    }
    expect(JSON.parse(readFileSync(join(home, "config/genesis.json"), "utf8")).chain_id).toBe("cli-chain");
    expect(readFileSync(join(home, "config/config.toml"), "utf8")).toContain('moniker = "bob"');
  });

  test("behavior: init again keeps every file", async () => {
    const before = readFileSync(join(home, "config/priv_validator_key.json"), "utf8");
    const r = await cometh(["init", "--home", home, "--chain-id", "other"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("Generated");
    expect(r.stdout).toContain("chain_id=cli-chain");
    expect(readFileSync(join(home, "config/priv_validator_key.json"), "utf8")).toBe(before);
  });

  test("default: show-node-id prints the lowercase hex id", async () => {
    const r = await cometh(["show-node-id", "--home", home]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^[0-9a-f]{40}\n$/);
    const init = await cometh(["init", "--home", home]);
    expect(init.stdout).toContain(`node_id=${r.stdout.trim()}`);
  });

  test("default: show-validator prints the compact public key", async () => {
    const r = await cometh(["show-validator", "--home", home]);
    expect(r.code).toBe(0);
    const key = JSON.parse(readFileSync(join(home, "config/priv_validator_key.json"), "utf8")) as {
      pub_key: { type: string; value: string };
    };
    expect(r.stdout).toBe(`{"type":"tendermint/PubKeyEd25519","value":"${key.pub_key.value}"}\n`);
  });

  test("args: COMETH_HOME selects the home; --home after the command works with underscores aliases", async () => {
    const viaEnv = await cometh(["show_node_id"], { COMETH_HOME: home });
    const viaFlag = await cometh(["show-node-id", "--home", home]);
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.stdout).toBe(viaFlag.stdout);
  });

  test("default: unsafe-reset-all removes data and resets the sign state, keeping the key", async () => {
    const state = join(home, "data/priv_validator_state.json");
    writeFileSync(state, JSON.stringify({ height: "12", round: 1, step: 3, signature: "AA==", signbytes: "00" }));
    mkdirSync(join(home, "data/cs.wal"), { recursive: true });
    writeFileSync(join(home, "data/cs.wal/wal"), "x");
    const keyBefore = readFileSync(join(home, "config/priv_validator_key.json"), "utf8");
    const r = await cometh(["unsafe-reset-all", "--home", home, "--keep-addr-book"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The address book remains intact");
    expect(JSON.parse(readFileSync(state, "utf8"))).toEqual({ height: "0", round: 0, step: 0 });
    expect(existsSync(join(home, "data/cs.wal"))).toBe(false);
    expect(readFileSync(join(home, "config/priv_validator_key.json"), "utf8")).toBe(keyBefore);
  });

  test("error: a missing home is reported without a stack trace, exit 1", async () => {
    const r = await cometh(["show-node-id", "--home", join(root, "empty")]);
    expect(r.code).toBe(1);
    expect(r.stderr.replaceAll(root, "<root>").trim()).toMatchInlineSnapshot(
      `"ERROR: <root>/empty/config/node_key.json: node key file does not exist. Run "cometh init" to create it"`,
    );
  });

  test("error: a config mistake names the file, key and valid values, exit 1", async () => {
    const bad = join(root, "bad");
    await cometh(["init", "--home", bad]);
    writeFileSync(join(bad, "config/config.toml"), '[tx_index]\nindexer = "sql"\n');
    const r = await cometh(["show-validator", "--home", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr.replaceAll(root, "<root>").trim()).toMatchInlineSnapshot(
      `"ERROR: <root>/bad/config/config.toml: [tx_index] indexer must be one of "null", "kv", "psql"; got "sql""`,
    );
    const lvl = await cometh(["show-validator", "--home", home, "--log_level", "loud"]);
    expect(lvl.code).toBe(1);
    expect(lvl.stderr.trim()).toMatchInlineSnapshot(
      `"ERROR: flag --log_level: has unknown level "loud"; valid levels: debug, info, warn, error, none; as "info" or "consensus:debug,*:error""`,
    );
  });

  test("default: testnet writes the node homes; --populate-persistent-peers false leaves the peers out", async () => {
    const out = join(root, "tn");
    const r = await cometh(["testnet", "--v", "2", "--o", out, "--chain-id", "tn-cli", "--proxy_app", "kvstore"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Successfully initialized 2 node directories (chain tn-cli)");
    expect(r.stdout).toMatch(
      /node1: .* p2p=127\.0\.0\.1:26666 rpc=127\.0\.0\.1:26667 json-rpc=127\.0\.0\.1:8555 \(validator\)/,
    );
    expect(r.stdout).toContain("  dashboard: http://127.0.0.1:26667/dashboard");
    expect(readFileSync(join(out, "node0/config/config.toml"), "utf8")).toMatch(
      /persistent_peers = "[0-9a-f]{40}@127\.0\.0\.1:26666"/,
    );
    const lone = join(root, "tn-lone");
    const r2 = await cometh(["testnet", "--v", "2", "--o", lone, "--populate-persistent-peers", "false"]);
    expect(r2.code).toBe(0);
    expect(readFileSync(join(lone, "node0/config/config.toml"), "utf8")).toContain('persistent_peers = ""');
  });

  test("error: testnet refuses a count that is not a whole number and an address that is not IPv4, exit 1", async () => {
    const r = await cometh(["testnet", "--v", "2x", "--o", join(root, "tn-bad")]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('ERROR: testnet: --v must be a whole number (got "2x")');
    const r2 = await cometh(["testnet", "--v", "2", "--o", join(root, "tn-bad2"), "--starting-ip-address", "10..0.1"]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('"10..0.1" is not an IPv4 address');
  });

  test("error: unknown command", async () => {
    const r = await cometh(["frobnicate"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});
