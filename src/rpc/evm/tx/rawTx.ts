import { RLP } from "@ethereumjs/rlp";
import { ComethError } from "../../../util/errors.js";
import { bytesToBigint } from "../encode/hex.js";
import { TX_TYPE } from "../services.js";

/**
 * Just enough decoding of a signed transaction for the checks eth_sendRawTransaction makes
 * before the mempool sees it (geth UnmarshalBinary + Cosmos EVM's RPC checks): the envelope type,
 * the EIP-155 chain id, the fee fields for txfee-cap. Full validation is CheckTx's job.
 */

/** The bytes are not a transaction; the message is shown to the client. */
export class RawTxDecodeError extends ComethError {}

export interface RawTxSummary {
  readonly type: number;
  /** Undefined for an unprotected legacy tx. */
  readonly chainId: bigint | undefined;
  readonly gasLimit: bigint;
  /** gasPrice, or maxFeePerGas for fee-market types. */
  readonly feeCap: bigint;
}

type Item = Uint8Array | Item[];

function asList(x: Item, what: string): Item[] {
  if (!Array.isArray(x)) throw new RawTxDecodeError(`rlp: expected input list for ${what}`);
  return x;
}

function asInt(x: Item | undefined, what: string): bigint {
  if (x === undefined || Array.isArray(x)) throw new RawTxDecodeError(`rlp: expected input string or byte for ${what}`);
  if (x.length > 32) throw new RawTxDecodeError(`rlp: input string too long for ${what}`);
  if (x.length > 0 && x[0] === 0)
    throw new RawTxDecodeError(`rlp: non-canonical integer (leading zero bytes) for ${what}`);
  return bytesToBigint(x);
}

function decodeRlp(bytes: Uint8Array): Item {
  try {
    return RLP.decode(bytes) as Item;
  } catch (err) {
    throw new RawTxDecodeError(`rlp: ${(err as Error).message}`);
  }
}

/** Field counts and the positions of chainId / gas / fee cap in each typed payload. */
const TYPED_LAYOUT: Record<number, { fields: number; name: string; gas: number; fee: number }> = {
  [TX_TYPE.accessList]: { fields: 11, name: "types.AccessListTx", gas: 3, fee: 2 },
  [TX_TYPE.dynamicFee]: { fields: 12, name: "types.DynamicFeeTx", gas: 4, fee: 3 },
  [TX_TYPE.setCode]: { fields: 13, name: "types.SetCodeTx", gas: 4, fee: 3 },
};

export function summarizeRawTx(raw: Uint8Array): RawTxSummary {
  if (raw.length === 0) throw new RawTxDecodeError("typed transaction too short");
  const first = raw[0] as number;
  if (first >= 0xc0) {
    const list = asList(decodeRlp(raw), "types.LegacyTx");
    if (list.length !== 9) throw new RawTxDecodeError(`rlp: expected 9 fields for types.LegacyTx, got ${list.length}`);
    const v = asInt(list[6], "types.LegacyTx.V");
    const chainId = v === 27n || v === 28n ? undefined : v >= 35n ? (v - 35n) / 2n : undefined;
    if (chainId === undefined && v !== 27n && v !== 28n)
      throw new RawTxDecodeError("invalid transaction v, r, s values");
    return {
      type: TX_TYPE.legacy,
      chainId,
      gasLimit: asInt(list[2], "types.LegacyTx.Gas"),
      feeCap: asInt(list[1], "types.LegacyTx.GasPrice"),
    };
  }
  if (first >= 0x80) throw new RawTxDecodeError("rlp: expected input list for types.LegacyTx");
  if (first === TX_TYPE.blob || first > TX_TYPE.setCode || first === 0) {
    throw new RawTxDecodeError("transaction type not supported");
  }
  if (raw.length < 2) throw new RawTxDecodeError("typed transaction too short");
  const layout = TYPED_LAYOUT[first];
  if (layout === undefined) throw new RawTxDecodeError("transaction type not supported");
  const list = asList(decodeRlp(raw.subarray(1)), layout.name);
  if (list.length !== layout.fields) {
    throw new RawTxDecodeError(`rlp: expected ${layout.fields} fields for ${layout.name}, got ${list.length}`);
  }
  if (first === TX_TYPE.setCode && asList(list[9] as Item, layout.name).length === 0) {
    throw new RawTxDecodeError("set code transaction with empty auth list");
  }
  return {
    type: first,
    chainId: asInt(list[0], `${layout.name}.ChainID`),
    gasLimit: asInt(list[layout.gas], `${layout.name}.Gas`),
    feeCap: asInt(list[layout.fee], `${layout.name}.GasFeeCap`),
  };
}
