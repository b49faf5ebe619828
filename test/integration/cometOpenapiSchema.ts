import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { parse } from "yaml";

/**
 * CometBFT v0.38's OpenAPI document (copied in test/spec/cometbft-openapi-v0.38.yaml) as JSON Schema
 * for Ajv, with the corrections that make it describe the real v0.38 wire (clients decode the wire:
 * docs/compatibility.md, "clients") and our documented differences (docs/compatibility.md). Every
 * correction names why; the integration test proves each one is needed by validating the same
 * answers against the uncorrected document. "§N" in the reasons is a section of docs/cometbft-rpc.md.
 */

export const OPENAPI_FILE = fileURLToPath(new URL("../spec/cometbft-openapi-v0.38.yaml", import.meta.url));

/** One change to the document: `value` replaces whatever sits at the JSON pointer `at`. */
export interface SchemaOverride {
  readonly at: string;
  readonly value: unknown;
  /** Why the document is wrong here, with the source (docs/cometbft-rpc.md section, docs/compatibility.md). */
  readonly why: string;
  /**
   * "fix": the document contradicts the wire; without this change some real answer fails.
   * "extend": the document says nothing (a route, a field or a shape it lacks); the value only
   * makes the check stricter.
   */
  readonly kind: "fix" | "extend";
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: "string" } as const;
const int = { type: "integer" } as const;
const strArray = { type: "array", items: str } as const;
/** A decimal int64 as cmtjson writes it (§1.6). */
const i64 = { type: "string", pattern: "^-?[0-9]+$" } as const;
/** Uppercase hex (HexBytes, §1.6); empty for nil. */
const hexUpper = { type: "string", pattern: "^([0-9A-F]{2})*$" } as const;
/** time.Time as RFC3339Nano in UTC: trailing fractional zeros dropped (§1.6). */
const rfc3339Nano = {
  type: "string",
  pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]*[1-9])?Z$",
} as const;
/** Standard padded base64 ([]byte, §1.6). */
const b64 = { type: "string", pattern: "^[A-Za-z0-9+/]*={0,2}$" } as const;

function strict(properties: Record<string, unknown>, optional: readonly string[] = []) {
  return {
    type: "object",
    additionalProperties: false,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    properties,
  };
}

/** `/paths/<route>/get/responses/<status>` → the JSON schema pointer. */
export function responsePointer(route: string, status: "200" | "500"): string {
  return `/paths/~1${route}/get/responses/${status}/content/application~1json/schema`;
}

/** abci.Event through jsonpb (EmitDefaults): every field present. */
const abciEventJsonpb = strict({
  type: str,
  attributes: { type: "array", items: strict({ key: str, value: str, index: { type: "boolean" } }) },
});

/**
 * Shapes the document lacks, written from docs/cometbft-rpc.md (§1.6, §2.1, §4.1, §4.2) and
 * docs/compatibility.md. Added under /components/schemas; the fixes below refer to them.
 */
export const ADDITIONS: readonly SchemaOverride[] = [
  {
    at: "/components/schemas/HeaderResponse",
    kind: "extend",
    why: "§2.1: header and header_by_hash answer {header: Header|null} inside the JSON-RPC envelope",
    value: {
      allOf: [
        ref("JSONRPC"),
        {
          type: "object",
          required: ["result"],
          properties: {
            result: {
              type: "object",
              required: ["header"],
              properties: { header: { ...ref("BlockHeader"), nullable: true } },
            },
          },
        },
      ],
    },
  },
  {
    at: "/components/schemas/CommitSig",
    kind: "extend",
    why: "§2.1 CommitSig: {block_id_flag, validator_address, timestamp, signature}; absent signatures carry null",
    value: strict({
      block_id_flag: { type: "integer", enum: [1, 2, 3] },
      validator_address: hexUpper,
      timestamp: str,
      signature: { ...b64, nullable: true },
    }),
  },
  {
    at: "/components/schemas/ExecTxResult",
    kind: "extend",
    why: "§1.6: ExecTxResult through gogoproto jsonpb (EmitDefaults, EnumsAsInts): every field, code a number, empty data null",
    value: strict({
      code: int,
      data: { ...b64, nullable: true },
      log: str,
      info: str,
      gas_wanted: i64,
      gas_used: i64,
      events: { type: "array", items: abciEventJsonpb },
      codespace: str,
    }),
  },
  {
    at: "/components/schemas/ResponseCheckTx",
    kind: "extend",
    why: "§1.6, §2.1 check_tx: v0.38 ResponseCheckTx through jsonpb (no sender/priority/mempool_error)",
    value: strict({
      code: int,
      data: { ...b64, nullable: true },
      log: str,
      info: str,
      gas_wanted: i64,
      gas_used: i64,
      events: { type: "array", items: abciEventJsonpb },
      codespace: str,
    }),
  },
  {
    at: "/components/schemas/TxProof",
    kind: "extend",
    why: "§2.1 tx: prove=true adds {root_hash, data, proof:{total, index, leaf_hash, aunts}} (snake case)",
    value: strict({
      root_hash: hexUpper,
      data: b64,
      proof: strict({ total: i64, index: i64, leaf_hash: b64, aunts: { type: "array", items: b64 } }),
    }),
  },
  {
    at: "/components/schemas/EventPush",
    kind: "extend",
    why: "§4.1: a pushed event is {query, data:{type,value}, events:{<composite key>:[values]}} under the subscribe id",
    value: {
      allOf: [
        ref("JSONRPC"),
        {
          type: "object",
          required: ["result"],
          properties: {
            result: strict({
              query: str,
              data: {
                type: "object",
                additionalProperties: false,
                required: ["type", "value"],
                properties: {
                  type: { type: "string", pattern: "^tendermint/event/[A-Za-z]+$" },
                  value: { type: "object" },
                },
              },
              events: { type: "object", additionalProperties: strArray, required: ["tm.event"] },
            }),
          },
        },
      ],
    },
  },
  {
    at: "/components/schemas/NewBlockValue",
    kind: "extend",
    why:
      "§4.2 + docs/compatibility.md `NewBlock event value`: v0.38's block, block_id, " +
      "result_finalize_block, plus cometh's result_begin_block and result_end_block",
    value: {
      type: "object",
      required: ["block", "block_id", "result_finalize_block", "result_begin_block", "result_end_block"],
      properties: {
        block: ref("Block"),
        block_id: ref("BlockID"),
        result_finalize_block: {
          type: "object",
          required: ["validator_updates"],
          properties: {
            events: { type: "array", items: { type: "object" } },
            tx_results: { type: "array", items: ref("ExecTxResult") },
            validator_updates: { type: "array", nullable: true },
            consensus_param_updates: { type: "object" },
            app_hash: b64,
          },
        },
        result_begin_block: { type: "object" },
        result_end_block: { type: "object" },
      },
    },
  },
  {
    at: "/components/schemas/TxEventValue",
    kind: "extend",
    why: "§4.2: {TxResult:{height, index (omitted when 0), tx, result (omitempty ExecTxResult)}}",
    value: strict({
      TxResult: strict({ height: i64, index: int, tx: b64, result: { type: "object" } }, ["index", "tx"]),
    }),
  },
  {
    at: "/components/schemas/NewBlockHeaderValue",
    kind: "extend",
    why: "§4.2: {header: Header}",
    value: strict({ header: ref("BlockHeader") }),
  },
  {
    at: "/components/schemas/NewBlockEventsValue",
    kind: "extend",
    why: "§4.2: {height, events: [Event]|null, num_txs}",
    value: strict({ height: i64, events: { type: "array", nullable: true }, num_txs: i64 }),
  },
];

/** Where the document contradicts what CometBFT v0.38.25 sends (docs/cometbft-rpc.md §0 and §2), or is looser than it. */
export const OVERRIDES: readonly SchemaOverride[] = [
  // The envelope.
  {
    at: "/components/schemas/JSONRPC/properties/id",
    kind: "fix",
    why: "§0: the server echoes a string id as a string (the document says integer)",
    value: { type: ["integer", "string"] },
  },
  {
    at: "/components/schemas/ErrorResponse/allOf/1/properties/error",
    kind: "fix",
    why: "§0: `error` is an object {code, message, data}; data left out when empty (the document says string)",
    value: strict({ code: int, message: str, data: str }, ["data"]),
  },
  ...["BroadcastTxResponse", "BroadcastTxCommitResponse", "CheckTxResponse", "ABCIQueryResponse"].map(
    (name): SchemaOverride => ({
      at: `/components/schemas/${name}/required`,
      kind: "fix",
      why: "§1.4: a successful answer has no `error` key (the document requires an `error` string)",
      value: ["jsonrpc", "id", "result"],
    }),
  ),
  // header / header_by_hash: the document gives a bare Header as the whole answer.
  ...["header", "header_by_hash"].map(
    (route): SchemaOverride => ({
      at: responsePointer(route, "200"),
      kind: "fix",
      why: "§2.1: the answer is the JSON-RPC envelope with result {header} (the document gives a bare Header)",
      value: ref("HeaderResponse"),
    }),
  ),
  // Block.
  {
    at: "/components/schemas/Block/properties/data",
    kind: "fix",
    why: "§2.1 Block: data is {txs: [base64]} (the document says an array of strings)",
    value: strict({ txs: { type: "array", items: b64 } }),
  },
  {
    at: "/components/schemas/Block/properties/evidence",
    kind: "fix",
    why: "§2.1 Block: evidence is {evidence: [cmtjson {type, value}]} (the document says an array)",
    value: strict({ evidence: { type: "array", items: { type: "object", required: ["type", "value"] } } }),
  },
  {
    at: "/components/schemas/Block/properties/last_commit/properties/height",
    kind: "fix",
    why: "§1.6, §2.1 Commit: height is an int64, so a decimal string (the document says integer)",
    value: i64,
  },
  {
    at: "/components/schemas/Block/properties/last_commit/properties/signatures/items",
    kind: "fix",
    why: "§2.1: last_commit.signatures are CommitSigs (the document reuses its Vote-shaped `Commit`)",
    value: ref("CommitSig"),
  },
  {
    at: "/components/schemas/BlockComplete/properties/block",
    kind: "fix",
    why: "§2.1: block_by_hash of an unknown hash answers block null (not an error)",
    value: { ...ref("Block"), nullable: true },
  },
  {
    at: "/components/schemas/BlockMeta/properties/block_size",
    kind: "fix",
    why: "§1.6, §2.1 blockchain: block_size is an int, so a decimal string (the document says integer)",
    value: i64,
  },
  // block_results: ExecTxResult through jsonpb.
  {
    at: "/components/schemas/BlockResultsResponse/properties/result/properties/txs_results/items/properties/code",
    kind: "fix",
    why: "§1.6: jsonpb writes the uint32 code as a number (the document says string)",
    value: int,
  },
  {
    at: "/components/schemas/BlockResultsResponse/properties/result/properties/txs_results/items/properties/data",
    kind: "fix",
    why: "§1.6: jsonpb writes empty bytes as null",
    value: { ...b64, nullable: true },
  },
  // Consensus params.
  {
    at: "/components/schemas/ConsensusParams",
    kind: "fix",
    why:
      "§2.1 genesis/consensus_params: v0.38 params are block{max_bytes,max_gas}, evidence{max_age_num_blocks," +
      "max_age_duration,max_bytes}, validator, version, abci (the document requires 0.34's time_iota_ms and max_age)",
    value: {
      type: "object",
      nullable: true,
      additionalProperties: false,
      required: ["block", "evidence", "validator", "version", "abci"],
      properties: {
        block: strict({ max_bytes: i64, max_gas: i64 }),
        evidence: strict({ max_age_num_blocks: i64, max_age_duration: i64, max_bytes: i64 }),
        validator: strict({ pub_key_types: strArray }),
        version: strict({ app: i64 }),
        abci: strict({ vote_extensions_enable_height: i64 }),
      },
    },
  },
  // genesis_chunked.
  ...["chunk", "total"].map(
    (field): SchemaOverride => ({
      at: `/components/schemas/GenesisChunkedResponse/properties/result/properties/${field}`,
      kind: "fix",
      why: `§2.1 genesis_chunked: ${field} is a Go int, so a decimal string (the document says integer)`,
      value: i64,
    }),
  ),
  // tx and tx_search.
  ...[
    "/components/schemas/TxResponse/properties/result",
    "/components/schemas/TxSearchResponse/properties/result/properties/txs/items",
  ].map(
    (base): SchemaOverride => ({
      at: `${base}/properties/tx_result`,
      kind: "fix",
      why: "§2.1 tx: tx_result is a jsonpb ExecTxResult with `events` (the document requires 0.34's `tags`)",
      value: ref("ExecTxResult"),
    }),
  ),
  {
    at: "/components/schemas/TxResponse/properties/result/properties/proof",
    kind: "extend",
    why: "§2.1 tx: prove=true adds `proof` (the document does not list it)",
    value: ref("TxProof"),
  },
  {
    at: "/components/schemas/TxSearchResponse/properties/result/properties/txs/items/properties/proof",
    kind: "fix",
    why: "§2.1 tx: the proof keys are root_hash, data, proof (the document says RootHash, Data, Proof)",
    value: ref("TxProof"),
  },
  {
    at: "/components/schemas/BlockSearchResponse/properties/result/properties/total_count",
    kind: "fix",
    why: "§2.1 block_search: total_count is an int, so a decimal string (the document says integer)",
    value: i64,
  },
  // ABCI.
  {
    at: "/components/schemas/ABCIQueryResponse/properties/result/properties/response",
    kind: "fix",
    why:
      "§2.1 abci_query: jsonpb ResponseQuery: code a number, key/value base64 or null, `proofOps` " +
      "(the document requires `proof` and a string code)",
    value: strict({
      code: int,
      log: str,
      info: str,
      index: i64,
      key: { ...b64, nullable: true },
      value: { ...b64, nullable: true },
      proofOps: { type: "object", nullable: true },
      height: i64,
      codespace: str,
    }),
  },
  {
    at: "/components/schemas/CheckTxResponse/properties/result",
    kind: "fix",
    why: "§2.1 check_tx: a flat jsonpb ResponseCheckTx, code a number and empty data null (the document says strings)",
    value: ref("ResponseCheckTx"),
  },
  {
    at: "/components/schemas/BroadcastTxCommitResponse/properties/result",
    kind: "fix",
    why:
      "§2.1 broadcast_tx_commit: {check_tx, tx_result, hash, height} with jsonpb results " +
      "(the document requires 0.37's deliver_tx and string codes)",
    value: strict({ check_tx: ref("ResponseCheckTx"), tx_result: ref("ExecTxResult"), hash: hexUpper, height: i64 }),
  },
  {
    at: "/components/schemas/BroadcastTxResponse/properties/result/properties/code",
    kind: "fix",
    why: "§1.6, §2.1 broadcast_tx_sync/async: code is a uint32, so a JSON number (the document says string)",
    value: int,
  },
  {
    at: "/components/schemas/BroadcastTxResponse/properties/result/properties/data",
    kind: "extend",
    why: "§2.1 broadcast_tx_sync/async: data is HexBytes (uppercase hex), unlike check_tx",
    value: hexUpper,
  },
  // Stricter than the document, which gives only `type: string` and an example (§1.6 encoding rules).
  ...(
    [
      ["BlockHeader", "height", i64],
      ["BlockHeader", "time", rfc3339Nano],
      ...[
        "last_commit_hash",
        "data_hash",
        "validators_hash",
        "next_validators_hash",
        "consensus_hash",
        "app_hash",
        "last_results_hash",
        "evidence_hash",
        "proposer_address",
      ].map((f) => ["BlockHeader", f, hexUpper] as const),
      ["BlockID", "hash", hexUpper],
      ["ValidatorPriority", "address", hexUpper],
      ["ValidatorPriority", "voting_power", i64],
      ["ValidatorPriority", "proposer_priority", i64],
      ["SyncInfo", "latest_block_hash", hexUpper],
      ["SyncInfo", "latest_app_hash", hexUpper],
      ["SyncInfo", "latest_block_height", i64],
      ["SyncInfo", "latest_block_time", rfc3339Nano],
      ["SyncInfo", "earliest_block_hash", hexUpper],
      ["SyncInfo", "earliest_app_hash", hexUpper],
      ["SyncInfo", "earliest_block_height", i64],
      ["SyncInfo", "earliest_block_time", rfc3339Nano],
    ] as const
  ).map(
    ([schema, field, value]): SchemaOverride => ({
      at: `/components/schemas/${schema}/properties/${field}`,
      kind: "extend",
      why: "§1.6: int64 as a decimal string, HexBytes as uppercase hex, time.Time as RFC3339Nano",
      value,
    }),
  ),
  {
    at: "/components/schemas/BlockID/properties/parts/properties/hash",
    kind: "extend",
    why: "§1.6: HexBytes as uppercase hex",
    value: hexUpper,
  },
];

function decodePointer(pointer: string): string[] {
  if (!pointer.startsWith("/")) throw new RangeError(`not a JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Sets the value at a JSON pointer; the parent must exist. */
function setAt(doc: unknown, pointer: string, value: unknown): void {
  const parts = decodePointer(pointer);
  const last = parts.pop() as string;
  let node = doc as Record<string, unknown>;
  for (const p of parts) {
    const next = node[p];
    if (typeof next !== "object" || next === null) throw new RangeError(`${pointer}: nothing at ${p}`);
    node = next as Record<string, unknown>;
  }
  node[last] = structuredClone(value);
}

/** Whether something sits at a JSON pointer. */
export function hasPointer(doc: unknown, pointer: string): boolean {
  let node = doc;
  for (const p of decodePointer(pointer)) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, p)) return false;
    node = (node as Record<string, unknown>)[p];
  }
  return true;
}

/**
 * OpenAPI 3.0 → JSON Schema: `nullable: true` becomes a "null" type (or an anyOf with null when
 * there is no `type`, as with a `$ref`). Examples and descriptions are left for Ajv to ignore.
 */
function openApiToJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openApiToJsonSchema);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "example" || k === "nullable") continue;
    out[k] = openApiToJsonSchema(v);
  }
  if ((node as { nullable?: unknown }).nullable !== true) return out;
  const type = out.type;
  if (typeof type === "string") return { ...out, type: [type, "null"] };
  if (Array.isArray(type)) return { ...out, type: [...type, "null"] };
  return { anyOf: [{ type: "null" }, out] };
}

let parsed: Record<string, unknown> | undefined;

/**
 * The document, a fresh copy each call (callers change it). Parsed once: the YAML parse takes
 * seconds, and the test that drops each correction in turn builds a schema set per correction.
 */
export function loadOpenApi(): Record<string, unknown> {
  parsed ??= parse(readFileSync(OPENAPI_FILE, "utf8")) as Record<string, unknown>;
  return structuredClone(parsed);
}

export interface SchemaSet {
  /** The OpenAPI document after the changes (still OpenAPI flavoured, for inspection). */
  readonly document: Record<string, unknown>;
  /** A validator for the schema at a JSON pointer of the document. */
  validator(pointer: string): ValidateFunction;
}

/** Compiles the document, optionally with changes applied. */
export function createSchemaSet(changes: readonly SchemaOverride[]): SchemaSet {
  const document = loadOpenApi();
  for (const c of changes) setAt(document, c.at, c.value);
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(openApiToJsonSchema(document) as Record<string, unknown>, "openapi");
  const cache = new Map<string, ValidateFunction>();
  return {
    document,
    validator(pointer) {
      let v = cache.get(pointer);
      if (v === undefined) {
        if (!hasPointer(document, pointer)) throw new RangeError(`no schema at ${pointer}`);
        v = ajv.compile({ $ref: `openapi#${pointer}` });
        cache.set(pointer, v);
      }
      return v;
    },
  };
}

/** Ajv errors as short lines: `instancePath schemaPath message`. */
export function formatErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.schemaPath} ${e.message ?? ""}`.trim());
}
