import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { FilePV } from "../privval/index.js";
import { defaultConsensusParams, type GenesisDoc } from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { systemClock } from "../util/clock.js";
import { ConfigError } from "./errors.js";
import { loadGenesis, saveGenesis } from "./genesis.js";
import { CONFIG_FILE_PATHS, loadNodeConfig, type NodeConfig } from "./nodeConfig.js";
import { loadOrGenerateNodeKey } from "./nodeKey.js";
import { renderConfigFile } from "./renderConfigFile.js";
import type { TomlInput } from "./setting.js";

/** Environment variable naming the home directory (CometBFT: CMTHOME). */
export const HOME_ENV = "COMETH_HOME";
/** Default home directory name under the user's home (CometBFT: .cometbft). */
export const DEFAULT_HOME_DIR = ".cometh";
/** Voting power of the single validator `init` writes (cmd/cometbft/commands/init.go). */
export const INIT_VALIDATOR_POWER = 10n;

/** The home directory: the --home flag, else $COMETH_HOME, else ~/.cometh. A leading "~/" is expanded. */
export function resolveHome(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen =
    flag !== undefined && flag !== "" ? flag : env[HOME_ENV] ? env[HOME_ENV] : join(homedir(), DEFAULT_HOME_DIR);
  const expanded = chosen === "~" ? homedir() : chosen.startsWith("~/") ? join(homedir(), chosen.slice(2)) : chosen;
  return resolve(expanded);
}

/** True when the home has a config/config.toml (what `start` checks before initialising). */
export function isHomeInitialized(home: string): boolean {
  return existsSync(join(resolve(home), CONFIG_FILE_PATHS["config.toml"]));
}

/** "test-chain-" and 6 random letters or digits, as `cometbft init` names a chain (cmtrand.Str(6)). */
export function randomChainId(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 6; i++) s += chars[randomInt(chars.length)];
  return `test-chain-${s}`;
}

export interface InitHomeOptions {
  chainId?: string;
  moniker?: string;
  /** More config.toml values for a new config file, by `table.key` (testnet ports and peers). */
  config?: Record<string, TomlInput>;
  /** More app.toml values for a new app.toml. */
  appConfig?: Record<string, TomlInput>;
  /** app_state of a new genesis (JSON value; default none). */
  appState?: unknown;
  /** consensus_params.block.max_gas of a new genesis (default -1, unlimited). */
  maxGas?: bigint;
  /** initial_height of a new genesis (default 1): the height of the chain's first block. */
  initialHeight?: number;
  /**
   * false: the keys, the validator state and the genesis are written without fsyncs (still atomic
   * renames), for a home deleted when its process exits (`cometh dev`'s temporary home): each fsync
   * pair cost 10-20 ms of start-up (docs/dev-chain.md "Start-up"). Default true.
   */
  durable?: boolean;
}

export interface InitHomeResult {
  home: string;
  /** The chain id in genesis.json (the existing one when the genesis was kept). */
  chainId: string;
  nodeId: string;
  /** Each file `init` is responsible for, and whether it was written now or already there. */
  files: { path: string; action: "generated" | "found" }[];
}

/**
 * `cometh init`: writes CometBFT's home layout under `home` — config/config.toml, config/app.toml,
 * config/genesis.json (one validator, power 10, default consensus params, genesis_time now),
 * config/node_key.json, config/priv_validator_key.json and data/priv_validator_state.json. Files that
 * already exist are kept (like `cometbft init`), so it can run again safely.
 */
export async function initHome(home: string, opts: InitHomeOptions = {}): Promise<InitHomeResult> {
  const absHome = resolve(home);
  const durable = opts.durable !== false;
  const files: InitHomeResult["files"] = [];
  for (const dir of [absHome, join(absHome, "config"), join(absHome, "data")])
    mkdirSync(dir, { recursive: true, mode: 0o700 });

  const configPath = join(absHome, CONFIG_FILE_PATHS["config.toml"]);
  if (existsSync(configPath)) {
    files.push({ path: configPath, action: "found" });
  } else {
    writeFileSync(
      configPath,
      renderConfigFile("config.toml", {
        ...(opts.config ?? {}),
        ...(opts.moniker !== undefined ? { moniker: opts.moniker } : {}),
      }),
      {
        mode: 0o644,
      },
    );
    files.push({ path: configPath, action: "generated" });
  }
  const appPath = join(absHome, CONFIG_FILE_PATHS["app.toml"]);
  if (existsSync(appPath)) {
    files.push({ path: appPath, action: "found" });
  } else {
    writeFileSync(appPath, renderConfigFile("app.toml", opts.appConfig ?? {}), { mode: 0o644 });
    files.push({ path: appPath, action: "generated" });
  }

  // The key and genesis paths may have been moved in an existing config.toml.
  const config = loadNodeConfig(absHome);
  const { privValidatorKeyFile: keyPath, privValidatorStateFile: statePath, nodeKeyFile, genesisFile } = config.base;
  for (const p of [keyPath, statePath, nodeKeyFile, genesisFile])
    mkdirSync(dirname(p), { recursive: true, mode: 0o700 });

  let pv: FilePV;
  if (existsSync(keyPath)) {
    pv = await FilePV.load(keyPath, statePath);
    files.push({ path: keyPath, action: "found" }, { path: statePath, action: "found" });
  } else {
    pv = await FilePV.generate(keyPath, statePath, undefined, { durable });
    files.push({ path: keyPath, action: "generated" }, { path: statePath, action: "generated" });
  }

  const nodeKey = await loadOrGenerateNodeKey(nodeKeyFile, { durable });
  files.push({ path: nodeKeyFile, action: nodeKey.generated ? "generated" : "found" });

  let chainId: string;
  if (existsSync(genesisFile)) {
    chainId = loadGenesis(genesisFile).chainId;
    files.push({ path: genesisFile, action: "found" });
  } else {
    chainId = opts.chainId ?? randomChainId();
    const doc: GenesisDoc = {
      genesisTime: systemClock.nowNs(),
      chainId,
      initialHeight: opts.initialHeight ?? 1,
      consensusParams: defaultConsensusParams(),
      validators: [{ address: pv.address(), pubKey: pv.pubKey(), power: INIT_VALIDATOR_POWER, name: "" }],
      appHash: EMPTY_BYTES,
      appState: opts.appState ?? "",
    };
    if (opts.maxGas !== undefined) doc.consensusParams.block.maxGas = opts.maxGas;
    saveGenesis(genesisFile, doc, { durable });
    files.push({ path: genesisFile, action: "generated" });
  }

  return { home: absHome, chainId, nodeId: nodeKey.id, files };
}

export interface ResetHomeResult {
  removed: string[];
  /** The priv_validator_state.json that now says height 0. */
  privValidatorStateFile: string;
}

/**
 * `cometh unsafe-reset-all`: deletes the chain data (db_dir with every store and the consensus WAL,
 * and the address book unless keepAddrBook), recreates db_dir and resets priv_validator_state.json to
 * height 0 keeping the key (cmd/cometbft/commands/reset.go resetAll).
 */
export async function resetHome(config: NodeConfig, opts: { keepAddrBook?: boolean } = {}): Promise<ResetHomeResult> {
  const { dbDir, privValidatorKeyFile, privValidatorStateFile } = config.base;
  const guarded = [config.home, config.files.config, config.files.app, privValidatorKeyFile, config.base.genesisFile];
  for (const p of guarded) {
    if (isWithin(p, dbDir)) {
      throw new ConfigError(
        config.files.config,
        "db_dir",
        `(${dbDir}) contains ${p}; unsafe-reset-all would delete it. Point db_dir at a directory of its own such as "data"`,
      );
    }
  }
  const removed: string[] = [];
  if (!opts.keepAddrBook && existsSync(config.p2p.addrBookFile)) {
    rmSync(config.p2p.addrBookFile, { force: true });
    removed.push(config.p2p.addrBookFile);
  }
  if (existsSync(dbDir)) {
    rmSync(dbDir, { recursive: true, force: true });
    removed.push(dbDir);
  }
  const wal = config.consensus.walPath;
  if (!isWithin(wal, dbDir) && existsSync(wal)) {
    rmSync(wal, { force: true });
    removed.push(wal);
  }
  mkdirSync(dbDir, { recursive: true, mode: 0o700 });
  mkdirSync(dirname(privValidatorStateFile), { recursive: true, mode: 0o700 });
  await FilePV.resetState(privValidatorKeyFile, privValidatorStateFile);
  return { removed, privValidatorStateFile };
}

/** True when `p` is `dir` or lies inside it. */
function isWithin(p: string, dir: string): boolean {
  const rel = relative(dir, p);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}
