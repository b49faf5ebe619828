import { ConfigError } from "./errors.js";
import { normalizeFlagName } from "./nodeConfig.js";
import type { Setting, TomlInput } from "./setting.js";
import { type ConfigFileName, listSettings, SETTINGS, type SettingsTable } from "./settingsTable.js";

const CONFIG_HEADER = `# This is a TOML config file.
# For more information, see https://github.com/toml-lang/toml

# NOTE: Any path below can be absolute (e.g. "/var/myawesomeapp/data") or
# relative to the home directory (e.g. "data"). The home directory is
# "$HOME/.cometh" by default, but could be changed via $COMETH_HOME env variable
# or --home cmd flag.
#
# Every key can also be given as a flag of "cometh start": --<table>.<key>
# (e.g. --rpc.laddr, --consensus.timeout_commit), or --<key> for the keys
# above the first table (e.g. --moniker). Flags win over this file.
`;

const APP_HEADER = `# This is a TOML config file.
# For more information, see https://github.com/toml-lang/toml

# Application settings: the EVM JSON-RPC server ([json-rpc]) and the EVM ([evm]).
# Every key can also be given as a flag of "cometh start": --<table>.<key>
# (e.g. --json-rpc.api eth,net,web3). Flags win over this file.
`;

const BANNER_RULE = "#######################################################";

/**
 * Renders config.toml or app.toml from the settings table: every key with its comment and default,
 * like CometBFT's config template. `values` replaces defaults, keyed by flag name ("moniker",
 * "rpc.laddr"), in file form (durations as "3s").
 */
export function renderConfigFile(file: ConfigFileName, values: Record<string, TomlInput> = {}): string {
  const byFlag = new Map<string, TomlInput>();
  const known = new Set(
    listSettings().map((e) =>
      normalizeFlagName(e.tableName === "" ? e.setting.key : `${e.tableName}.${e.setting.key}`),
    ),
  );
  for (const [k, v] of Object.entries(values)) {
    if (!known.has(normalizeFlagName(k))) {
      throw new ConfigError(`renderConfigFile(${file})`, k, "is not a setting");
    }
    byFlag.set(normalizeFlagName(k), v);
  }
  const lines: string[] = [file === "config.toml" ? CONFIG_HEADER : APP_HEADER];
  for (const t of Object.values(SETTINGS as Record<string, SettingsTable>)) {
    if (t.file !== file) continue;
    lines.push(BANNER_RULE, `###${center(t.title, BANNER_RULE.length - 6)}###`, BANNER_RULE);
    if (t.name !== "") lines.push(`[${t.name}]`);
    if (t.doc !== undefined) lines.push(...comment(t.doc));
    for (const s of Object.values(t.settings)) {
      const flag = normalizeFlagName(t.name === "" ? s.key : `${t.name}.${s.key}`);
      const value = byFlag.get(flag) ?? s.default;
      if (s.doc !== "") lines.push("", ...comment(s.doc));
      lines.push(`${s.key} = ${formatTomlValue(s, value)}`);
    }
    lines.push("");
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

function comment(doc: string): string[] {
  return doc.split("\n").map((l) => (l === "" ? "#" : `# ${l}`));
}

function center(title: string, width: number): string {
  const pad = Math.max(0, width - title.length);
  const left = Math.floor(pad / 2);
  return `${" ".repeat(left)}${title}${" ".repeat(pad - left)}`;
}

/** TOML text of a value: basic strings (JSON escapes are valid TOML), arrays, integers, floats with a point. */
export function formatTomlValue(s: Setting<unknown>, v: TomlInput): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (typeof v === "number") return s.kind === "float" && Number.isInteger(v) ? `${v}.0` : String(v);
  return `[${v.map((x) => JSON.stringify(x)).join(", ")}]`;
}
