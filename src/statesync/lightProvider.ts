import {
  type BlockIdFlag,
  type Commit,
  type ConsensusParams,
  type Header,
  KEY_TYPES,
  type PubKey,
  type Validator,
  ValidatorSet,
} from "../types/index.js";
import { base64ToBytes, hexToBytes } from "../util/bytes.js";
import { parseRfc3339, type Timestamp } from "../util/time.js";
import { LightClientError } from "./errors.js";

/**
 * A light block fetched from one node RPC server (CometBFT light/provider/http): the signed header
 * from `/commit`, the validator set from `/validators` (every page) and, for the state, the params
 * from `/consensus_params`, decoded from CometBFT's JSON (docs/cometbft-rpc.md). Nothing here is
 * trusted: lightClient.ts verifies what it returns.
 */

export interface LightBlock {
  readonly header: Header;
  readonly commit: Commit;
  readonly validators: ValidatorSet;
}

/** One RPC server as the light client's primary or a witness. */
export interface LightProvider {
  /** The server's address as configured. */
  readonly address: string;
  lightBlock(height: number): Promise<LightBlock>;
  consensusParams(height: number): Promise<ConsensusParams>;
}

const PER_PAGE = 100;
const REQUEST_TIMEOUT_MS = 10_000;

/** "tcp://h:p", "h:p" or "http(s)://h:p" → the http(s) base URL. */
export function rpcBaseUrl(address: string): string {
  const a = address.trim().replace(/\/+$/, "");
  if (a.startsWith("tcp://")) return `http://${a.slice(6)}`;
  if (/^https?:\/\//.test(a)) return a;
  return `http://${a}`;
}

/** A LightProvider over a node RPC server's HTTP GET routes. */
export class HttpLightProvider implements LightProvider {
  readonly address: string;
  readonly #base: string;

  constructor(address: string) {
    this.address = address;
    this.#base = rpcBaseUrl(address);
  }

  async lightBlock(height: number): Promise<LightBlock> {
    const sh = (await this.#get(`commit?height=${height}`)) as {
      signed_header?: { header?: unknown; commit?: unknown };
    };
    const header = decodeHeader(sh.signed_header?.header, this.address);
    const commit = decodeCommit(sh.signed_header?.commit, this.address);
    const vals: Validator[] = [];
    for (let page = 1; ; page++) {
      const res = (await this.#get(`validators?height=${height}&page=${page}&per_page=${PER_PAGE}`)) as {
        validators?: unknown[];
        total?: string;
      };
      for (const v of res.validators ?? []) vals.push(decodeValidator(v, this.address));
      const total = Number(res.total ?? 0);
      if (vals.length >= total || (res.validators ?? []).length === 0) break;
    }
    return { header, commit, validators: ValidatorSet.restore(vals, undefined) };
  }

  async consensusParams(height: number): Promise<ConsensusParams> {
    const res = (await this.#get(`consensus_params?height=${height}`)) as { consensus_params?: unknown };
    return decodeConsensusParams(res.consensus_params, this.address);
  }

  async #get(path: string): Promise<unknown> {
    let body: { result?: unknown; error?: { message?: string; data?: string } };
    try {
      const res = await fetch(`${this.#base}/${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw new LightClientError(`RPC server ${this.address}: GET /${path} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (body.error !== undefined || body.result === undefined) {
      throw new LightClientError(
        `RPC server ${this.address}: GET /${path}: ${body.error?.message ?? "no result"} ${body.error?.data ?? ""}`.trim(),
      );
    }
    return body.result;
  }
}

// ---- CometBFT JSON → domain ---------------------------------------------------------------------

type Json = Record<string, unknown>;

function bad(server: string, what: string): LightClientError {
  return new LightClientError(`RPC server ${server} answered an invalid ${what}`);
}

function obj(v: unknown, server: string, what: string): Json {
  if (typeof v !== "object" || v === null) throw bad(server, what);
  return v as Json;
}

function hex(v: unknown, server: string, what: string): Uint8Array {
  const b = typeof v === "string" ? hexToBytes(v) : undefined;
  if (b === undefined) throw bad(server, what);
  return b;
}

function b64(v: unknown, server: string, what: string): Uint8Array {
  const b = typeof v === "string" ? base64ToBytes(v) : undefined;
  if (b === undefined) throw bad(server, what);
  return b;
}

function int(v: unknown, server: string, what: string): bigint {
  if (typeof v !== "string" && typeof v !== "number") throw bad(server, what);
  try {
    return BigInt(v);
  } catch {
    throw bad(server, what);
  }
}

function time(v: unknown, server: string, what: string): Timestamp {
  const t = typeof v === "string" ? parseRfc3339(v) : undefined;
  if (t === undefined) throw bad(server, what);
  return t;
}

function blockIdOf(v: unknown, server: string) {
  const b = obj(v, server, "block id");
  const parts = obj(b.parts, server, "block id");
  return {
    hash: hex(b.hash, server, "block id hash"),
    partSetHeader: {
      total: Number(int(parts.total, server, "part set total")),
      hash: hex(parts.hash, server, "part set hash"),
    },
  };
}

export function decodeHeader(v: unknown, server: string): Header {
  const h = obj(v, server, "header");
  const version = obj(h.version, server, "header version");
  return {
    version: { block: int(version.block, server, "version"), app: int(version.app ?? "0", server, "version") },
    chainId: String(h.chain_id ?? ""),
    height: Number(int(h.height, server, "header height")),
    time: time(h.time, server, "header time"),
    lastBlockId: blockIdOf(h.last_block_id, server),
    lastCommitHash: hex(h.last_commit_hash, server, "last_commit_hash"),
    dataHash: hex(h.data_hash, server, "data_hash"),
    validatorsHash: hex(h.validators_hash, server, "validators_hash"),
    nextValidatorsHash: hex(h.next_validators_hash, server, "next_validators_hash"),
    consensusHash: hex(h.consensus_hash, server, "consensus_hash"),
    appHash: hex(h.app_hash, server, "app_hash"),
    lastResultsHash: hex(h.last_results_hash, server, "last_results_hash"),
    evidenceHash: hex(h.evidence_hash, server, "evidence_hash"),
    proposerAddress: hex(h.proposer_address, server, "proposer_address"),
  };
}

export function decodeCommit(v: unknown, server: string): Commit {
  const c = obj(v, server, "commit");
  const sigs = Array.isArray(c.signatures) ? c.signatures : [];
  return {
    height: Number(int(c.height, server, "commit height")),
    round: Number(int(c.round, server, "commit round")),
    blockId: blockIdOf(c.block_id, server),
    signatures: sigs.map((s) => {
      const sig = obj(s, server, "commit signature");
      return {
        blockIdFlag: Number(int(sig.block_id_flag, server, "block_id_flag")) as BlockIdFlag,
        validatorAddress: hex(sig.validator_address ?? "", server, "validator_address"),
        timestamp: time(sig.timestamp, server, "signature timestamp"),
        signature:
          sig.signature === null || sig.signature === undefined
            ? new Uint8Array(0)
            : b64(sig.signature, server, "signature"),
      };
    }),
  };
}

const PUBKEY_TYPES: Record<string, PubKey["type"]> = {
  "tendermint/PubKeyEd25519": KEY_TYPES.ed25519,
  "tendermint/PubKeySecp256k1": KEY_TYPES.secp256k1,
};

function decodeValidator(v: unknown, server: string): Validator {
  const val = obj(v, server, "validator");
  const pk = obj(val.pub_key, server, "validator pub_key");
  const type = PUBKEY_TYPES[String(pk.type)];
  if (type === undefined) throw bad(server, `validator key type ${String(pk.type)}`);
  return {
    address: hex(val.address, server, "validator address"),
    pubKey: { type, bytes: b64(pk.value, server, "validator pub_key") },
    votingPower: int(val.voting_power, server, "voting_power"),
    proposerPriority: int(val.proposer_priority, server, "proposer_priority"),
  };
}

function decodeConsensusParams(v: unknown, server: string): ConsensusParams {
  const p = obj(v, server, "consensus params");
  const block = obj(p.block, server, "block params");
  const evidence = obj(p.evidence, server, "evidence params");
  const validator = obj(p.validator, server, "validator params");
  const version = obj(p.version ?? {}, server, "version params");
  const abci = obj(p.abci ?? {}, server, "abci params");
  return {
    block: { maxBytes: int(block.max_bytes, server, "max_bytes"), maxGas: int(block.max_gas, server, "max_gas") },
    evidence: {
      maxAgeNumBlocks: int(evidence.max_age_num_blocks, server, "max_age_num_blocks"),
      maxAgeDurationNs: int(evidence.max_age_duration, server, "max_age_duration"),
      maxBytes: int(evidence.max_bytes, server, "evidence max_bytes"),
    },
    validator: { pubKeyTypes: Array.isArray(validator.pub_key_types) ? validator.pub_key_types.map(String) : [] },
    version: { app: int(version.app ?? "0", server, "app version") },
    abci: {
      voteExtensionsEnableHeight: int(abci.vote_extensions_enable_height ?? "0", server, "vote extensions height"),
    },
  };
}
