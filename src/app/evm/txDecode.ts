import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
  createTx,
  getCalldataFloorGas,
  type TypedTransaction,
} from "@ethereumjs/tx";
import { Address } from "@ethereumjs/util";
import { txHashHex } from "../../types/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { keccak256, recoverPublicKey } from "./crypto.js";
import { type DevSend, decodeDevEntry, hex, invalidDevEntry, isDevEntry } from "./devEntries.js";
import { CHECK_TX_CODES, InvalidEthTxError } from "./errors.js";
import { bigintToBytes, bytesToBigint } from "./records.js";
import { rlpEncode } from "./rlpWriter.js";

/** An Ethereum tx decoded, signature-checked and measured once; cached between CheckTx and execution. */
export interface DecodedTx {
  raw: Uint8Array;
  /** sha256 hex of the raw bytes: the CometBFT tx key (also the mempool's). */
  key: string;
  /** keccak256 of the signed encoding: the Ethereum tx hash. */
  hash: Uint8Array;
  tx: TypedTransaction;
  type: number;
  /** undefined for an unprotected (pre-EIP-155) legacy tx. */
  chainId: bigint | undefined;
  from: Uint8Array;
  fromHex: string;
  to: Uint8Array | undefined;
  nonce: bigint;
  gasLimit: bigint;
  /** gasPrice for legacy/2930 txs. */
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  value: bigint;
  /** max(intrinsic gas, EIP-7623 floor): the least gas limit the tx can have. */
  minGas: bigint;
  /** gasLimit·maxFeePerGas + value: what the sender must hold for the tx to be admitted. */
  cost: bigint;
  /** A dev chain's impersonated send: unsigned, and its sender may be a contract. */
  impersonated?: boolean;
}

export interface DecodeContext {
  common: Common;
  chainId: bigint;
  allowUnprotectedTxs: boolean;
  /** A dev chain (genesis `evm.dev_chain`): dev entries are accepted (devEntries.ts). */
  devChain?: boolean;
}

const TX_TYPES = { legacy: 0, accessList: 1, feeMarket: 2, blob: 3, setCode: 4 } as const;

/** The key a tx is cached under: its CometBFT hash (sha256) in hex, as the mempool files it. */
export function txKey(raw: Uint8Array): string {
  return txHashHex(raw);
}

function decodeFail(reason: string, cause?: unknown): InvalidEthTxError {
  return new InvalidEthTxError(
    CHECK_TX_CODES.txDecode,
    `tx parse error: ${reason}. Send a signed Ethereum tx (RLP legacy or an EIP-2718 envelope of type 1, 2 or 4)`,
    cause === undefined ? {} : { cause },
  );
}

/** secp256k1 n / 2: a larger s is a malleated signature (EIP-2), refused as ethereumjs does. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * The signer's address, as ethereumjs' getSenderAddress derives it, but from the decoded RLP fields
 * the tx was built from: the signing payload is the unsigned fields re-encoded (typed: type ‖
 * rlp(fields without v, r, s); EIP-155 legacy: rlp(6 fields ‖ chainId ‖ 0 ‖ 0); unprotected legacy:
 * rlp(6 fields)), which saves serializing the tx object again (~30 µs a tx). The tx object already
 * checked the fields are canonical, so the re-encoding is the signed bytes. Throws when the
 * signature does not recover (bad v, s above n/2, no such point).
 *
 * `known`: the sender another process of this node already recovered from the same bytes with this
 * same function (a read process, for an eth_sendRawTransaction it passes on: DecodedTxCache.hintSender).
 * The checks that need no curve arithmetic (v, y-parity, s ≤ n/2) are still made here; the recovery,
 * ~70 µs of the main thread's time a tx, is not made again.
 */
function recoverSender(
  type: number,
  values: Uint8Array[],
  chainId: bigint | undefined,
  known?: Uint8Array,
): Uint8Array {
  let recid: number;
  let s: Uint8Array;
  if (type === TX_TYPES.legacy) {
    const v = bytesToBigint(values[6] as Uint8Array);
    recid = chainId === undefined ? Number(v - 27n) : Number(v - 35n - 2n * chainId);
    s = values[8] as Uint8Array;
  } else {
    const yParity = bytesToBigint(values[values.length - 3] as Uint8Array);
    if (yParity > 1n) throw new RangeError(`invalid y-parity ${yParity}`);
    recid = Number(yParity);
    s = values[values.length - 1] as Uint8Array;
  }
  if (recid !== 0 && recid !== 1) throw new RangeError("invalid signature v value");
  if (bytesToBigint(s) > HALF_N) throw new RangeError("invalid signature: s above n/2 (EIP-2)");
  if (known !== undefined) return known;
  let message: Uint8Array;
  let r: Uint8Array;
  if (type === TX_TYPES.legacy) {
    const unsigned: Uint8Array[] = values.slice(0, 6);
    if (chainId !== undefined) unsigned.push(bigintToBytes(chainId), new Uint8Array(0), new Uint8Array(0));
    message = rlpEncode(unsigned);
    r = values[7] as Uint8Array;
  } else {
    const n = values.length;
    const body = rlpEncode(values.slice(0, n - 3));
    message = new Uint8Array(body.length + 1);
    message[0] = type;
    message.set(body, 1);
    r = values[n - 2] as Uint8Array;
  }
  return keccak256(recoverPublicKey(keccak256(message), recid, r, s)).subarray(12);
}

function fields(payload: Uint8Array): Uint8Array[] {
  let decoded: unknown;
  try {
    decoded = RLP.decode(payload);
  } catch (err) {
    throw decodeFail(`rlp: ${(err as Error).message}`, err);
  }
  if (!Array.isArray(decoded)) throw decodeFail("expected an RLP list");
  return decoded as Uint8Array[];
}

/** A signed tx's type, its RLP fields and the chain id it is signed for. */
interface Envelope {
  type: number;
  values: Uint8Array[];
  chainId: bigint | undefined;
}

/**
 * decodeEthTx's checks that need no library tx object: the type, the field list, replay protection
 * and the chain id (against the context's).
 */
function envelope(raw: Uint8Array, ctx: DecodeContext): Envelope {
  if (raw.length === 0) throw decodeFail("empty tx");
  const first = raw[0] as number;
  let type: number;
  let values: Uint8Array[];
  let chainId: bigint | undefined;
  if (first >= 0xc0) {
    type = TX_TYPES.legacy;
    values = fields(raw);
    if (values.length !== 9) throw decodeFail(`legacy tx has ${values.length} fields, expected 9`);
    const v = bytesToBigint(values[6] as Uint8Array);
    if (v === 27n || v === 28n) {
      if (!ctx.allowUnprotectedTxs) {
        throw new InvalidEthTxError(
          CHECK_TX_CODES.invalidSigner,
          "only replay-protected (EIP-155) transactions allowed over RPC. Sign with a chain id, or start the node with unprotected txs allowed",
        );
      }
      chainId = undefined;
    } else if (v >= 35n) {
      chainId = (v - 35n) / 2n;
    } else {
      throw new InvalidEthTxError(CHECK_TX_CODES.invalidSigner, `invalid transaction v value ${v}`);
    }
  } else {
    type = first;
    if (type === TX_TYPES.blob) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.txDecode,
        "transaction type not supported: EIP-4844 blob transactions are not accepted by this chain. Send a type 0, 1, 2 or 4 tx",
      );
    }
    if (type !== TX_TYPES.accessList && type !== TX_TYPES.feeMarket && type !== TX_TYPES.setCode) {
      throw new InvalidEthTxError(
        CHECK_TX_CODES.txDecode,
        `transaction type not supported: type ${type}. Send a type 0, 1, 2 or 4 tx`,
      );
    }
    values = fields(raw.subarray(1));
    const c = values[0];
    if (!(c instanceof Uint8Array)) throw decodeFail("chain id is not a byte string");
    chainId = bytesToBigint(c);
  }
  if (chainId !== undefined && chainId !== ctx.chainId) {
    throw new InvalidEthTxError(
      CHECK_TX_CODES.invalidChainId,
      `incorrect chain-id; expected ${ctx.chainId}, got ${chainId}. Sign the tx for chain id ${ctx.chainId}`,
    );
  }
  return { type, values, chainId };
}

/**
 * The sender of signed tx bytes, recovered as decodeEthTx recovers it (the same envelope checks and
 * recoverSender), without the library tx object decodeEthTx also builds; undefined for bytes whose
 * envelope or signature it would refuse. What a read process gives the main process with a forwarded
 * eth_sendRawTransaction (DecodedTxCache.hintSender): the main process's decode still makes every check.
 */
export function recoverTxSender(raw: Uint8Array, ctx: DecodeContext): Uint8Array | undefined {
  try {
    const { type, values, chainId } = envelope(raw, ctx);
    return recoverSender(type, values, chainId);
  } catch {
    return undefined;
  }
}

/**
 * Decodes and checks everything about a tx that does not depend on state: envelope type, chain id,
 * replay protection, signature (sender recovery), fee caps, intrinsic gas and the calldata floor.
 * Throws InvalidEthTxError with the ABCI code and a geth-worded log. `knownSender`: the sender this
 * function already recovered from the same bytes in another process of the node (recoverSender).
 */
export function decodeEthTx(
  raw: Uint8Array,
  ctx: DecodeContext,
  key: string = txKey(raw),
  knownSender?: Uint8Array,
): DecodedTx {
  const { type, values, chainId } = envelope(raw, ctx);

  let tx: TypedTransaction;
  const opts = { common: ctx.common };
  try {
    if (type === TX_TYPES.legacy) tx = createLegacyTxFromBytesArray(values, opts);
    // ethereumjs validates the shape of each field; the tuple types only name it.
    else if (type === TX_TYPES.accessList) tx = createAccessList2930TxFromBytesArray(values as never, opts);
    else if (type === TX_TYPES.feeMarket) tx = create1559FeeMarketTxFromBytesArray(values as never, opts);
    else tx = createEOACode7702TxFromBytesArray(values as never, opts);
  } catch (err) {
    throw decodeFail((err as Error).message.replace(/ \(tx type=.*$/, ""), err);
  }
  if (type === TX_TYPES.setCode && "authorizationList" in tx && tx.authorizationList.length === 0) {
    throw decodeFail("EIP-7702 transaction with empty auth list");
  }
  if (!tx.isSigned()) throw new InvalidEthTxError(CHECK_TX_CODES.invalidSigner, "transaction is not signed");

  let fromAddress: Address;
  try {
    fromAddress = new Address(recoverSender(type, values, chainId, knownSender));
  } catch (err) {
    throw new InvalidEthTxError(
      CHECK_TX_CODES.invalidSigner,
      "signature verification failed: invalid transaction v, r, s values. Sign the tx again",
      { cause: err },
    );
  }

  const maxFeePerGas = "maxFeePerGas" in tx ? tx.maxFeePerGas : tx.gasPrice;
  const maxPriorityFeePerGas = "maxPriorityFeePerGas" in tx ? tx.maxPriorityFeePerGas : tx.gasPrice;
  const intrinsic = checkFeesAndIntrinsicGas(tx, maxFeePerGas, maxPriorityFeePerGas);
  const floor = getCalldataFloorGas(tx, fromAddress);
  if (tx.gasLimit < floor) {
    throw new InvalidEthTxError(
      CHECK_TX_CODES.outOfGas,
      `insufficient gas for floor data gas cost: gas ${tx.gasLimit}, minimum needed ${floor}`,
    );
  }
  const from = fromAddress.bytes;
  return {
    raw,
    key,
    hash: keccak256(raw),
    tx,
    type,
    chainId,
    from,
    fromHex: bytesToHex(from),
    to: tx.to?.bytes,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
    value: tx.value,
    minGas: maxBig(intrinsic, floor),
    cost: tx.gasLimit * maxFeePerGas + tx.value,
  };
}

/**
 * The tip must not exceed the fee cap, and the gas limit must cover the intrinsic gas (geth's
 * texts); returns the intrinsic gas. Signed txs and a dev chain's impersonated sends both check it.
 */
export function checkFeesAndIntrinsicGas(
  tx: TypedTransaction,
  maxFeePerGas: bigint,
  maxPriorityFeePerGas: bigint,
): bigint {
  if (maxPriorityFeePerGas > maxFeePerGas) {
    throw new InvalidEthTxError(
      CHECK_TX_CODES.insufficientFee,
      `max priority fee per gas higher than max fee per gas: maxPriorityFeePerGas: ${maxPriorityFeePerGas}, maxFeePerGas: ${maxFeePerGas}`,
    );
  }
  const intrinsic = tx.getIntrinsicGas();
  if (tx.gasLimit < intrinsic) {
    throw new InvalidEthTxError(
      CHECK_TX_CODES.outOfGas,
      `intrinsic gas too low: gas ${tx.gasLimit}, minimum needed ${intrinsic}`,
    );
  }
  return intrinsic;
}

/** Math.min/max do not take bigints. */
export function minBig(a: bigint, b: bigint): bigint {
  if (a < b) return a;
  return b;
}

export function maxBig(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}

/** The price per gas the tx pays in a block with `baseFee` (EIP-1559 effective gas price). */
export function effectiveGasPrice(d: DecodedTx, baseFee: bigint): bigint {
  if (d.type === TX_TYPES.legacy || d.type === TX_TYPES.accessList) return d.maxFeePerGas;
  const tip = d.maxFeePerGas - baseFee;
  return baseFee + minBig(tip, d.maxPriorityFeePerGas);
}

/** How many committed txs a dev chain keeps decoded (DecodedTxCache.retire). */
export const RETIRED_DECODES = 1024;

/** How many sender hints a cache keeps waiting for their CheckTx (DecodedTxCache.hintSender). */
export const SENDER_HINTS = 4096;

/**
 * A bounded cache of decoded txs by CometBFT key: CheckTx decodes, prepare/process/finalize reuse.
 * A decode depends on the bytes and the chain id alone, never on state, so it stays true across a
 * dev chain's rollbacks. A committed tx leaves the cache (`delete`), or, on a dev chain, moves to a
 * small list of retired decodes (`retire`, the last `retiredMax`): a test suite's loadFixture sends
 * the same signed bytes again after each evm_revert, and they are then not decoded (nor their
 * sender recovered) again.
 */
export class DecodedTxCache {
  readonly #max: number;
  readonly #map = new Map<string, DecodedTx>();
  readonly #retiredMax: number;
  readonly #retired = new Map<string, DecodedTx>();
  /** Senders recovered elsewhere in the node, by tx key, until the tx's decode takes them. */
  readonly #hints = new Map<string, Uint8Array>();

  constructor(max: number, retiredMax = RETIRED_DECODES) {
    this.#max = max;
    this.#retiredMax = retiredMax;
  }

  get(key: string): DecodedTx | undefined {
    return this.#map.get(key);
  }

  /** A committed tx: out of the cache, kept among the last `retiredMax` retired decodes. */
  retire(key: string): void {
    const d = this.#map.get(key);
    if (d === undefined) return;
    this.#map.delete(key);
    if (this.#retiredMax <= 0) return;
    this.#retired.delete(key);
    this.#retired.set(key, d);
    if (this.#retired.size > this.#retiredMax) this.#retired.delete(this.#retired.keys().next().value as string);
  }

  set(d: DecodedTx): void {
    if (this.#map.size >= this.#max) {
      // Evict the oldest eighth at once (Map iterates in insertion order).
      let n = Math.ceil(this.#max / 8);
      for (const k of this.#map.keys()) {
        this.#map.delete(k);
        if (--n <= 0) break;
      }
    }
    this.#map.set(d.key, d);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
    this.#retired.clear();
    this.#hints.clear();
  }

  /**
   * The sender of the tx with CometBFT key `key`, recovered by decodeEthTx in a read process of this
   * node from the very bytes it passes here (an eth_sendRawTransaction it forwards): the next decode
   * of those bytes takes it instead of recovering the sender again. A hint is used once; the oldest
   * go beyond SENDER_HINTS (a tx whose CheckTx never came); anything but 20 bytes is ignored. Only
   * this node's own processes give hints: bytes from peers or other callers are always recovered.
   */
  hintSender(key: string, sender: Uint8Array): void {
    if (sender.length !== 20 || this.#map.has(key)) return;
    this.#hints.delete(key);
    this.#hints.set(key, sender);
    if (this.#hints.size > SENDER_HINTS) this.#hints.delete(this.#hints.keys().next().value as string);
  }

  /**
   * Decodes through the cache. On a dev chain an impersonated send (a dev entry) decodes to the tx
   * it carries; a dev cheat entry is no transaction and throws like any other non-tx bytes.
   */
  decode(raw: Uint8Array, ctx: DecodeContext): DecodedTx {
    const key = txKey(raw);
    const hit = this.#map.get(key);
    if (hit !== undefined) return hit;
    const retired = this.#retired.get(key);
    if (retired !== undefined) {
      this.#retired.delete(key);
      this.set(retired);
      return retired;
    }
    let d: DecodedTx;
    if (isDevEntry(raw)) {
      if (ctx.devChain !== true) throw notOnDevChain();
      const e = decodeDevEntry(raw);
      if (e.op !== "send") {
        throw new InvalidEthTxError(CHECK_TX_CODES.txDecode, `dev entry ${e.op} is a state change, not a transaction`);
      }
      d = decodedDevSend(raw, key, e, ctx);
    } else {
      const hint = this.#hints.get(key);
      if (hint !== undefined) this.#hints.delete(key);
      d = decodeEthTx(raw, ctx, key, hint);
    }
    this.set(d);
    return d;
  }
}

/** The error for a dev entry on a chain that is not a dev chain. */
export function notOnDevChain(): InvalidEthTxError {
  return new InvalidEthTxError(
    CHECK_TX_CODES.txDecode,
    "dev entries are accepted only by a dev chain (genesis app_state.evm.dev_chain); start one with `cometh dev`",
  );
}

/**
 * An impersonated send as the tx pipeline sees it (CheckTx admission, proposal ordering, execution,
 * receipts): an unsigned ethereumjs tx whose sender is the impersonated address. Its hash is the
 * keccak256 of the entry's bytes (Anvil's impersonated txs are not signed either).
 */
export function decodedDevSend(raw: Uint8Array, key: string, s: DevSend, ctx: DecodeContext): DecodedTx {
  const accessList = s.accessList.map((e) => ({
    address: hex(e.address) as `0x${string}`,
    storageKeys: e.storageKeys.map((k) => hex(k) as `0x${string}`),
  }));
  const base = {
    nonce: s.nonce,
    gasLimit: s.gasLimit,
    ...(s.to === undefined ? {} : { to: new Address(s.to) }),
    value: s.value,
    data: s.data,
  };
  let tx: TypedTransaction;
  try {
    tx =
      s.type === 2
        ? createTx(
            {
              ...base,
              type: 2,
              maxFeePerGas: s.maxFeePerGas ?? 0n,
              maxPriorityFeePerGas: s.maxPriorityFeePerGas ?? 0n,
              accessList,
              chainId: ctx.chainId,
            },
            { common: ctx.common, freeze: false },
          )
        : s.type === 1
          ? createTx(
              { ...base, type: 1, gasPrice: s.gasPrice ?? 0n, accessList, chainId: ctx.chainId },
              { common: ctx.common, freeze: false },
            )
          : createTx({ ...base, type: 0, gasPrice: s.gasPrice ?? 0n }, { common: ctx.common, freeze: false });
  } catch (err) {
    throw invalidDevEntry(
      `the transaction fields are not valid: ${(err as Error).message.replace(/ \(tx type=.*$/, "")}`,
    );
  }
  const maxFeePerGas = s.maxFeePerGas ?? s.gasPrice ?? 0n;
  const maxPriorityFeePerGas = s.maxPriorityFeePerGas ?? s.gasPrice ?? 0n;
  const intrinsic = checkFeesAndIntrinsicGas(tx, maxFeePerGas, maxPriorityFeePerGas);
  return {
    raw,
    key,
    hash: keccak256(raw),
    tx,
    type: s.type,
    chainId: s.type === 0 ? undefined : ctx.chainId,
    from: s.from,
    fromHex: bytesToHex(s.from),
    to: s.to,
    nonce: s.nonce,
    gasLimit: s.gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
    value: s.value,
    minGas: intrinsic,
    cost: s.gasLimit * maxFeePerGas + s.value,
    impersonated: true,
  };
}
