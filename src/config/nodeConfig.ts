import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { ConfigError } from "./errors.js";
import { type LogLevels, parseLogLevel } from "./logLevel.js";
import { flagToRaw, quoteList, type Setting, SettingValueError } from "./setting.js";
import {
  type ConfigFileName,
  listSettings,
  SETTINGS,
  type SettingEntry,
  type SettingsTable,
  type SettingsTableName,
  type TableValues,
} from "./settingsTable.js";

export type BaseConfig = TableValues<"base"> & {
  /** log_level parsed: default level plus per-module levels. */
  logLevels: LogLevels;
};
export type RpcConfig = TableValues<"rpc">;
export type P2PConfig = TableValues<"p2p">;
export type MempoolConfig = TableValues<"mempool">;
export type StateSyncConfig = TableValues<"stateSync">;
export type BlockSyncConfig = TableValues<"blockSync">;
export type ConsensusConfig = TableValues<"consensus">;
export type StorageConfig = TableValues<"storage">;
export type TxIndexConfig = TableValues<"txIndex">;
export type InstrumentationConfig = TableValues<"instrumentation">;
export type AppBaseConfig = TableValues<"appBase">;
export type AppStateSyncConfig = TableValues<"appStateSync">;
export type JsonRpcConfig = TableValues<"jsonRpc">;
export type EvmConfig = TableValues<"evm">;

/**
 * The node's settings after defaults, config/config.toml, config/app.toml and flags (in that order of
 * precedence, flags last). Durations are milliseconds (fields end in `Ms`), paths are absolute.
 */
export interface NodeConfig {
  /** Absolute home directory. */
  home: string;
  /** Absolute paths of the two files (they need not exist). */
  files: { config: string; app: string };
  /** Unknown keys and tables that were ignored (CometBFT ignores them too); the CLI logs them. */
  warnings: string[];
  base: BaseConfig;
  rpc: RpcConfig;
  p2p: P2PConfig;
  mempool: MempoolConfig;
  stateSync: StateSyncConfig;
  blockSync: BlockSyncConfig;
  consensus: ConsensusConfig;
  storage: StorageConfig;
  txIndex: TxIndexConfig;
  instrumentation: InstrumentationConfig;
  /** app.toml top-level keys (pruning). */
  appBase: AppBaseConfig;
  /** app.toml [state-sync]: the app's snapshots (docs/state-sync.md). */
  appStateSync: AppStateSyncConfig;
  jsonRpc: JsonRpcConfig;
  evm: EvmConfig;
}

/** Values given on the command line, keyed by flag name with or without "--" ("rpc.laddr", "--moniker"). */
export type ConfigOverrides = Record<string, string | boolean>;

export const CONFIG_FILE_PATHS: Record<ConfigFileName, string> = {
  "config.toml": join("config", "config.toml"),
  "app.toml": join("config", "app.toml"),
};

/** Flag spelling without "--", with "-" and "_" folded, so --p2p.external-address finds external_address. */
export function normalizeFlagName(flag: string): string {
  return flag.replace(/^--/, "").replaceAll("-", "_");
}

let flagIndex: Map<string, SettingEntry> | undefined;
function settingByFlag(flag: string): SettingEntry | undefined {
  if (flagIndex === undefined) {
    flagIndex = new Map();
    for (const e of listSettings()) if (e.flag !== undefined) flagIndex.set(normalizeFlagName(e.flag), e);
  }
  return flagIndex.get(normalizeFlagName(flag));
}

/**
 * Reads config/config.toml and config/app.toml under `home` (missing files mean all defaults), applies
 * `overrides` (command-line flags) and validates everything. Throws ConfigError naming the file or flag,
 * the key and the valid values. Unknown keys are not errors (CometBFT ignores them); they are listed in
 * `warnings`.
 */
export function loadNodeConfig(home: string, overrides: ConfigOverrides = {}): NodeConfig {
  const absHome = resolve(home);
  const files = {
    config: join(absHome, CONFIG_FILE_PATHS["config.toml"]),
    app: join(absHome, CONFIG_FILE_PATHS["app.toml"]),
  };
  const warnings: string[] = [];
  const docs: Record<ConfigFileName, Record<string, unknown>> = {
    "config.toml": readToml(files.config),
    "app.toml": readToml(files.app),
  };
  const fileOf = (f: ConfigFileName) => (f === "config.toml" ? files.config : files.app);

  const flagValues = new Map<string, { flag: string; value: string | boolean }>();
  for (const [flag, value] of Object.entries(overrides)) {
    const entry = settingByFlag(flag);
    if (entry === undefined || entry.flag === undefined) {
      throw new ConfigError(
        `flag --${flag.replace(/^--/, "")}`,
        undefined,
        'is not a setting. Run "cometh start --help" for the list of flags',
      );
    }
    flagValues.set(`${entry.table}.${entry.field}`, { flag: entry.flag, value });
  }

  const out: Record<string, Record<string, unknown>> = {};
  for (const [tableKey, t] of Object.entries(SETTINGS) as [SettingsTableName, SettingsTable][]) {
    const tableObj = tableOf(docs[t.file], t, fileOf(t.file));
    const values: Record<string, unknown> = {};
    for (const [field, setting] of Object.entries(t.settings)) {
      const display = t.name === "" ? setting.key : `[${t.name}] ${setting.key}`;
      const fromFlag = flagValues.get(`${tableKey}.${field}`);
      let value: unknown;
      if (fromFlag !== undefined) {
        const source = `flag ${fromFlag.flag}`;
        value = parseWith(setting, source, undefined, () => flagToRaw(setting, fromFlag.value));
      } else {
        const raw = fileValue(tableObj, setting, fileOf(t.file), display, warnings);
        value = parseWith(setting, fileOf(t.file), display, () => (raw === undefined ? setting.default : raw));
      }
      values[field] = setting.resolve ? setting.resolve(value as never, absHome) : value;
    }
    out[tableKey] = values;
  }

  collectUnknownKeys(docs, files, warnings);

  const base = out.base as TableValues<"base">;
  const logLevels = parseLogLevel(base.logLevel);
  const config: NodeConfig = {
    home: absHome,
    files,
    warnings,
    base: { ...base, logLevels: typeof logLevels === "string" ? { default: "info", modules: {} } : logLevels },
    rpc: out.rpc as RpcConfig,
    p2p: out.p2p as P2PConfig,
    mempool: out.mempool as MempoolConfig,
    stateSync: out.stateSync as StateSyncConfig,
    blockSync: out.blockSync as BlockSyncConfig,
    consensus: out.consensus as ConsensusConfig,
    storage: out.storage as StorageConfig,
    txIndex: out.txIndex as TxIndexConfig,
    instrumentation: out.instrumentation as InstrumentationConfig,
    appBase: out.appBase as AppBaseConfig,
    appStateSync: out.appStateSync as AppStateSyncConfig,
    jsonRpc: out.jsonRpc as JsonRpcConfig,
    evm: out.evm as EvmConfig,
  };
  validateCrossSettings(config, overrides);
  return config;
}

function parseWith(
  setting: Setting<unknown>,
  source: string,
  display: string | undefined,
  raw: () => unknown,
): unknown {
  try {
    return setting.parse(raw());
  } catch (err) {
    if (err instanceof SettingValueError) throw new ConfigError(source, display, err.message, { cause: err });
    throw err;
  }
}

function readToml(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(file, undefined, `cannot be read: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseToml(text, { integersAsBigInt: "asNeeded", unsafeKeyBehaviour: "throw" }) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const first = err.message.split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? err.message;
      throw new ConfigError(file, undefined, `is not valid TOML: ${first} at line ${err.line}, column ${err.column}`, {
        cause: err,
      });
    }
    throw new ConfigError(file, undefined, `is not valid TOML: ${(err as Error).message}`, { cause: err });
  }
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function tableOf(doc: Record<string, unknown>, t: SettingsTable, file: string): Record<string, unknown> {
  if (t.name === "") return doc;
  const v = doc[t.name];
  if (v === undefined) return {};
  if (!isTable(v)) throw new ConfigError(file, t.name, `must be a table ([${t.name}])`);
  return v;
}

function fileValue(
  tableObj: Record<string, unknown>,
  setting: Setting<unknown>,
  file: string,
  display: string,
  warnings: string[],
): unknown {
  const present = [setting.key, ...setting.aliases].filter((k) => tableObj[k] !== undefined);
  const [first, ...rest] = present;
  if (first === undefined) return undefined;
  for (const other of rest) {
    if (!sameRaw(tableObj[first], tableObj[other])) {
      throw new ConfigError(
        file,
        display,
        `is also set as "${other}" with a different value; set only one of ${quoteList([setting.key, ...setting.aliases])}`,
      );
    }
    warnings.push(`${file}: ${display} is set twice (also as "${other}")`);
  }
  return tableObj[first];
}

function sameRaw(a: unknown, b: unknown): boolean {
  return (
    JSON.stringify(a, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ===
    JSON.stringify(b, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))
  );
}

function collectUnknownKeys(
  docs: Record<ConfigFileName, Record<string, unknown>>,
  files: { config: string; app: string },
  warnings: string[],
): void {
  for (const file of ["config.toml", "app.toml"] as const) {
    const path = file === "config.toml" ? files.config : files.app;
    const tables = Object.values(SETTINGS as Record<string, SettingsTable>).filter((t) => t.file === file);
    const known = new Map(tables.map((t) => [t.name, t]));
    const doc = docs[file];
    for (const [k, v] of Object.entries(doc)) {
      const t = known.get(k);
      if (t !== undefined && t.name !== "") {
        const keys = new Set(Object.values(t.settings).flatMap((s) => [s.key, ...s.aliases]));
        if (isTable(v)) {
          for (const sub of Object.keys(v)) {
            if (!keys.has(sub)) warnings.push(`${path}: unknown key [${k}] ${sub} is ignored`);
          }
        }
        continue;
      }
      const baseKeys = new Set(Object.values(known.get("")?.settings ?? {}).flatMap((s) => [s.key, ...s.aliases]));
      if (baseKeys.has(k)) continue;
      warnings.push(isTable(v) ? `${path}: unknown table [${k}] is ignored` : `${path}: unknown key ${k} is ignored`);
    }
  }
}

/** Checks that involve more than one setting (CometBFT Config.ValidateBasic and node startup). */
function validateCrossSettings(c: NodeConfig, overrides: ConfigOverrides): void {
  const where = (file: string, flag: string) =>
    Object.keys(overrides).some((k) => normalizeFlagName(k) === normalizeFlagName(flag)) ? `flag ${flag}` : file;
  if (c.rpc.experimentalWebsocketWriteBufferSize < c.rpc.experimentalSubscriptionBufferSize) {
    throw new ConfigError(
      where(c.files.config, "--rpc.experimental_websocket_write_buffer_size"),
      "[rpc] experimental_websocket_write_buffer_size",
      `(${c.rpc.experimentalWebsocketWriteBufferSize}) must be >= experimental_subscription_buffer_size (${c.rpc.experimentalSubscriptionBufferSize})`,
    );
  }
  if (c.mempool.type === "nop" && !c.consensus.createEmptyBlocks) {
    throw new ConfigError(
      where(c.files.config, "--mempool.type"),
      "[mempool] type",
      '"nop" does not support create_empty_blocks = false; use type = "flood" or create_empty_blocks = true',
    );
  }
  if (c.txIndex.indexer === "psql" && c.txIndex.psqlConn === "") {
    throw new ConfigError(
      where(c.files.config, "--tx_index.psql-conn"),
      "[tx_index] psql-conn",
      'must be set when indexer = "psql" (postgresql://<user>:<password>@<host>:<port>/<db>?<opts>)',
    );
  }
  if (c.stateSync.enable) validateStateSync(c, where);
  if (c.appBase.pruning === "custom" && c.appBase.pruningKeepRecent < 2) {
    throw new ConfigError(
      where(c.files.app, "--pruning-keep-recent"),
      "pruning-keep-recent",
      `(${c.appBase.pruningKeepRecent}) must be at least 2 when pruning = "custom"`,
    );
  }
  if (c.jsonRpc.enable && c.jsonRpc.api.length === 0) {
    throw new ConfigError(
      where(c.files.app, "--json-rpc.api"),
      "[json-rpc] api",
      'must name at least one namespace when enable = true, such as "eth,net,web3"',
    );
  }
}

/** config.go StateSyncConfig.ValidateBasic, for an enabled state sync. */
function validateStateSync(c: NodeConfig, where: (file: string, flag: string) => string): void {
  const s = c.stateSync;
  const at = (flag: string) => where(c.files.config, flag);
  const servers = s.rpcServers
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
  if (servers.length < 2) {
    throw new ConfigError(
      at("--statesync.rpc_servers"),
      "[statesync] rpc_servers",
      'at least two rpc_servers entries are required (comma-separated, such as "http://10.0.0.1:26657,http://10.0.0.2:26657")',
    );
  }
  if (s.trustPeriodMs <= 0) {
    throw new ConfigError(at("--statesync.trust_period"), "[statesync] trust_period", "must be greater than 0");
  }
  if (s.trustHeight <= 0) {
    throw new ConfigError(
      at("--statesync.trust_height"),
      "[statesync] trust_height",
      "must be a height greater than 0",
    );
  }
  if (!/^[0-9a-fA-F]{64}$/.test(s.trustHash)) {
    throw new ConfigError(
      at("--statesync.trust_hash"),
      "[statesync] trust_hash",
      `"${s.trustHash}" is not a 32-byte hex block hash (take it from a trusted node's /block?height=<trust_height>)`,
    );
  }
  // CometBFT refuses below 5 s; 1 s lets a loopback network (the state sync tests) discover faster
  // (docs/compatibility.md, "State sync").
  if (s.discoveryTimeMs !== 0 && s.discoveryTimeMs < 1000) {
    throw new ConfigError(at("--statesync.discovery_time"), "[statesync] discovery_time", "must be 0 or at least 1s");
  }
  if (s.chunkRequestTimeoutMs < 5000) {
    throw new ConfigError(
      at("--statesync.chunk_request_timeout"),
      "[statesync] chunk_request_timeout",
      "must be at least 5s",
    );
  }
  if (s.chunkFetchers <= 0) {
    throw new ConfigError(at("--statesync.chunk_fetchers"), "[statesync] chunk_fetchers", "must be at least 1");
  }
}
