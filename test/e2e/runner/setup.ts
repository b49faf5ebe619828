// Writes the network's homes: createTestnet (one genesis, keys, ports), then per node: its manifest
// name as directory, persistent_peers through the runner's link proxies, pex off, the manifest's
// config overrides, and the validators' powers in genesis.json.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import {
  CONFIG_FILE_PATHS,
  createTestnet,
  listSettings,
  loadGenesis,
  loadNodeConfig,
  renderConfigFile,
  saveGenesis,
  type TomlInput,
} from "../../../src/config/index.js";
import { freePorts } from "../../integration/testnetHarness.js";
import { Links } from "./links.js";
import type { Manifest } from "./manifest.js";
import type { NodeSpec } from "./nodeProcess.js";

export const E2E_CHAIN_ID = "cometh-e2e";

const FILE_OF = new Map(
  listSettings().map((e) => [e.tableName === "" ? e.setting.key : `${e.tableName}.${e.setting.key}`, e.file]),
);

/** A TOML file's values by "table.key" (one level of tables, as config.toml and app.toml have). */
function flatten(path: string): Record<string, TomlInput> {
  const out: Record<string, TomlInput> = {};
  const doc = parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  for (const [k, v] of Object.entries(doc)) {
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(v)) out[`${k}.${k2}`] = v2 as TomlInput;
    } else {
      out[k] = v as TomlInput;
    }
  }
  return out;
}

/** Writes `overrides` ("table.key" → value) into the home's config.toml and app.toml, then loads them. */
export function writeOverrides(home: string, overrides: Record<string, TomlInput>): void {
  for (const file of ["config.toml", "app.toml"] as const) {
    const path = join(home, CONFIG_FILE_PATHS[file]);
    const values = flatten(path);
    for (const [k, v] of Object.entries(overrides)) if (FILE_OF.get(k) === file) values[k] = v;
    writeFileSync(path, renderConfigFile(file, values));
  }
  // Throws a ConfigError naming the file and key if an override does not load.
  loadNodeConfig(home);
}

/**
 * Turns state sync on in a home that has not started yet (CometBFT's e2e runner does the same when
 * the node starts): the RPC servers of running nodes, and a trusted height and its block hash.
 */
export function writeStateSyncConfig(
  home: string,
  trust: { rpcServers: readonly string[]; height: number; hash: string },
): void {
  writeOverrides(home, {
    "statesync.enable": true,
    "statesync.rpc_servers": trust.rpcServers.join(","),
    "statesync.trust_height": trust.height,
    "statesync.trust_hash": trust.hash,
  });
}

export interface WrittenNetwork {
  specs: NodeSpec[];
  links: Links;
}

/** Writes every home under `dir` (validators first, in manifest order) and starts the link proxies. */
export async function writeNetwork(m: Manifest, dir: string): Promise<WrittenNetwork> {
  const ordered = [...m.nodes.filter((n) => n.mode === "validator"), ...m.nodes.filter((n) => n.mode === "full")];
  const validators = ordered.filter((n) => n.mode === "validator").length;
  // The proxies bind their ports first, so that the node ports found free next cannot be theirs.
  const p2pByName = new Map<string, number>();
  const links = await Links.create(
    ordered.map((n) => n.name),
    (name) => p2pByName.get(name) as number,
  );
  const ports = await freePorts(ordered.length * 4);
  const homesDir = join(dir, "homes");
  const logsDir = join(dir, "logs");
  mkdirSync(logsDir, { recursive: true });
  const result = await createTestnet({
    outputDir: homesDir,
    validators,
    nonValidators: ordered.length - validators,
    chainId: E2E_CHAIN_ID,
    proxyApp: m.app,
    populatePersistentPeers: false,
    ports: (i) => ({
      p2p: ports[i * 4] as number,
      rpc: ports[i * 4 + 1] as number,
      jsonRpc: ports[i * 4 + 2] as number,
      jsonRpcWs: ports[i * 4 + 3] as number,
    }),
    config: { log_level: m.logLevel, "rpc.unsafe": true, "p2p.pex": false },
  });
  const specs: NodeSpec[] = result.nodes.map((tn, i) => {
    const mn = ordered[i];
    if (mn === undefined) throw new Error("createTestnet wrote more nodes than asked");
    const home = join(homesDir, mn.name);
    renameSync(tn.home, home);
    p2pByName.set(mn.name, tn.p2pPort);
    let address = "";
    if (tn.isValidator) {
      const key = JSON.parse(readFileSync(join(home, "config", "priv_validator_key.json"), "utf8")) as {
        address: string;
      };
      address = key.address.toUpperCase();
    }
    return {
      name: mn.name,
      home,
      isValidator: tn.isValidator,
      power: mn.power,
      nodeId: tn.nodeId,
      address,
      p2pPort: tn.p2pPort,
      rpcPort: tn.rpcPort,
      jsonRpcPort: tn.jsonRpcPort,
      logPath: join(logsDir, `${mn.name}.log`),
    };
  });
  for (const [i, spec] of specs.entries()) {
    const mn = ordered[i];
    if (mn === undefined) continue;
    const overrides: Record<string, TomlInput> = {
      ...m.config,
      ...mn.config,
      moniker: spec.name,
      "p2p.external_address": `127.0.0.1:${links.refusingPort}`,
      "p2p.persistent_peers": specs
        .filter((o) => o !== spec)
        .map((o) => `${o.nodeId}@127.0.0.1:${links.port(spec.name, o.name)}`)
        .join(","),
    };
    writeOverrides(spec.home, overrides);
  }
  // Voting powers: createTestnet gives every validator the same; the manifest sets each.
  const genesisPath = (s: NodeSpec) => join(s.home, "config", "genesis.json");
  const first = specs[0] as NodeSpec;
  const genesis = loadGenesis(genesisPath(first));
  genesis.validators = genesis.validators.map((v, i) => ({
    ...v,
    power: BigInt(specs[i]?.power ?? 1),
    name: specs[i]?.name ?? v.name,
  }));
  for (const s of specs) saveGenesis(genesisPath(s), genesis);
  return { specs, links };
}
