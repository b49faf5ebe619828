import { bytesToHex, hexToBytes } from "../../util/bytes.js";
import { CHECK_TX_CODES, InvalidEthTxError } from "./errors.js";

/**
 * Dev entries: what a dev chain's cheat methods (setBalance, setCode, impersonated sends, loadState…)
 * put into a block, so that every state change still goes through consensus, the WAL, block_results
 * and the app hash. An entry is a CometBFT tx whose bytes are `cometh-dev:` followed by JSON. The
 * first byte ('c', 0x63) is no Ethereum tx type, so an entry can never be mistaken for an Ethereum
 * tx. Only a chain whose genesis sets `app_state.evm.dev_chain` accepts them: anywhere else CheckTx
 * refuses them and ProcessProposal rejects a block carrying one. docs/dev-chain.md describes them.
 */

export const DEV_ENTRY_PREFIX = new TextEncoder().encode("cometh-dev:");

/** A state change applied directly at its place in the block. */
export type DevCheat =
  | { op: "setBalance"; address: Uint8Array; value: bigint }
  | { op: "setNonce"; address: Uint8Array; value: bigint }
  | { op: "setCode"; address: Uint8Array; code: Uint8Array }
  | { op: "setStorageAt"; address: Uint8Array; slot: Uint8Array; value: Uint8Array }
  | { op: "setCoinbase"; address: Uint8Array }
  | { op: "setNextBaseFee"; value: bigint }
  | { op: "setMinGasPrice"; value: bigint }
  | { op: "setBlockGasLimit"; value: bigint }
  | { op: "loadState"; accounts: DevAccountState[] };

export interface DevAccountState {
  address: Uint8Array;
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  /** 32-byte slot → 32-byte value; the account's other slots are cleared. */
  storage: { slot: Uint8Array; value: Uint8Array }[];
}

/** A transaction sent from an impersonated address: executed as signed by `from`, without a signature. */
export interface DevSend {
  op: "send";
  from: Uint8Array;
  type: 0 | 1 | 2;
  nonce: bigint;
  gasLimit: bigint;
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  accessList: { address: Uint8Array; storageKeys: Uint8Array[] }[];
}

export type DevEntry = DevCheat | DevSend;

export function isDevEntry(raw: Uint8Array): boolean {
  if (raw.length < DEV_ENTRY_PREFIX.length) return false;
  for (let i = 0; i < DEV_ENTRY_PREFIX.length; i++) if (raw[i] !== DEV_ENTRY_PREFIX[i]) return false;
  return true;
}

export const hex = (b: Uint8Array) => `0x${bytesToHex(b)}`;
const qty = (n: bigint) => `0x${n.toString(16)}`;

let entrySeq = 0;

/**
 * Encodes an entry. `nonce` makes two equal cheats two different txs (the mempool and its cache key
 * txs by hash); it is a process counter with the time, never read back.
 */
export function encodeDevEntry(e: DevEntry): Uint8Array {
  const body: Record<string, unknown> = { op: e.op, id: `${Date.now().toString(36)}.${(entrySeq++).toString(36)}` };
  switch (e.op) {
    case "setBalance":
    case "setNonce":
      body.address = hex(e.address);
      body.value = qty(e.value);
      break;
    case "setCode":
      body.address = hex(e.address);
      body.code = hex(e.code);
      break;
    case "setStorageAt":
      body.address = hex(e.address);
      body.slot = hex(e.slot);
      body.value = hex(e.value);
      break;
    case "setCoinbase":
      body.address = hex(e.address);
      break;
    case "setNextBaseFee":
    case "setMinGasPrice":
    case "setBlockGasLimit":
      body.value = qty(e.value);
      break;
    case "loadState":
      body.accounts = e.accounts.map((a) => ({
        address: hex(a.address),
        nonce: qty(a.nonce),
        balance: qty(a.balance),
        code: hex(a.code),
        storage: a.storage.map((s) => [hex(s.slot), hex(s.value)]),
      }));
      break;
    case "send":
      body.from = hex(e.from);
      body.type = e.type;
      body.nonce = qty(e.nonce);
      body.gas = qty(e.gasLimit);
      if (e.to !== undefined) body.to = hex(e.to);
      body.value = qty(e.value);
      body.data = hex(e.data);
      if (e.gasPrice !== undefined) body.gasPrice = qty(e.gasPrice);
      if (e.maxFeePerGas !== undefined) body.maxFeePerGas = qty(e.maxFeePerGas);
      if (e.maxPriorityFeePerGas !== undefined) body.maxPriorityFeePerGas = qty(e.maxPriorityFeePerGas);
      body.accessList = e.accessList.map((a) => [hex(a.address), a.storageKeys.map(hex)]);
      break;
  }
  const json = new TextEncoder().encode(JSON.stringify(body));
  const out = new Uint8Array(DEV_ENTRY_PREFIX.length + json.length);
  out.set(DEV_ENTRY_PREFIX, 0);
  out.set(json, DEV_ENTRY_PREFIX.length);
  return out;
}

/** A malformed dev entry (CheckTx code 2). */
export function invalidDevEntry(reason: string): InvalidEthTxError {
  return new InvalidEthTxError(CHECK_TX_CODES.txDecode, `invalid dev entry: ${reason}`);
}

function bytesField(o: Record<string, unknown>, name: string, length?: number): Uint8Array {
  const v = o[name];
  const b = typeof v === "string" && v.startsWith("0x") ? hexToBytes(v) : undefined;
  if (b === undefined) throw invalidDevEntry(`${name} must be 0x-hex`);
  if (length !== undefined && b.length !== length)
    throw invalidDevEntry(`${name} must be ${length} bytes, got ${b.length}`);
  return b;
}

function word(b: Uint8Array, name: string): Uint8Array {
  if (b.length > 32) throw invalidDevEntry(`${name} is longer than 32 bytes`);
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

function qtyField(o: Record<string, unknown>, name: string, max = (1n << 256n) - 1n): bigint {
  const v = o[name];
  if (typeof v !== "string" || !/^0x[0-9a-fA-F]+$/.test(v)) throw invalidDevEntry(`${name} must be a 0x quantity`);
  const n = BigInt(v);
  if (n > max) throw invalidDevEntry(`${name} is too large`);
  return n;
}

const U64_MAX = (1n << 64n) - 1n;

/** Decodes an entry's bytes; throws InvalidEthTxError (txDecode) on anything malformed. */
export function decodeDevEntry(raw: Uint8Array): DevEntry {
  if (!isDevEntry(raw)) throw invalidDevEntry("missing the cometh-dev: prefix");
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw.subarray(DEV_ENTRY_PREFIX.length)));
  } catch {
    throw invalidDevEntry("the body is not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalidDevEntry("the body is not an object");
  const o = body as Record<string, unknown>;
  switch (o.op) {
    case "setBalance":
      return { op: "setBalance", address: bytesField(o, "address", 20), value: qtyField(o, "value") };
    case "setNonce":
      return { op: "setNonce", address: bytesField(o, "address", 20), value: qtyField(o, "value", U64_MAX) };
    case "setCode":
      return { op: "setCode", address: bytesField(o, "address", 20), code: bytesField(o, "code") };
    case "setStorageAt":
      return {
        op: "setStorageAt",
        address: bytesField(o, "address", 20),
        slot: word(bytesField(o, "slot"), "slot"),
        value: word(bytesField(o, "value"), "value"),
      };
    case "setCoinbase":
      return { op: "setCoinbase", address: bytesField(o, "address", 20) };
    case "setNextBaseFee":
    case "setMinGasPrice":
      return { op: o.op, value: qtyField(o, "value") };
    case "setBlockGasLimit":
      return { op: "setBlockGasLimit", value: qtyField(o, "value", (1n << 63n) - 1n) };
    case "loadState": {
      if (!Array.isArray(o.accounts)) throw invalidDevEntry("accounts must be a list");
      return {
        op: "loadState",
        accounts: o.accounts.map((a: unknown) => {
          if (typeof a !== "object" || a === null) throw invalidDevEntry("an account is not an object");
          const r = a as Record<string, unknown>;
          if (!Array.isArray(r.storage)) throw invalidDevEntry("storage must be a list");
          return {
            address: bytesField(r, "address", 20),
            nonce: qtyField(r, "nonce", U64_MAX),
            balance: qtyField(r, "balance"),
            code: bytesField(r, "code"),
            storage: r.storage.map((s: unknown) => {
              if (!Array.isArray(s) || s.length !== 2) throw invalidDevEntry("a storage entry is not [slot, value]");
              const pair = { slot: s[0], value: s[1] } as Record<string, unknown>;
              return { slot: word(bytesField(pair, "slot"), "slot"), value: word(bytesField(pair, "value"), "value") };
            }),
          };
        }),
      };
    }
    case "send": {
      const type = o.type;
      if (type !== 0 && type !== 1 && type !== 2) throw invalidDevEntry("type must be 0, 1 or 2");
      if (!Array.isArray(o.accessList)) throw invalidDevEntry("accessList must be a list");
      const send: DevSend = {
        op: "send",
        from: bytesField(o, "from", 20),
        type,
        nonce: qtyField(o, "nonce", U64_MAX),
        gasLimit: qtyField(o, "gas", U64_MAX),
        to: o.to === undefined ? undefined : bytesField(o, "to", 20),
        value: qtyField(o, "value"),
        data: bytesField(o, "data"),
        accessList: o.accessList.map((e: unknown) => {
          if (!Array.isArray(e) || e.length !== 2 || !Array.isArray(e[1]))
            throw invalidDevEntry("an access list entry is malformed");
          return {
            address: bytesField({ a: e[0] }, "a", 20),
            storageKeys: (e[1] as unknown[]).map((k) => word(bytesField({ k }, "k"), "storage key")),
          };
        }),
      };
      if (o.gasPrice !== undefined) send.gasPrice = qtyField(o, "gasPrice");
      if (o.maxFeePerGas !== undefined) send.maxFeePerGas = qtyField(o, "maxFeePerGas");
      if (o.maxPriorityFeePerGas !== undefined) send.maxPriorityFeePerGas = qtyField(o, "maxPriorityFeePerGas");
      if (type === 2 && (send.maxFeePerGas === undefined || send.maxPriorityFeePerGas === undefined)) {
        throw invalidDevEntry("a type 2 send needs maxFeePerGas and maxPriorityFeePerGas");
      }
      if (type !== 2 && send.gasPrice === undefined) throw invalidDevEntry("a type 0 or 1 send needs gasPrice");
      return send;
    }
    default:
      throw invalidDevEntry(`unknown op ${JSON.stringify(o.op)}`);
  }
}
