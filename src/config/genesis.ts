import { readFileSync } from "node:fs";
import { decodePubKeyJson, encodePubKeyJson, writeFileAtomicNoSync, writeFileAtomicSync } from "../privval/index.js";
import {
  addressFromPubKey,
  type ConsensusParams,
  defaultConsensusParams,
  type GenesisDoc,
  type GenesisValidator,
  validateConsensusParams,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper, EMPTY_BYTES, hexToBytes } from "../util/bytes.js";
import { formatRfc3339Nano, GO_ZERO_TIME, parseRfc3339, type Timestamp } from "../util/time.js";
import { GenesisError } from "./errors.js";
import { indentJson, topLevelRawMembers } from "./jsonText.js";

/** types/genesis.go MaxChainIDLen. */
export const MAX_CHAIN_ID_LENGTH = 50;

/**
 * Reads genesis.json (CometBFT's cmtjson format) and validates it like GenesisDoc.ValidateAndComplete:
 * initial_height 0 becomes 1, a missing genesis_time becomes now, missing consensus_params become the
 * defaults and validator addresses are filled in from the keys. Throws GenesisError naming the field.
 */
export function loadGenesis(path: string, now: () => Timestamp = nowNs): GenesisDoc {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new GenesisError(
      path,
      undefined,
      code === "ENOENT"
        ? 'does not exist. Run "cometh init" to create it'
        : `cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return decodeGenesis(text, path, now);
}

/** Parses genesis.json text; `file` is only used in error messages. */
export function decodeGenesis(text: string, file = "genesis.json", now: () => Timestamp = nowNs): GenesisDoc {
  const fail = (field: string | undefined, problem: string): never => {
    throw new GenesisError(file, field, problem);
  };
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new GenesisError(file, undefined, `is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!isObject(obj)) return fail(undefined, "must hold a JSON object");

  let genesisTime: Timestamp;
  if (obj.genesis_time === undefined || obj.genesis_time === null || obj.genesis_time === "") {
    genesisTime = now();
  } else {
    if (typeof obj.genesis_time !== "string") return fail("genesis_time", "must be an RFC3339 time string");
    const t = parseRfc3339(obj.genesis_time);
    if (t === undefined) {
      return fail(
        "genesis_time",
        `must be an RFC3339 time such as "2024-01-02T15:04:05.123456789Z"; got ${JSON.stringify(obj.genesis_time)}`,
      );
    }
    genesisTime = t === GO_ZERO_TIME ? now() : t;
  }

  const chainId = obj.chain_id;
  if (typeof chainId !== "string" || chainId === "") return fail("chain_id", "must be a non-empty string");
  if (chainId.length > MAX_CHAIN_ID_LENGTH) {
    return fail("chain_id", `is too long (max: ${MAX_CHAIN_ID_LENGTH}); got ${chainId.length} characters`);
  }

  let initialHeight = 1;
  if (obj.initial_height !== undefined && obj.initial_height !== null) {
    const h = int64Of(obj.initial_height);
    if (h === undefined)
      return fail("initial_height", `must be an integer string such as "1"; got ${JSON.stringify(obj.initial_height)}`);
    if (h < 0n) return fail("initial_height", `cannot be negative (got ${h})`);
    if (h > BigInt(Number.MAX_SAFE_INTEGER)) return fail("initial_height", `is too large (got ${h})`);
    initialHeight = h === 0n ? 1 : Number(h);
  }

  let consensusParams: ConsensusParams;
  if (obj.consensus_params === undefined || obj.consensus_params === null) {
    consensusParams = defaultConsensusParams();
  } else {
    consensusParams = decodeConsensusParams(obj.consensus_params, fail);
    try {
      validateConsensusParams(consensusParams);
    } catch (err) {
      throw new GenesisError(file, "consensus_params", (err as Error).message, { cause: err });
    }
  }

  const validators: GenesisValidator[] = [];
  if (obj.validators !== undefined && obj.validators !== null) {
    if (!Array.isArray(obj.validators)) return fail("validators", "must be an array");
    obj.validators.forEach((v: unknown, i: number) => {
      validators.push(decodeValidator(v, `validators[${i}]`, fail));
    });
  }

  let appHash = EMPTY_BYTES;
  if (obj.app_hash !== undefined && obj.app_hash !== null && obj.app_hash !== "") {
    const h = typeof obj.app_hash === "string" ? hexToBytes(obj.app_hash) : undefined;
    if (h === undefined || (typeof obj.app_hash === "string" && obj.app_hash.startsWith("0x"))) {
      return fail("app_hash", `must be hex without 0x; got ${JSON.stringify(obj.app_hash)}`);
    }
    appHash = h;
  }

  const raw = topLevelRawMembers(text)?.get("app_state");
  const appState = raw === undefined || raw === "null" ? "" : raw;

  return { genesisTime, chainId, initialHeight, consensusParams, validators, appHash, appState };
}

function decodeValidator(v: unknown, field: string, fail: (field: string, problem: string) => never): GenesisValidator {
  if (!isObject(v)) return fail(field, "must be an object with address, pub_key, power and name");
  const pubKey = decodePubKeyJson(v.pub_key);
  if (typeof pubKey === "string") return fail(`${field}.pub_key`, pubKey);
  const power = int64Of(v.power);
  if (power === undefined)
    return fail(`${field}.power`, `must be an integer string such as "10"; got ${JSON.stringify(v.power)}`);
  if (power <= 0n) {
    return fail(
      `${field}.power`,
      `must be positive: the genesis file cannot contain validators with no voting power (got ${power})`,
    );
  }
  const expected = addressFromPubKey(pubKey);
  let address = expected;
  if (v.address !== undefined && v.address !== null && v.address !== "") {
    const given = typeof v.address === "string" ? hexToBytes(v.address) : undefined;
    if (given === undefined) return fail(`${field}.address`, `must be hex; got ${JSON.stringify(v.address)}`);
    if (!bytesEqual(given, expected)) {
      return fail(`${field}.address`, `is incorrect for this pub_key; should be ${bytesToHexUpper(expected)}`);
    }
    address = given;
  }
  const name = v.name ?? "";
  if (typeof name !== "string") return fail(`${field}.name`, "must be a string");
  return { address, pubKey, power, name };
}

type Fail = (field: string | undefined, problem: string) => never;

function decodeConsensusParams(v: unknown, fail: Fail): ConsensusParams {
  if (!isObject(v)) return fail("consensus_params", "must be an object");
  const sub = (name: string): Record<string, unknown> => {
    const s = v[name];
    if (s === undefined || s === null) return {};
    if (!isObject(s)) return fail(`consensus_params.${name}`, "must be an object");
    return s;
  };
  const i64 = (obj: Record<string, unknown>, path: string, key: string): bigint => {
    const raw = obj[key];
    if (raw === undefined || raw === null) return 0n;
    const n = int64Of(raw);
    if (n === undefined)
      return fail(`consensus_params.${path}.${key}`, `must be an integer string; got ${JSON.stringify(raw)}`);
    return n;
  };
  const block = sub("block");
  const evidence = sub("evidence");
  const validator = sub("validator");
  const version = sub("version");
  const abci = sub("abci");
  const types = validator.pub_key_types ?? [];
  if (!Array.isArray(types) || !types.every((t) => typeof t === "string")) {
    return fail("consensus_params.validator.pub_key_types", 'must be an array of strings such as ["ed25519"]');
  }
  return {
    block: { maxBytes: i64(block, "block", "max_bytes"), maxGas: i64(block, "block", "max_gas") },
    evidence: {
      maxAgeNumBlocks: i64(evidence, "evidence", "max_age_num_blocks"),
      maxAgeDurationNs: i64(evidence, "evidence", "max_age_duration"),
      maxBytes: i64(evidence, "evidence", "max_bytes"),
    },
    validator: { pubKeyTypes: [...(types as string[])] },
    version: { app: i64(version, "version", "app") },
    abci: { voteExtensionsEnableHeight: i64(abci, "abci", "vote_extensions_enable_height") },
  };
}

/** cmtjson int64/uint64: a decimal string (a plain JSON integer is accepted too). */
function int64Of(v: unknown): bigint | undefined {
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function nowNs(): Timestamp {
  return BigInt(Date.now()) * 1_000_000n;
}

const APP_STATE_PLACEHOLDER = "\u0000cometh-app-state\u0000";

/** genesis.json text as cmtjson.MarshalIndent writes it (2 spaces; int64 as strings; empty validators and app_state left out). */
export function encodeGenesis(doc: GenesisDoc): string {
  const cp = doc.consensusParams;
  const obj: Record<string, unknown> = {
    genesis_time: formatRfc3339Nano(doc.genesisTime),
    chain_id: doc.chainId,
    initial_height: String(doc.initialHeight),
    consensus_params: {
      block: { max_bytes: cp.block.maxBytes.toString(), max_gas: cp.block.maxGas.toString() },
      evidence: {
        max_age_num_blocks: cp.evidence.maxAgeNumBlocks.toString(),
        max_age_duration: cp.evidence.maxAgeDurationNs.toString(),
        max_bytes: cp.evidence.maxBytes.toString(),
      },
      validator: { pub_key_types: [...cp.validator.pubKeyTypes] },
      version: { app: cp.version.app.toString() },
      abci: { vote_extensions_enable_height: cp.abci.voteExtensionsEnableHeight.toString() },
    },
  };
  if (doc.validators.length > 0) {
    obj.validators = doc.validators.map((v: GenesisValidator) => ({
      address: bytesToHexUpper(v.address),
      pub_key: encodePubKeyJson(v.pubKey),
      power: v.power.toString(),
      name: v.name,
    }));
  }
  obj.app_hash = bytesToHexUpper(doc.appHash);
  const appState = appStateText(doc.appState);
  if (appState !== "") obj.app_state = APP_STATE_PLACEHOLDER;
  let text = JSON.stringify(obj, null, 2);
  if (appState !== "") {
    text = text.replace(JSON.stringify(APP_STATE_PLACEHOLDER), () => indentJson(appState, "  ", "  "));
  }
  return `${text}\n`;
}

function appStateText(appState: unknown): string {
  if (appState === undefined || appState === null) return "";
  if (typeof appState === "string") return appState.trim();
  if (appState instanceof Uint8Array) return Buffer.from(appState).toString("utf8").trim();
  return JSON.stringify(appState, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/** Writes genesis.json atomically (mode 0644, like CometBFT's genesis file). */
/** `durable: false`: no fsyncs (a home deleted at exit, InitHomeOptions.durable). */
export function saveGenesis(path: string, doc: GenesisDoc, opts: { durable?: boolean } = {}): void {
  if (opts.durable === false) writeFileAtomicNoSync(path, encodeGenesis(doc), 0o644);
  else writeFileAtomicSync(path, encodeGenesis(doc), 0o644);
}
