import type { WireValue } from "../../jsonrpc/index.js";
import type { EvmBlock } from "../services.js";
import {
  EMPTY_REQUESTS_HASH,
  EMPTY_ROOT_HASH,
  EMPTY_UNCLES_HASH,
  toAddress,
  toData,
  toQuantity,
  ZERO_HASH,
} from "./hex.js";
import { encodeTransaction, txLocationInBlock } from "./transaction.js";

/**
 * Blocks and headers in geth's field order (RPCMarshalHeader / RPCMarshalBlock). Post-merge
 * constants fill what CometBFT has no notion of: zero nonce, difficulty and mixHash, no uncles,
 * no withdrawals, no blobs (docs/ethereum-rpc.md "Block objects").
 */

const ZERO_NONCE = "0x0000000000000000";

/** The header fields (eth_getHeaderBy*, eth_subscribe newHeads). */
export function encodeHeader(b: EvmBlock): { [key: string]: WireValue | undefined } {
  return {
    number: toQuantity(b.number),
    hash: toData(b.hash),
    parentHash: toData(b.parentHash),
    nonce: ZERO_NONCE,
    mixHash: toData(ZERO_HASH),
    sha3Uncles: EMPTY_UNCLES_HASH,
    logsBloom: toData(b.logsBloom),
    stateRoot: toData(b.stateRoot),
    miner: toAddress(b.miner),
    difficulty: "0x0",
    extraData: toData(b.extraData ?? new Uint8Array(0)),
    gasLimit: toQuantity(b.gasLimit),
    gasUsed: toQuantity(b.gasUsed),
    timestamp: toQuantity(b.timestamp),
    transactionsRoot: toData(b.transactionsRoot),
    receiptsRoot: toData(b.receiptsRoot),
    baseFeePerGas: b.baseFeePerGas === undefined ? undefined : toQuantity(b.baseFeePerGas),
    withdrawalsRoot: EMPTY_ROOT_HASH,
    blobGasUsed: "0x0",
    excessBlobGas: "0x0",
    parentBeaconBlockRoot: toData(ZERO_HASH),
    requestsHash: EMPTY_REQUESTS_HASH,
  };
}

/** A full block: transaction hashes, or transaction objects when `fullTx`. */
export function encodeBlock(b: EvmBlock, fullTx: boolean): WireValue {
  return {
    ...encodeHeader(b),
    size: toQuantity(b.size),
    uncles: [],
    transactions: b.transactions.map((tx, i) =>
      fullTx ? encodeTransaction(tx, txLocationInBlock(b, i)) : toData(tx.hash),
    ),
    withdrawals: [],
  };
}
