// The e2e manifest: a TOML file describing a network (validators with power, full nodes), the app,
// config.toml/app.toml overrides, perturbations per node and partitions, and a tx load. The parser
// checks every key and value and names the bad one in its error ("node.validator01.perturb[1].kind").
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parse, TomlDate, TomlError } from "smol-toml";
import { listSettings, parseGoDuration, type TomlInput } from "../../../src/config/index.js";

export type AppName = "evm" | "kvstore";
export type NodeMode = "validator" | "full";
export type PerturbationKind = "kill" | "restart" | "pause" | "disconnect" | "join" | "corrupt_snapshot" | "set_power";
export const PERTURBATION_KINDS: readonly PerturbationKind[] = [
  "kill",
  "restart",
  "pause",
  "disconnect",
  "join",
  "corrupt_snapshot",
  "set_power",
];

/** When something happens: at a height (observed on any node) or after a time since the network started. */
export type Trigger = { readonly height: number } | { readonly timeMs: number };
/** Spacing of repeats: a number of heights or a time. */
export type Every = { readonly heights: number } | { readonly ms: number };

export interface Perturbation {
  readonly kind: PerturbationKind;
  readonly at: Trigger;
  /** pause/disconnect: how long; kill/restart: how long the node stays down before it starts again. */
  readonly durationMs: number;
  /** How many times (default 1). */
  readonly repeat: number;
  /** Between two repeats (required when repeat > 1); a repeat never starts before the previous one ended. */
  readonly every: Every | undefined;
  /** set_power: the validator's new voting power (a kvstore `val=` tx). */
  readonly power?: number;
  /** "node.validator01.perturb[0]", for messages. */
  readonly key: string;
}

export interface ManifestNode {
  readonly name: string;
  readonly mode: NodeMode;
  /** Voting power (validators only). */
  readonly power: number;
  /** config.toml/app.toml keys for this node only, by "table.key". */
  readonly config: Readonly<Record<string, TomlInput>>;
  readonly perturb: readonly Perturbation[];
  /** Whether the tx load sends to this node (default true). */
  readonly load: boolean;
  /**
   * Joins by state sync (`state_sync = true`, only with a first `join`): the runner enables
   * [statesync] and, when the node joins, fills rpc_servers, trust_height and trust_hash from the
   * running nodes. `expect` is what the run must show: a restored snapshot, or (no peer serves one)
   * the "no snapshot" message and block sync from genesis.
   */
  readonly stateSync: { readonly expect: StateSyncExpect } | undefined;
}

export type StateSyncExpect = "restore" | "fallback";

export interface Partition {
  readonly groups: readonly (readonly string[])[];
  readonly at: Trigger;
  readonly durationMs: number;
  readonly key: string;
}

export interface LoadSpec {
  /** Transactions per second, over the whole network. */
  readonly rate: number;
  /** evm: share of contract calls (ERC-20 transfer/approve) among the txs, the rest are ETH transfers. */
  readonly contractShare: number;
  /** evm: unmined txs per sender account at most. */
  readonly inflightPerAccount: number;
  /** A tx not mined this long after its last submission is sent again, to another node. */
  readonly resendAfterMs: number;
  /** How long the runner waits at the end for every accepted tx to be mined (resending them). */
  readonly drainMs: number;
}

export interface Manifest {
  readonly name: string;
  readonly app: AppName;
  /** The runner waits for this height (and for every perturbation to end), then checks. */
  readonly targetHeight: number;
  /** The whole run (setup, perturbations, drain, checks) must fit; the runner stops at it. */
  readonly deadlineMs: number;
  /** Seeds the load's and the runner's random choices. */
  readonly seed: number;
  readonly logLevel: string;
  /** config.toml/app.toml keys for every node, by "table.key". */
  readonly config: Readonly<Record<string, TomlInput>>;
  readonly nodes: readonly ManifestNode[];
  readonly partitions: readonly Partition[];
  readonly load: LoadSpec | undefined;
}

/** A problem in a manifest: `key` is the dotted path of the bad key ("node.v1.perturb[0].kind"). */
export class ManifestError extends Error {
  readonly key: string;
  constructor(source: string, key: string, problem: string) {
    super(key === "" ? `${source}: ${problem}` : `${source}: ${key}: ${problem}`);
    this.name = "ManifestError";
    this.key = key;
  }
}

/** Keys the runner writes itself (ports, peers through its proxies, the app); a manifest may not set them. */
const RUNNER_OWNED = new Set([
  "proxy_app",
  "moniker",
  "p2p.laddr",
  "p2p.external_address",
  "p2p.persistent_peers",
  "p2p.seeds",
  "p2p.pex",
  "rpc.laddr",
  "json-rpc.address",
  "json-rpc.ws-address",
  "json-rpc.enable",
  "statesync.enable",
  "statesync.rpc_servers",
  "statesync.trust_height",
  "statesync.trust_hash",
]);

const TOP_KEYS = [
  "name",
  "app",
  "target_height",
  "deadline",
  "seed",
  "log_level",
  "config",
  "load",
  "node",
  "partition",
];
const NODE_KEYS = ["mode", "power", "config", "perturb", "load", "state_sync", "state_sync_expect"];
const PERTURB_KEYS = ["kind", "height", "time", "duration", "down", "repeat", "every", "power"];
const PARTITION_KEYS = ["groups", "height", "time", "duration"];
const LOAD_KEYS = ["rate", "contract_share", "inflight_per_account", "resend_after", "drain"];
const NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;

type Table = Record<string, unknown>;

function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof TomlDate);
}

class Reader {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }

  fail(key: string, problem: string): never {
    throw new ManifestError(this.source, key, problem);
  }

  unknownKeys(t: Table, known: readonly string[], prefix: string): void {
    for (const k of Object.keys(t)) {
      if (!known.includes(k)) this.fail(join(prefix, k), `unknown key (known: ${known.join(", ")})`);
    }
  }

  table(v: unknown, key: string): Table {
    if (!isTable(v)) this.fail(key, `must be a table; got ${describe(v)}`);
    return v;
  }

  int(v: unknown, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const n = typeof v === "bigint" ? Number(v) : v;
    if (typeof n !== "number" || !Number.isInteger(n)) this.fail(key, `must be a whole number; got ${describe(v)}`);
    if (n < min || n > max) this.fail(key, `must be between ${min} and ${max}; got ${n}`);
    return n;
  }

  num(v: unknown, key: string, min: number, max: number): number {
    const n = typeof v === "bigint" ? Number(v) : v;
    if (typeof n !== "number" || !Number.isFinite(n)) this.fail(key, `must be a number; got ${describe(v)}`);
    if (n < min || n > max) this.fail(key, `must be between ${min} and ${max}; got ${n}`);
    return n;
  }

  str(v: unknown, key: string): string {
    if (typeof v !== "string") this.fail(key, `must be a string; got ${describe(v)}`);
    return v;
  }

  oneOf<T extends string>(v: unknown, key: string, values: readonly T[]): T {
    const s = this.str(v, key);
    if (!(values as readonly string[]).includes(s)) {
      this.fail(key, `must be one of ${values.map((x) => `"${x}"`).join(", ")}; got "${s}"`);
    }
    return s as T;
  }

  /** A Go duration string ("500ms", "3s", "1m30s") or a number of seconds. */
  duration(v: unknown, key: string, allowZero = false): number {
    let ms: number;
    if (typeof v === "number" || typeof v === "bigint") {
      ms = Number(v) * 1000;
    } else if (typeof v === "string") {
      const ns = parseGoDuration(v);
      if (ns === undefined) this.fail(key, `must be a duration like "500ms", "3s" or "1m30s"; got "${v}"`);
      ms = Number(ns / 1_000n) / 1000;
    } else {
      this.fail(key, `must be a duration like "3s" (or a number of seconds); got ${describe(v)}`);
    }
    if (!Number.isFinite(ms) || ms < 0 || (!allowZero && ms === 0)) {
      this.fail(key, `must be ${allowZero ? "zero or more" : "more than zero"}; got ${describe(v)}`);
    }
    return ms;
  }

  trigger(t: Table, key: string): Trigger {
    const hasHeight = t.height !== undefined;
    const hasTime = t.time !== undefined;
    if (hasHeight === hasTime) this.fail(key, `needs exactly one of "height" (a block height) or "time" (e.g. "30s")`);
    return hasHeight
      ? { height: this.int(t.height, join(key, "height"), 1) }
      : { timeMs: this.duration(t.time, join(key, "time"), true) };
  }

  /** Flattens `{ consensus = { timeout_commit = "1s" } }` and `{ "consensus.timeout_commit" = "1s" }`. */
  config(v: unknown, key: string): Record<string, TomlInput> {
    const out: Record<string, TomlInput> = {};
    const walk = (t: Table, prefix: string) => {
      for (const [k, val] of Object.entries(t)) {
        const dotted = prefix === "" ? k : `${prefix}.${k}`;
        if (isTable(val)) walk(val, dotted);
        else out[dotted] = this.setting(dotted, val, join(key, dotted));
      }
    };
    walk(this.table(v, key), "");
    return out;
  }

  setting(dotted: string, raw: unknown, key: string): TomlInput {
    if (RUNNER_OWNED.has(dotted)) this.fail(key, "is set by the e2e runner (ports, peers, app); remove it");
    const entry = SETTINGS_BY_KEY.get(dotted);
    if (entry === undefined) this.fail(key, "is not a config.toml or app.toml key (written as table.key)");
    try {
      entry.setting.parse(raw);
    } catch (err) {
      this.fail(key, (err as Error).message);
    }
    if (typeof raw === "bigint") return raw;
    if (Array.isArray(raw)) return raw.map(String);
    return raw as TomlInput;
  }
}

const SETTINGS_BY_KEY = new Map(
  listSettings().map((e) => [e.tableName === "" ? e.setting.key : `${e.tableName}.${e.setting.key}`, e]),
);

function join(prefix: string, key: string): string {
  const part = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
  return prefix === "" ? part : `${prefix}.${part}`;
}

function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return "an array";
  if (v instanceof Date || v instanceof TomlDate) return "a date";
  if (isTable(v)) return "a table";
  return String(v);
}

function readPerturbation(r: Reader, v: unknown, key: string): Perturbation {
  const t = r.table(v, key);
  r.unknownKeys(t, PERTURB_KEYS, key);
  if (t.kind === undefined) r.fail(join(key, "kind"), `is required (${PERTURBATION_KINDS.join(", ")})`);
  const kind = r.oneOf(t.kind, join(key, "kind"), PERTURBATION_KINDS);
  const at = r.trigger(t, key);
  let durationMs = 0;
  if (kind === "pause" || kind === "disconnect") {
    if (t.duration === undefined) r.fail(join(key, "duration"), `is required for "${kind}" (e.g. "5s")`);
    if (t.down !== undefined) r.fail(join(key, "down"), `applies to "kill" and "restart" only`);
    durationMs = r.duration(t.duration, join(key, "duration"));
  } else {
    if (t.duration !== undefined) {
      r.fail(
        join(key, "duration"),
        `applies to "pause" and "disconnect"; "${kind}" takes "down" (time before it starts)`,
      );
    }
    if (t.down !== undefined) {
      if (kind === "join" || kind === "corrupt_snapshot" || kind === "set_power")
        r.fail(join(key, "down"), `applies to "kill" and "restart" only`);
      durationMs = r.duration(t.down, join(key, "down"), true);
    }
  }
  const repeat = t.repeat === undefined ? 1 : r.int(t.repeat, join(key, "repeat"), 1, 10_000);
  let every: Every | undefined;
  if (t.every !== undefined) {
    const ek = join(key, "every");
    if (typeof t.every === "string") every = { ms: r.duration(t.every, ek) };
    else every = { heights: r.int(t.every, ek, 1) };
  }
  if (repeat > 1 && every === undefined)
    r.fail(join(key, "every"), `is required when repeat > 1 (e.g. "4s" or 3 heights)`);
  if (kind === "join" && repeat !== 1) r.fail(join(key, "repeat"), `a node joins once`);
  if (kind === "set_power") {
    if (t.power === undefined) r.fail(join(key, "power"), `is required for "set_power" (the new voting power)`);
    return { kind, at, durationMs, repeat, every, key, power: r.int(t.power, join(key, "power"), 1, 1e12) };
  }
  if (t.power !== undefined) r.fail(join(key, "power"), `applies to "set_power" only`);
  return { kind, at, durationMs, repeat, every, key };
}

/** Parses and checks a manifest's TOML text; `source` names it in errors (the file name). */
export function parseManifest(text: string, source = "manifest"): Manifest {
  const r: Reader = new Reader(source);
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    if (err instanceof TomlError) r.fail("", `not valid TOML: ${err.message.split("\n")[0]} (line ${err.line})`);
    throw err;
  }
  r.unknownKeys(doc, TOP_KEYS, "");
  const name = doc.name === undefined ? basename(source).replace(/\.toml$/, "") : r.str(doc.name, "name");
  const app = doc.app === undefined ? "evm" : r.oneOf(doc.app, "app", ["evm", "kvstore"] as const);
  if (doc.target_height === undefined) r.fail("target_height", "is required (the height the runner waits for)");
  const targetHeight = r.int(doc.target_height, "target_height", 2);
  const deadlineMs = doc.deadline === undefined ? 10 * 60_000 : r.duration(doc.deadline, "deadline");
  const seed = doc.seed === undefined ? 1 : r.int(doc.seed, "seed", 0);
  const logLevel = doc.log_level === undefined ? "info" : r.str(doc.log_level, "log_level");
  const config = doc.config === undefined ? {} : r.config(doc.config, "config");
  if (config.log_level !== undefined) r.fail("config.log_level", `use the top-level "log_level"`);

  if (doc.node === undefined) r.fail("node", "is required: at least one [node.NAME] table");
  const nodeTable = r.table(doc.node, "node");
  const nodes: ManifestNode[] = [];
  for (const [nodeName, v] of Object.entries(nodeTable)) {
    const key = join("node", nodeName);
    if (!NAME_RE.test(nodeName))
      r.fail(key, "node names are lowercase letters, digits, _ and - (starting with a letter)");
    const t = r.table(v, key);
    r.unknownKeys(t, NODE_KEYS, key);
    const mode =
      t.mode === undefined ? "validator" : r.oneOf(t.mode, join(key, "mode"), ["validator", "full"] as const);
    if (mode === "full" && t.power !== undefined) r.fail(join(key, "power"), "full nodes have no voting power");
    const power = mode === "full" ? 0 : t.power === undefined ? 10 : r.int(t.power, join(key, "power"), 1, 1e12);
    const nodeConfig = t.config === undefined ? {} : r.config(t.config, join(key, "config"));
    if (nodeConfig.log_level !== undefined) r.fail(join(key, "config.log_level"), `use the top-level "log_level"`);
    const perturb: Perturbation[] = [];
    if (t.perturb !== undefined) {
      if (!Array.isArray(t.perturb)) {
        r.fail(join(key, "perturb"), `must be an array of tables like [{ kind = "kill", height = 10 }]`);
      }
      t.perturb.forEach((p, i) => {
        perturb.push(readPerturbation(r, p, `${join(key, "perturb")}[${i}]`));
      });
    }
    const joins = perturb.filter((p) => p.kind === "join");
    if (joins.length > 1) r.fail(joins[1]?.key ?? key, "a node joins once");
    if (joins.length === 1 && perturb[0]?.kind !== "join")
      r.fail(joins[0]?.key ?? key, `"join" must be the node's first perturbation`);
    const setPower = perturb.find((p) => p.kind === "set_power");
    if (setPower !== undefined && (app !== "kvstore" || mode !== "validator"))
      r.fail(setPower.key, `"set_power" needs app = "kvstore" (its val= tx) and a validator`);
    const load =
      t.load === undefined
        ? true
        : t.load === true || t.load === false
          ? t.load
          : r.fail(join(key, "load"), "must be true or false");
    let stateSync: ManifestNode["stateSync"];
    if (t.state_sync !== undefined && t.state_sync !== true && t.state_sync !== false)
      r.fail(join(key, "state_sync"), "must be true or false");
    if (t.state_sync === true) {
      if (joins.length !== 1) {
        r.fail(
          join(key, "state_sync"),
          `a node that state syncs must start empty after the others: give it perturb = [{ kind = "join", height = N }]`,
        );
      }
      const expect =
        t.state_sync_expect === undefined
          ? "restore"
          : r.oneOf(t.state_sync_expect, join(key, "state_sync_expect"), ["restore", "fallback"] as const);
      stateSync = { expect };
    } else if (t.state_sync_expect !== undefined) {
      r.fail(join(key, "state_sync_expect"), "applies only with state_sync = true");
    }
    nodes.push({ name: nodeName, mode, power, config: nodeConfig, perturb, load, stateSync });
  }
  const validators = nodes.filter((n) => n.mode === "validator");
  if (validators.length === 0) r.fail("node", "needs at least one validator");
  if (validators.every((v) => v.perturb[0]?.kind === "join"))
    r.fail("node", "at least one validator must start at once (not join)");

  const partitions: Partition[] = [];
  if (doc.partition !== undefined) {
    if (!Array.isArray(doc.partition)) r.fail("partition", "must be an array of tables ([[partition]])");
    doc.partition.forEach((p, i) => {
      const key = `partition[${i}]`;
      const t = r.table(p, key);
      r.unknownKeys(t, PARTITION_KEYS, key);
      const gk = join(key, "groups");
      if (!Array.isArray(t.groups) || t.groups.length < 2) r.fail(gk, `must list at least two groups of node names`);
      const seen = new Set<string>();
      const groups = (t.groups as unknown[]).map((g, gi) => {
        if (!Array.isArray(g) || g.length === 0) r.fail(`${gk}[${gi}]`, "must be a non-empty array of node names");
        return g.map((n, ni) => {
          const nk = `${gk}[${gi}][${ni}]`;
          const s = r.str(n, nk);
          if (!nodes.some((x) => x.name === s)) r.fail(nk, `no node named "${s}"`);
          if (seen.has(s)) r.fail(nk, `"${s}" is in two groups`);
          seen.add(s);
          return s;
        });
      });
      for (const n of nodes) if (!seen.has(n.name)) r.fail(gk, `node "${n.name}" is in no group (list every node)`);
      if (t.duration === undefined) r.fail(join(key, "duration"), `is required (e.g. "15s")`);
      partitions.push({
        groups,
        at: r.trigger(t, key),
        durationMs: r.duration(t.duration, join(key, "duration")),
        key,
      });
    });
  }

  let load: LoadSpec | undefined;
  if (doc.load !== undefined) {
    const t = r.table(doc.load, "load");
    r.unknownKeys(t, LOAD_KEYS, "load");
    if (t.rate === undefined) r.fail("load.rate", "is required (transactions per second)");
    if (app === "kvstore" && (t.contract_share !== undefined || t.inflight_per_account !== undefined)) {
      r.fail(
        t.contract_share !== undefined ? "load.contract_share" : "load.inflight_per_account",
        `applies to app = "evm" only`,
      );
    }
    load = {
      rate: r.num(t.rate, "load.rate", 0.1, 1000),
      contractShare: t.contract_share === undefined ? 0.4 : r.num(t.contract_share, "load.contract_share", 0, 1),
      inflightPerAccount:
        t.inflight_per_account === undefined ? 4 : r.int(t.inflight_per_account, "load.inflight_per_account", 1, 64),
      resendAfterMs: t.resend_after === undefined ? 12_000 : r.duration(t.resend_after, "load.resend_after"),
      drainMs: t.drain === undefined ? 60_000 : r.duration(t.drain, "load.drain"),
    };
    if (!nodes.some((n) => n.load)) r.fail("load", "every node has load = false");
  }
  return { name, app, targetHeight, deadlineMs, seed, logLevel, config, nodes, partitions, load };
}

export function loadManifest(path: string): Manifest {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ManifestError(path, "", `cannot read: ${(err as Error).message}`);
  }
  return parseManifest(text, path);
}

/** The same network with no perturbation and no partition (bench:e2e's undisturbed run). */
export function withoutPerturbations(m: Manifest): Manifest {
  return {
    ...m,
    name: `${m.name} (undisturbed)`,
    nodes: m.nodes.map((n) => ({ ...n, perturb: n.perturb.filter((p) => p.kind === "join") })),
    partitions: [],
  };
}
