import { parseGoDuration } from "../../config/index.js";
import { ComethError } from "../../util/errors.js";
import { goValueKind, type JsonNode } from "../jsonrpc/index.js";
import type {
  AccessListEntry,
  AccountOverride,
  Authorization,
  CallRequest,
  SimulateBlockSpec,
  SimulateInput,
  StateOverrides,
  TraceConfig,
} from "./services.js";

/**
 * Param codecs for the EVM server, with geth's strict decoding (hexutil, common.Address/Hash,
 * rpc.BlockNumber, BlockNumberOrHash, TransactionArgs, FilterCriteria, TraceConfig): `0x`
 * required, even-length data, no leading zeros in quantities, exact lengths. Error texts are
 * geth's, so that `invalid argument 0: hex string of odd length` reads the same as on geth.
 */

/** Why one argument does not decode; the dispatcher prefixes "invalid argument N: ". */
export class ParamError extends ComethError {
  /** Set for Go `UnmarshalTypeError`s, whose text changes inside a struct field. */
  readonly typeError: GoTypeError | undefined;
  constructor(message: string, typeError?: GoTypeError) {
    super(message);
    this.typeError = typeError;
  }
}

/** A Go UnmarshalTypeError: inside struct fields, `struct` is the innermost struct's name and `path` the field path from the outermost. */
interface GoTypeError {
  readonly value: string;
  readonly goType: string;
  readonly struct?: string;
  readonly path?: string;
}

function typeError(value: string, goType: string): ParamError {
  return new ParamError(`json: cannot unmarshal ${value} into Go value of type ${goType}`, { value, goType });
}

/**
 * Re-words a failure inside a struct field the way encoding/json does: the innermost struct's name,
 * then the field names from the outermost down (`BlockOverrides.BlockOverrides.Number`).
 */
function inField<T>(struct: string, field: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ParamError && err.typeError !== undefined) {
      const t = err.typeError;
      const inner =
        t.path === undefined ? { struct, path: field } : { struct: t.struct ?? struct, path: `${field}.${t.path}` };
      throw new ParamError(
        `json: cannot unmarshal ${t.value} into Go struct field ${inner.struct}.${inner.path} of type ${t.goType}`,
        { value: t.value, goType: t.goType, ...inner },
      );
    }
    throw err;
  }
}

/** One positional argument. */
export interface Param<T> {
  /** Absent (or null, for optional params) arguments are allowed. */
  readonly optional: boolean;
  /** Decodes a present value (null included for required params). Throws {@link ParamError}. */
  decode(node: JsonNode): T;
}

export type ParamValue<P> = P extends Param<infer T> ? T : never;
export type ParamValues<P extends readonly Param<unknown>[]> = { -readonly [K in keyof P]: ParamValue<P[K]> };

function required<T>(decode: (node: JsonNode) => T): Param<T> {
  return { optional: false, decode };
}

// ---------------------------------------------------------------------------------------------
// hexutil

const HEX_RE = /^[0-9a-fA-F]*$/;

const HEX_ERR = {
  empty: "empty hex string",
  syntax: "invalid hex string",
  prefix: "hex string without 0x prefix",
  odd: "hex string of odd length",
  emptyNumber: 'hex string "0x"',
  leadingZero: "hex number with leading zero digits",
  uint64: "hex number > 64 bits",
  big256: "hex number > 256 bits",
} as const;

function has0x(s: string): boolean {
  return s.length >= 2 && s[0] === "0" && (s[1] === "x" || s[1] === "X");
}

/** The raw text between the quotes (Go hands UnmarshalText the undecoded bytes). */
function stringBody(node: JsonNode, goType: string): string {
  if (node.kind !== "string") throw typeError("non-string", goType);
  return node.raw.slice(1, -1);
}

/** hexutil checkText: "" allowed, 0x required, even length. */
function hexBody(text: string, goType: string): string {
  if (text.length === 0) return "";
  if (!has0x(text)) throw typeError(HEX_ERR.prefix, goType);
  const body = text.slice(2);
  if (body.length % 2 !== 0) throw typeError(HEX_ERR.odd, goType);
  if (!HEX_RE.test(body)) throw typeError(HEX_ERR.syntax, goType);
  return body;
}

/** hexutil checkNumberText plus digits check and a bit limit. */
function numberBody(text: string, goType: string, maxDigits: number, rangeError: string): bigint {
  if (text.length === 0) return 0n;
  if (!has0x(text)) throw typeError(HEX_ERR.prefix, goType);
  const body = text.slice(2);
  if (body.length === 0) throw typeError(HEX_ERR.emptyNumber, goType);
  if (body.length > 1 && body[0] === "0") throw typeError(HEX_ERR.leadingZero, goType);
  if (!HEX_RE.test(body)) throw typeError(HEX_ERR.syntax, goType);
  if (body.length > maxDigits) throw typeError(rangeError, goType);
  return BigInt(`0x${body}`);
}

function fixedBytes(node: JsonNode, size: number, goType: string): Uint8Array {
  const text = stringBody(node, goType);
  if (text.length > 0 && !has0x(text)) throw typeError(HEX_ERR.prefix, goType);
  const body = text.length === 0 ? "" : text.slice(2);
  if (body.length % 2 !== 0) throw typeError(HEX_ERR.odd, goType);
  if (body.length !== size * 2) {
    throw new ParamError(`hex string has length ${body.length}, want ${size * 2} for ${goType}`);
  }
  if (!HEX_RE.test(body)) throw typeError(HEX_ERR.syntax, goType);
  return new Uint8Array(Buffer.from(body, "hex"));
}

function decodeBytes(node: JsonNode): Uint8Array {
  return new Uint8Array(Buffer.from(hexBody(stringBody(node, "hexutil.Bytes"), "hexutil.Bytes"), "hex"));
}

function decodeBig(node: JsonNode): bigint {
  return numberBody(stringBody(node, "*hexutil.Big"), "*hexutil.Big", 64, HEX_ERR.big256);
}

function decodeUint64(node: JsonNode): bigint {
  return numberBody(stringBody(node, "hexutil.Uint64"), "hexutil.Uint64", 16, HEX_ERR.uint64);
}

function decodeUint(node: JsonNode): number {
  const v = numberBody(stringBody(node, "hexutil.Uint"), "hexutil.Uint", 16, HEX_ERR.uint64);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw typeError(HEX_ERR.uint64, "hexutil.Uint");
  return Number(v);
}

const decodeAddress = (node: JsonNode) => fixedBytes(node, 20, "common.Address");
const decodeHash = (node: JsonNode) => fixedBytes(node, 32, "common.Hash");

function decodeBool(node: JsonNode): boolean {
  if (node.kind === "null") return false;
  if (node.kind !== "bool") throw typeError(goValueKind(node), "bool");
  return node.value;
}

function decodeString(node: JsonNode): string {
  if (node.kind === "null") return "";
  if (node.kind !== "string") throw typeError(goValueKind(node), "string");
  return node.value;
}

/** geth hexutil.Decode (used by filter criteria): its own texts, not wrapped in a type error. */
function plainHexDecode(s: string): Uint8Array {
  if (s.length === 0) throw new ParamError(HEX_ERR.empty);
  if (!has0x(s)) throw new ParamError(HEX_ERR.prefix);
  const body = s.slice(2);
  if (body.length % 2 !== 0) throw new ParamError(HEX_ERR.odd);
  if (!HEX_RE.test(body)) throw new ParamError(HEX_ERR.syntax);
  return new Uint8Array(Buffer.from(body, "hex"));
}

/** geth decodeHash for storage keys: lenient (odd length, missing 0x), at most 32 bytes, left-padded. */
export function decodeStorageKey(s: string): Uint8Array {
  let body = has0x(s) ? s.slice(2) : s;
  if (body.length % 2 === 1) body = `0${body}`;
  if (body.length > 64) throw new ParamError("hex string too long, want at most 32 bytes");
  if (!HEX_RE.test(body)) throw new ParamError("hex string invalid");
  const out = new Uint8Array(32);
  out.set(Buffer.from(body, "hex"), 32 - body.length / 2);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Block parameters

/** A block tag or number after decoding (`earliest` is number 0, the genesis block). */
export type BlockSpec =
  | { readonly kind: "number"; readonly number: number }
  | { readonly kind: "tag"; readonly tag: "latest" | "pending" | "safe" | "finalized" };

/** A block given by number/tag or by hash (EIP-1898). */
export type BlockRef =
  | BlockSpec
  | { readonly kind: "hash"; readonly hash: Uint8Array; readonly requireCanonical: boolean };

const TAGS = ["latest", "pending", "safe", "finalized"] as const;
const TAG_LIST = "earliest, latest, pending, safe, finalized";

function blockSpecFromText(input: string): BlockSpec {
  if (input === "earliest") return { kind: "number", number: 0 };
  for (const t of TAGS) if (input === t) return { kind: "tag", tag: t };
  if (!has0x(input)) {
    throw new ParamError(
      `unknown block ${JSON.stringify(input)}: use a 0x-prefixed hex number or one of the tags ${TAG_LIST}`,
    );
  }
  const n = numberBody(input, "rpc.BlockNumber", 16, HEX_ERR.uint64);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new ParamError("block number larger than 2^53-1");
  return { kind: "number", number: Number(n) };
}

function unwrapTypeError(fn: () => BlockSpec): BlockSpec {
  try {
    return fn();
  } catch (err) {
    // rpc.BlockNumber reports the bare hexutil text ("hex string without 0x prefix").
    if (err instanceof ParamError && err.typeError !== undefined) throw new ParamError(err.typeError.value);
    throw err;
  }
}

/** rpc.BlockNumber: a tag or a 0x quantity as a JSON string. */
function decodeBlockSpec(node: JsonNode): BlockSpec {
  if (node.kind !== "string") {
    throw new ParamError(
      `block must be a JSON string (a 0x-prefixed hex number or one of ${TAG_LIST}), got ${goValueKind(node)}`,
    );
  }
  return unwrapTypeError(() => blockSpecFromText(node.value));
}

function objectEntries(node: JsonNode): Map<string, JsonNode> {
  const out = new Map<string, JsonNode>();
  if (node.kind !== "object") return out;
  // encoding/json matches field names case-insensitively; the last duplicate wins.
  for (const [k, v] of node.entries) out.set(k.toLowerCase(), v);
  return out;
}

/** rpc.BlockNumberOrHash: a tag, a number, a 32-byte hash, or {blockNumber} / {blockHash, requireCanonical}. */
function decodeBlockRef(node: JsonNode): BlockRef {
  if (node.kind === "object") {
    const f = objectEntries(node);
    const num = f.get("blocknumber");
    const hash = f.get("blockhash");
    const hasNum = num !== undefined && num.kind !== "null";
    const hasHash = hash !== undefined && hash.kind !== "null";
    if (hasNum && hasHash)
      throw new ParamError("cannot specify both BlockHash and BlockNumber, choose one or the other");
    if (hasHash) {
      const canonical = f.get("requirecanonical");
      return {
        kind: "hash",
        hash: inField("BlockNumberOrHash", "blockHash", () => decodeHash(hash)),
        requireCanonical: canonical === undefined ? false : decodeBool(canonical),
      };
    }
    if (hasNum) return decodeBlockSpec(num);
    throw new ParamError('block object needs "blockHash" or "blockNumber"');
  }
  if (node.kind !== "string") {
    throw new ParamError(
      `block must be a string (hex number, tag or block hash) or an EIP-1898 object, got ${goValueKind(node)}`,
    );
  }
  const input = node.value;
  if (input.length === 66 && has0x(input)) return { kind: "hash", hash: decodeHash(node), requireCanonical: false };
  return unwrapTypeError(() => blockSpecFromText(input));
}

// ---------------------------------------------------------------------------------------------
// Structured arguments

function decodeAccessList(node: JsonNode): AccessListEntry[] {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "types.AccessList");
  return node.items.map((item) => {
    if (item.kind !== "object") throw typeError(goValueKind(item), "types.AccessTuple");
    const f = objectEntries(item);
    const address = f.get("address");
    const keys = f.get("storagekeys");
    return {
      address:
        address === undefined ? new Uint8Array(20) : inField("AccessTuple", "address", () => decodeAddress(address)),
      storageKeys: keys === undefined ? [] : hashList(keys, "AccessTuple", "storageKeys"),
    };
  });
}

function decodeAuthorizationList(node: JsonNode): Authorization[] {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "[]types.SetCodeAuthorization");
  return node.items.map((item) => {
    if (item.kind !== "object") throw typeError(goValueKind(item), "types.SetCodeAuthorization");
    const f = objectEntries(item);
    const get = <T>(name: string, dec: (n: JsonNode) => T, zero: T): T => {
      const v = f.get(name.toLowerCase());
      return v === undefined || v.kind === "null" ? zero : inField("SetCodeAuthorization", name, () => dec(v));
    };
    return {
      chainId: get("chainId", decodeBig, 0n),
      address: get("address", decodeAddress, new Uint8Array(20)),
      nonce: get("nonce", decodeUint64, 0n),
      yParity: Number(get("yParity", decodeUint64, 0n)),
      r: get("r", decodeBig, 0n),
      s: get("s", decodeBig, 0n),
    };
  });
}

function hashList(node: JsonNode, struct: string, field: string): Uint8Array[] {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "[]common.Hash");
  return node.items.map((h) => inField(struct, field, () => decodeHash(h)));
}

/** Transaction arguments (geth ethapi.TransactionArgs); unknown fields are ignored as in Go. */
function decodeCallRequest(node: JsonNode): CallRequest {
  if (node.kind === "null") return {};
  if (node.kind !== "object") throw typeError(goValueKind(node), "ethapi.TransactionArgs");
  const f = objectEntries(node);
  const out: CallRequest = {};
  const field = <T>(name: string, dec: (n: JsonNode) => T): T | undefined => {
    const v = f.get(name.toLowerCase());
    if (v === undefined || v.kind === "null") return undefined;
    return inField("TransactionArgs", name, () => dec(v));
  };
  const from = field("from", decodeAddress);
  if (from !== undefined) out.from = from;
  const to = field("to", decodeAddress);
  if (to !== undefined) out.to = to;
  const gas = field("gas", decodeUint64);
  if (gas !== undefined) out.gas = gas;
  const gasPrice = field("gasPrice", decodeBig);
  if (gasPrice !== undefined) out.gasPrice = gasPrice;
  const maxFee = field("maxFeePerGas", decodeBig);
  if (maxFee !== undefined) out.maxFeePerGas = maxFee;
  const maxTip = field("maxPriorityFeePerGas", decodeBig);
  if (maxTip !== undefined) out.maxPriorityFeePerGas = maxTip;
  const maxBlob = field("maxFeePerBlobGas", decodeBig);
  if (maxBlob !== undefined) out.maxFeePerBlobGas = maxBlob;
  const value = field("value", decodeBig);
  if (value !== undefined) out.value = value;
  const nonce = field("nonce", decodeUint64);
  if (nonce !== undefined) out.nonce = nonce;
  const data = field("data", decodeBytes);
  const input = field("input", decodeBytes);
  if (data !== undefined && input !== undefined && Buffer.compare(data, input) !== 0) {
    throw new ParamError(
      'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data',
    );
  }
  const callData = input ?? data;
  if (callData !== undefined) out.data = callData;
  const accessList = field("accessList", decodeAccessList);
  if (accessList !== undefined) out.accessList = accessList;
  const chainId = field("chainId", decodeBig);
  if (chainId !== undefined) out.chainId = chainId;
  const hashes = field("blobVersionedHashes", (n) => hashList(n, "TransactionArgs", "blobVersionedHashes"));
  if (hashes !== undefined) out.blobVersionedHashes = hashes;
  const auths = field("authorizationList", decodeAuthorizationList);
  if (auths !== undefined) out.authorizationList = auths;
  const type = field("type", decodeUint64);
  if (type !== undefined) {
    if (type > 0xffn) throw new ParamError(`transaction type 0x${type.toString(16)} is not a valid type byte`);
    out.type = Number(type);
  }
  return out;
}

function decodeSlotMap(node: JsonNode, field: string): Map<string, Uint8Array> {
  if (node.kind !== "object") throw typeError(goValueKind(node), "map[common.Hash]common.Hash");
  const out = new Map<string, Uint8Array>();
  for (const [k, v] of node.entries) {
    const key = inField("OverrideAccount", field, () =>
      decodeHash({ kind: "string", value: k, raw: JSON.stringify(k) }),
    );
    out.set(
      `0x${Buffer.from(key).toString("hex")}`,
      inField("OverrideAccount", field, () => decodeHash(v)),
    );
  }
  return out;
}

/** geth override.StateOverride: address → {balance, nonce, code, state, stateDiff, movePrecompileToAddress}. */
function decodeStateOverrides(node: JsonNode): StateOverrides {
  if (node.kind === "null") return new Map();
  if (node.kind !== "object") throw typeError(goValueKind(node), "override.StateOverride");
  const out = new Map<string, AccountOverride>();
  for (const [addrText, acct] of node.entries) {
    const addr = decodeAddress({ kind: "string", value: addrText, raw: JSON.stringify(addrText) });
    const key = `0x${Buffer.from(addr).toString("hex")}`;
    if (acct.kind === "null") {
      out.set(key, {});
      continue;
    }
    if (acct.kind !== "object") throw typeError(goValueKind(acct), "override.OverrideAccount");
    const f = objectEntries(acct);
    const o: AccountOverride = {};
    const get = <T>(name: string, dec: (n: JsonNode) => T): T | undefined => {
      const v = f.get(name.toLowerCase());
      return v === undefined || v.kind === "null" ? undefined : inField("OverrideAccount", name, () => dec(v));
    };
    const balance = get("balance", decodeBig);
    if (balance !== undefined) o.balance = balance;
    const nonce = get("nonce", decodeUint64);
    if (nonce !== undefined) o.nonce = nonce;
    const code = get("code", decodeBytes);
    if (code !== undefined) o.code = code;
    const state = get("state", (n) => decodeSlotMap(n, "state"));
    const stateDiff = get("stateDiff", (n) => decodeSlotMap(n, "stateDiff"));
    if (state !== undefined && stateDiff !== undefined) {
      throw new ParamError(`account ${key} has both 'state' and 'stateDiff'`);
    }
    if (state !== undefined) o.state = state;
    if (stateDiff !== undefined) o.stateDiff = stateDiff;
    const move = get("movePrecompileToAddress", decodeAddress);
    if (move !== undefined) o.movePrecompileToAddress = move;
    out.set(key, o);
  }
  return out;
}

/** Filter criteria (geth filters.FilterCriteria) before the block range is resolved. */
export interface FilterCriteria {
  readonly blockHash: Uint8Array | undefined;
  readonly fromBlock: BlockSpec | undefined;
  readonly toBlock: BlockSpec | undefined;
  readonly addresses: readonly Uint8Array[];
  readonly topics: readonly (readonly Uint8Array[] | null)[];
}

const MAX_ADDRESSES = 1000;
const MAX_TOPICS = 4;
const MAX_SUB_TOPICS = 1000;

function decodeFilterAddress(s: string, what: string): Uint8Array {
  const b = plainHexDecode(s);
  if (b.length !== 20)
    throw new ParamError(`hex has invalid length ${b.length} after decoding; expected 20 for ${what}`);
  return b;
}

function decodeTopic(node: JsonNode): Uint8Array {
  if (node.kind !== "string") throw new ParamError("invalid topic(s)");
  const b = plainHexDecode(node.value);
  if (b.length !== 32) throw new ParamError(`hex has invalid length ${b.length} after decoding; expected 32 for topic`);
  return b;
}

function decodeFilterCriteria(node: JsonNode): FilterCriteria {
  if (node.kind === "null")
    return { blockHash: undefined, fromBlock: undefined, toBlock: undefined, addresses: [], topics: [] };
  if (node.kind !== "object") throw typeError(goValueKind(node), "filters.FilterCriteria");
  const f = objectEntries(node);
  const present = (name: string) => {
    const v = f.get(name);
    return v === undefined || v.kind === "null" ? undefined : v;
  };
  const hashNode = present("blockhash");
  const fromNode = present("fromblock");
  const toNode = present("toblock");
  if (hashNode !== undefined && (fromNode !== undefined || toNode !== undefined)) {
    throw new ParamError("cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other");
  }
  const blockHash = hashNode === undefined ? undefined : decodeHash(hashNode);
  const fromBlock = fromNode === undefined ? undefined : decodeBlockSpec(fromNode);
  const toBlock = toNode === undefined ? undefined : decodeBlockSpec(toNode);

  const addresses: Uint8Array[] = [];
  const addrNode = present("address");
  if (addrNode !== undefined) {
    if (addrNode.kind === "array") {
      if (addrNode.items.length > MAX_ADDRESSES) throw new ParamError("exceed max addresses");
      addrNode.items.forEach((a, i) => {
        if (a.kind !== "string") throw new ParamError(`non-string address at index ${i}`);
        try {
          addresses.push(decodeFilterAddress(a.value, "address"));
        } catch (err) {
          throw new ParamError(`invalid address at index ${i}: ${(err as Error).message}`);
        }
      });
    } else if (addrNode.kind === "string") {
      try {
        addresses.push(decodeFilterAddress(addrNode.value, "address"));
      } catch (err) {
        throw new ParamError(`invalid address: ${(err as Error).message}`);
      }
    } else {
      throw new ParamError("invalid addresses in query");
    }
  }

  const topics: (Uint8Array[] | null)[] = [];
  const topicsNode = present("topics");
  if (topicsNode !== undefined) {
    if (topicsNode.kind !== "array") throw typeError(goValueKind(topicsNode), "[]interface {}");
    if (topicsNode.items.length > MAX_TOPICS) throw new ParamError("exceed max topics");
    for (const t of topicsNode.items) {
      if (t.kind === "null") topics.push(null);
      else if (t.kind === "string") topics.push([decodeTopic(t)]);
      else if (t.kind === "array") {
        if (t.items.length > MAX_SUB_TOPICS) throw new ParamError("exceed max topics");
        // A null inside an OR list makes the whole position a wildcard.
        const alternatives: Uint8Array[] = [];
        let wildcard = false;
        for (const sub of t.items) {
          if (sub.kind === "null") wildcard = true;
          else alternatives.push(decodeTopic(sub));
        }
        topics.push(wildcard ? null : alternatives);
      } else throw new ParamError("invalid topic(s)");
    }
  }
  return { blockHash, fromBlock, toBlock, addresses, topics };
}

/** eth_simulateV1's first argument (geth simOpts), with returnFullTransactions. */
export interface SimulateParams extends SimulateInput {
  readonly returnFullTransactions: boolean;
}

type SimulateOverride = NonNullable<SimulateBlockSpec["stateOverrides"]>[number];
type SimulateBlockOverride = NonNullable<SimulateBlockSpec["blockOverrides"]>;

function slotList(m: ReadonlyMap<string, Uint8Array>): { slot: Uint8Array; value: Uint8Array }[] {
  return [...m].map(([slot, value]) => ({ slot: new Uint8Array(Buffer.from(slot.slice(2), "hex")), value }));
}

/** The state overrides of one simulated block, as the app takes them (address order kept). */
function simulateOverrides(o: StateOverrides): SimulateOverride[] {
  const out: SimulateOverride[] = [];
  for (const [addr, a] of o) {
    out.push({
      address: new Uint8Array(Buffer.from(addr.slice(2), "hex")),
      ...(a.nonce === undefined ? {} : { nonce: a.nonce }),
      ...(a.balance === undefined ? {} : { balance: a.balance }),
      ...(a.code === undefined ? {} : { code: a.code }),
      ...(a.state === undefined ? {} : { state: slotList(a.state) }),
      ...(a.stateDiff === undefined ? {} : { stateDiff: slotList(a.stateDiff) }),
      ...(a.movePrecompileToAddress === undefined ? {} : { movePrecompileToAddress: a.movePrecompileToAddress }),
    });
  }
  return out;
}

/** geth types.Withdrawals. */
function decodeWithdrawals(node: JsonNode): NonNullable<SimulateBlockOverride["withdrawals"]> {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "types.Withdrawals");
  return node.items.map((item) => {
    if (item.kind !== "object") throw typeError(goValueKind(item), "types.Withdrawal");
    const f = objectEntries(item);
    const need = <T>(name: string, dec: (n: JsonNode) => T): T => {
      const v = f.get(name.toLowerCase());
      if (v === undefined || v.kind === "null") throw new ParamError(`missing required field '${name}' for Withdrawal`);
      return inField("Withdrawal", name, () => dec(v));
    };
    return {
      index: need("index", decodeUint64),
      validatorIndex: need("validatorIndex", decodeUint64),
      address: need("address", decodeAddress),
      amount: need("amount", decodeUint64),
    };
  });
}

/** geth override.BlockOverrides. */
function decodeBlockOverrides(node: JsonNode): SimulateBlockOverride {
  if (node.kind === "null") return {};
  if (node.kind !== "object") throw typeError(goValueKind(node), "override.BlockOverrides");
  const f = objectEntries(node);
  const out: SimulateBlockOverride = {};
  const get = <T>(name: string, dec: (n: JsonNode) => T): T | undefined => {
    const v = f.get(name.toLowerCase());
    // The Go struct has no JSON tags: an error names the Go field (`Number`, `FeeRecipient`).
    const goName = `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    return v === undefined || v.kind === "null" ? undefined : inField("BlockOverrides", goName, () => dec(v));
  };
  const number = get("number", decodeBig);
  if (number !== undefined) out.number = number;
  const difficulty = get("difficulty", decodeBig);
  if (difficulty !== undefined) out.difficulty = difficulty;
  const time = get("time", decodeUint64);
  if (time !== undefined) out.time = time;
  const gasLimit = get("gasLimit", decodeUint64);
  if (gasLimit !== undefined) out.gasLimit = gasLimit;
  const feeRecipient = get("feeRecipient", decodeAddress);
  if (feeRecipient !== undefined) out.feeRecipient = feeRecipient;
  const prevRandao = get("prevRandao", decodeHash);
  if (prevRandao !== undefined) out.prevRandao = prevRandao;
  const baseFee = get("baseFeePerGas", decodeBig);
  if (baseFee !== undefined) out.baseFeePerGas = baseFee;
  const blobBaseFee = get("blobBaseFee", decodeBig);
  if (blobBaseFee !== undefined) out.blobBaseFee = blobBaseFee;
  const beaconRoot = get("beaconRoot", decodeHash);
  if (beaconRoot !== undefined) out.beaconRoot = beaconRoot;
  const withdrawals = get("withdrawals", decodeWithdrawals);
  if (withdrawals !== undefined) out.withdrawals = withdrawals;
  return out;
}

/** geth simOpts: {blockStateCalls: [{blockOverrides, stateOverrides, calls}], traceTransfers, validation, returnFullTransactions}. */
function decodeSimulateParams(node: JsonNode): SimulateParams {
  if (node.kind !== "object" && node.kind !== "null") throw typeError(goValueKind(node), "ethapi.simOpts");
  const f = objectEntries(node);
  const flag = (name: string) => {
    const v = f.get(name.toLowerCase());
    return v === undefined ? false : inField("simOpts", name, () => decodeBool(v));
  };
  const blocksNode = f.get("blockstatecalls");
  const blocks: SimulateBlockSpec[] = [];
  if (blocksNode !== undefined && blocksNode.kind !== "null") {
    if (blocksNode.kind !== "array") throw typeError(goValueKind(blocksNode), "[]ethapi.simBlock");
    for (const b of blocksNode.items) {
      if (b.kind === "null") {
        blocks.push({ calls: [] });
        continue;
      }
      if (b.kind !== "object") throw typeError(goValueKind(b), "ethapi.simBlock");
      const bf = objectEntries(b);
      const spec: SimulateBlockSpec = { calls: [] };
      const bo = bf.get("blockoverrides");
      const blockOverrides = bo === undefined || bo.kind === "null" ? undefined : decodeBlockOverrides(bo);
      const so = bf.get("stateoverrides");
      const stateOverrides = so === undefined || so.kind === "null" ? undefined : decodeStateOverrides(so);
      const callsNode = bf.get("calls");
      const calls: CallRequest[] = [];
      if (callsNode !== undefined && callsNode.kind !== "null") {
        if (callsNode.kind !== "array") throw typeError(goValueKind(callsNode), "[]ethapi.TransactionArgs");
        for (const c of callsNode.items) calls.push(decodeCallRequest(c));
      }
      blocks.push({
        ...spec,
        calls,
        ...(blockOverrides === undefined ? {} : { blockOverrides }),
        ...(stateOverrides === undefined ? {} : { stateOverrides: simulateOverrides(stateOverrides) }),
      });
    }
  }
  return {
    blocks,
    traceTransfers: flag("traceTransfers"),
    validation: flag("validation"),
    returnFullTransactions: flag("returnFullTransactions"),
  };
}

const DEFAULT_TRACE_TIMEOUT_MS = 5000;
/** geth's native tracers served here (the struct logger is the default, without a name). */
const TRACERS = ["callTracer", "prestateTracer", "4byteTracer", "noopTracer"] as const;

/** geth tracers.TraceConfig (one of TRACERS, or the struct logger). */
function decodeTraceConfig(node: JsonNode): TraceConfig {
  const f = objectEntries(node);
  if (node.kind !== "object" && node.kind !== "null") throw typeError(goValueKind(node), "tracers.TraceConfig");
  const get = <T>(name: string, dec: (n: JsonNode) => T, zero: T): T => {
    const v = f.get(name.toLowerCase());
    return v === undefined || v.kind === "null" ? zero : inField("TraceConfig", name, () => dec(v));
  };
  const tracerName = get("tracer", decodeString, "");
  if (tracerName !== "" && !(TRACERS as readonly string[]).includes(tracerName)) {
    throw new ParamError(
      `tracer ${JSON.stringify(tracerName)} is not supported; use one of ${TRACERS.map((t) => JSON.stringify(t)).join(", ")} or omit the tracer`,
    );
  }
  const timeoutText = get("timeout", decodeString, "");
  let timeoutMs = DEFAULT_TRACE_TIMEOUT_MS;
  if (timeoutText !== "") {
    const ns = parseGoDuration(timeoutText);
    if (ns === undefined || ns < 0n) throw new ParamError(`time: invalid duration ${JSON.stringify(timeoutText)}`);
    timeoutMs = Number(ns / 1_000_000n);
  }
  const cfgNode = f.get("tracerconfig");
  const cfg = cfgNode === undefined ? new Map<string, JsonNode>() : objectEntries(cfgNode);
  const configType = tracerName === "prestateTracer" ? "prestateTracerConfig" : "callTracerConfig";
  const flag = (name: string) => {
    const v = cfg.get(name.toLowerCase());
    return v === undefined ? false : inField(configType, name, () => decodeBool(v));
  };
  const prestate = tracerName === "prestateTracer";
  const limit = get("limit", jsonInt("uint"), 0);
  // geth's TraceCallConfig (debug_traceCall): the state overrides eth_call takes.
  const so = f.get("stateoverrides");
  const stateOverrides =
    so === undefined || so.kind === "null"
      ? undefined
      : inField("TraceCallConfig", "StateOverrides", () => decodeStateOverrides(so));
  const bo = f.get("blockoverrides");
  const blockOverrides =
    bo === undefined || bo.kind === "null"
      ? undefined
      : inField("TraceCallConfig", "BlockOverrides", () => decodeBlockOverrides(bo));
  return {
    ...(stateOverrides === undefined ? {} : { stateOverrides }),
    ...(blockOverrides === undefined ? {} : { blockOverrides }),
    tracer: tracerName === "" ? undefined : (tracerName as (typeof TRACERS)[number]),
    onlyTopCall: !prestate && flag("onlyTopCall"),
    withLog: !prestate && flag("withLog"),
    diffMode: prestate && flag("diffMode"),
    tracerDisableCode: prestate && flag("disableCode"),
    tracerDisableStorage: prestate && flag("disableStorage"),
    disableStack: get("disableStack", decodeBool, false),
    disableStorage: get("disableStorage", decodeBool, false),
    enableMemory: get("enableMemory", decodeBool, false),
    enableReturnData: get("enableReturnData", decodeBool, false),
    limit,
    timeoutMs,
  };
}

/** math.HexOrDecimal64 (eth_feeHistory blockCount): "0x10", "16" or 16. */
function decodeHexOrDecimal64(node: JsonNode): bigint {
  let text: string;
  if (node.kind === "string") text = node.value;
  else if (node.kind === "number") text = node.raw;
  else throw new ParamError(`invalid hex or decimal integer ${node.raw}`);
  const ok = has0x(text) ? /^0[xX][0-9a-fA-F]{1,16}$/.test(text) : /^\d{1,20}$/.test(text);
  const v = ok ? BigInt(text) : -1n;
  if (v < 0n || v >= 1n << 64n) throw new ParamError(`invalid hex or decimal integer ${JSON.stringify(text)}`);
  return v;
}

function decodeFloatList(node: JsonNode): number[] {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "[]float64");
  return node.items.map((n) => {
    if (n.kind !== "number") throw typeError(goValueKind(n), "float64");
    return Number(n.raw);
  });
}

function decodeStringList(node: JsonNode): string[] {
  if (node.kind === "null") return [];
  if (node.kind !== "array") throw typeError(goValueKind(node), "[]string");
  return node.items.map((n) => {
    if (n.kind !== "string") throw typeError(goValueKind(n), "string");
    return n.value;
  });
}

/** Go int/uint from a JSON number (debug_setGCPercent, debug_cpuProfile seconds). */
function jsonInt(goType: "int" | "uint") {
  return (node: JsonNode): number => {
    if (node.kind === "null") return 0;
    if (node.kind !== "number") throw typeError(goValueKind(node), goType);
    if (!/^-?\d+$/.test(node.raw)) throw typeError(`number ${node.raw}`, goType);
    const v = Number(node.raw);
    if (!Number.isSafeInteger(v) || (goType === "uint" && v < 0)) throw typeError(`number ${node.raw}`, goType);
    return v;
  };
}

/** A JSON value passed through untouched (EIP-712 typed data). */
function decodeAny(node: JsonNode): JsonNode {
  return node;
}

/** An optional argument: absent or null gives undefined. */
function optional<T>(inner: Param<T>): Param<T | undefined> {
  return { optional: true, decode: (node) => (node.kind === "null" ? undefined : inner.decode(node)) };
}

/** The argument codecs namespaces declare their methods with. */
export const p = {
  address: required(decodeAddress),
  hash: required(decodeHash),
  data: required(decodeBytes),
  /** *hexutil.Big: up to 256 bits. */
  quantity: required(decodeBig),
  uint64: required(decodeUint64),
  /** hexutil.Uint (indexes). */
  index: required(decodeUint),
  bool: required(decodeBool),
  string: required(decodeString),
  stringList: required(decodeStringList),
  floatList: required(decodeFloatList),
  hexOrDecimal: required(decodeHexOrDecimal64),
  /** rpc.BlockNumber. */
  block: required(decodeBlockSpec),
  /** rpc.BlockNumberOrHash. */
  blockRef: required(decodeBlockRef),
  callRequest: required(decodeCallRequest),
  stateOverrides: required(decodeStateOverrides),
  simulateParams: required(decodeSimulateParams),
  filter: required(decodeFilterCriteria),
  traceConfig: required(decodeTraceConfig),
  any: required(decodeAny),
  /** Go int as a JSON number. */
  int: required(jsonInt("int")),
  /** Go uint as a JSON number. */
  uint: required(jsonInt("uint")),
  optional,
};
