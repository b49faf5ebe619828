import { ComethError } from "../../../util/errors.js";
import type { JsonNode } from "../../jsonrpc/index.js";
import { keccak256 } from "./signatures.js";

/**
 * EIP-712 typed-data hashing (eth_signTypedData): encodeType with sorted dependencies,
 * encodeData for atomic, dynamic, array and struct members, and the final
 * keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message)).
 */

export class TypedDataError extends ComethError {}

type Field = { name: string; type: string };
type Types = Map<string, Field[]>;

function entries(node: JsonNode | undefined): Map<string, JsonNode> {
  const m = new Map<string, JsonNode>();
  if (node?.kind === "object") for (const [k, v] of node.entries) m.set(k, v);
  return m;
}

function str(node: JsonNode | undefined, what: string): string {
  if (node?.kind !== "string") throw new TypedDataError(`${what} must be a string`);
  return node.value;
}

function parseTypes(node: JsonNode | undefined): Types {
  if (node?.kind !== "object") throw new TypedDataError('typed data needs a "types" object');
  const types: Types = new Map();
  for (const [name, list] of node.entries) {
    if (list.kind !== "array") throw new TypedDataError(`types.${name} must be an array of {name, type}`);
    types.set(
      name,
      list.items.map((f) => {
        const e = entries(f);
        return { name: str(e.get("name"), `types.${name}[].name`), type: str(e.get("type"), `types.${name}[].type`) };
      }),
    );
  }
  return types;
}

function baseType(t: string): string {
  const i = t.indexOf("[");
  return i < 0 ? t : t.slice(0, i);
}

function dependencies(primary: string, types: Types, found: Set<string> = new Set()): Set<string> {
  if (found.has(primary) || !types.has(primary)) return found;
  found.add(primary);
  for (const f of types.get(primary) ?? []) dependencies(baseType(f.type), types, found);
  return found;
}

function encodeType(primary: string, types: Types): string {
  const deps = [...dependencies(primary, types)].filter((d) => d !== primary).sort();
  return [primary, ...deps]
    .map((t) => `${t}(${(types.get(t) ?? []).map((f) => `${f.type} ${f.name}`).join(",")})`)
    .join("");
}

function toBigInt(node: JsonNode, type: string): bigint {
  let v: bigint;
  try {
    if (node.kind === "number") v = BigInt(node.raw);
    else if (node.kind === "string") v = BigInt(node.value);
    else throw new TypedDataError(`${type} value must be a number or a numeric string`);
  } catch (err) {
    if (err instanceof TypedDataError) throw err;
    throw new TypedDataError(`${type} value ${node.raw} is not an integer`);
  }
  return v;
}

function word(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let x = v;
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function hexBytes(node: JsonNode, what: string): Uint8Array {
  const s = str(node, what);
  if (!/^0x([0-9a-fA-F]{2})*$/.test(s)) throw new TypedDataError(`${what} must be 0x-prefixed even-length hex`);
  return new Uint8Array(Buffer.from(s.slice(2), "hex"));
}

function encodeValue(type: string, node: JsonNode, types: Types): Uint8Array {
  if (type.endsWith("]")) {
    if (node.kind !== "array") throw new TypedDataError(`${type} value must be an array`);
    const inner = type.slice(0, type.lastIndexOf("["));
    return keccak256(Buffer.concat(node.items.map((item) => encodeValue(inner, item, types))));
  }
  if (types.has(type)) return hashStruct(type, node, types);
  if (type === "string") return keccak256(Buffer.from(str(node, "string value"), "utf8"));
  if (type === "bytes") return keccak256(hexBytes(node, "bytes value"));
  if (type === "bool") {
    if (node.kind !== "bool") throw new TypedDataError("bool value must be true or false");
    return word(node.value ? 1n : 0n);
  }
  if (type === "address") {
    const b = hexBytes(node, "address value");
    if (b.length !== 20) throw new TypedDataError("address value must be 20 bytes");
    return word(BigInt(`0x${Buffer.from(b).toString("hex")}`));
  }
  const bytesN = /^bytes(\d+)$/.exec(type);
  if (bytesN !== null) {
    const size = Number(bytesN[1]);
    const b = hexBytes(node, `${type} value`);
    if (size < 1 || size > 32 || b.length > size)
      throw new TypedDataError(`${type} value is longer than ${size} bytes`);
    const out = new Uint8Array(32);
    out.set(b);
    return out;
  }
  const intN = /^(u?)int(\d*)$/.exec(type);
  if (intN !== null) {
    const bits = intN[2] === "" ? 256 : Number(intN[2]);
    const v = toBigInt(node, type);
    const unsigned = intN[1] === "u";
    const min = unsigned ? 0n : -(1n << BigInt(bits - 1));
    const max = unsigned ? (1n << BigInt(bits)) - 1n : (1n << BigInt(bits - 1)) - 1n;
    if (v < min || v > max) throw new TypedDataError(`${type} value ${v} is out of range`);
    return word(v < 0n ? (1n << 256n) + v : v);
  }
  throw new TypedDataError(`unknown type ${JSON.stringify(type)}`);
}

function hashStruct(type: string, node: JsonNode, types: Types): Uint8Array {
  if (node.kind !== "object") throw new TypedDataError(`${type} value must be an object`);
  const values = entries(node);
  const parts: Uint8Array[] = [keccak256(Buffer.from(encodeType(type, types), "utf8"))];
  for (const f of types.get(type) ?? []) {
    const v = values.get(f.name);
    // A missing member is an error, as in geth's and ethers' encoders.
    if (v === undefined || v.kind === "null") throw new TypedDataError(`${type}.${f.name} is missing`);
    parts.push(encodeValue(f.type, v, types));
  }
  return keccak256(Buffer.concat(parts));
}

/** The digest eth_signTypedData signs. */
export function typedDataHash(typedData: JsonNode): Uint8Array {
  if (typedData.kind !== "object") throw new TypedDataError("typed data must be an object");
  const top = entries(typedData);
  const types = parseTypes(top.get("types"));
  const primary = str(top.get("primaryType"), "primaryType");
  if (!types.has(primary)) throw new TypedDataError(`primaryType ${primary} is not among the types`);
  if (!types.has("EIP712Domain")) throw new TypedDataError("types must define EIP712Domain");
  const domain = hashStruct("EIP712Domain", top.get("domain") ?? { kind: "object", entries: [], raw: "{}" }, types);
  const message = hashStruct(primary, top.get("message") ?? { kind: "null", raw: "null" }, types);
  return keccak256(Buffer.concat([Uint8Array.from([0x19, 0x01]), domain, message]));
}
