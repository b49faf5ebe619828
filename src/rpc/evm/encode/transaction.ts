import type { WireValue } from "../../jsonrpc/index.js";
import { type EvmBlock, type EvmTx, TX_TYPE, type TxLocation } from "../services.js";
import { toAddress, toData, toQuantity } from "./hex.js";

/** Transactions in geth's RPCTransaction field order; pending ones carry null block fields. */

export function txLocationInBlock(b: EvmBlock, index: number): TxLocation {
  return {
    blockHash: b.hash,
    blockNumber: b.number,
    blockTimestamp: b.timestamp,
    index,
    baseFeePerGas: b.baseFeePerGas,
  };
}

/** min(tip + baseFee, feeCap) for fee-market txs; the gas price otherwise. */
export function effectiveGasPrice(tx: EvmTx, baseFee: bigint | undefined): bigint {
  if (tx.maxFeePerGas === undefined) return tx.gasPrice ?? 0n;
  if (baseFee === undefined) return tx.maxFeePerGas;
  const tip = tx.maxPriorityFeePerGas ?? 0n;
  const price = baseFee + tip;
  return price < tx.maxFeePerGas ? price : tx.maxFeePerGas;
}

function encodeAccessList(tx: EvmTx): WireValue {
  return (tx.accessList ?? []).map((e) => ({
    address: toAddress(e.address),
    storageKeys: e.storageKeys.map(toData),
  }));
}

/** One transaction; `location` undefined for a pending (mempool) transaction. */
export function encodeTransaction(tx: EvmTx, location: TxLocation | undefined): WireValue {
  const feeMarket = tx.maxFeePerGas !== undefined;
  const gasPrice =
    feeMarket && location === undefined ? (tx.maxFeePerGas ?? 0n) : effectiveGasPrice(tx, location?.baseFeePerGas);
  const typed = tx.type !== TX_TYPE.legacy;
  return {
    blockHash: location === undefined ? null : toData(location.blockHash),
    blockNumber: location === undefined ? null : toQuantity(location.blockNumber),
    blockTimestamp: location === undefined ? null : toQuantity(location.blockTimestamp),
    from: toAddress(tx.from),
    gas: toQuantity(tx.gasLimit),
    gasPrice: toQuantity(gasPrice),
    maxFeePerGas: feeMarket ? toQuantity(tx.maxFeePerGas ?? 0n) : undefined,
    maxPriorityFeePerGas: feeMarket ? toQuantity(tx.maxPriorityFeePerGas ?? 0n) : undefined,
    maxFeePerBlobGas: tx.maxFeePerBlobGas === undefined ? undefined : toQuantity(tx.maxFeePerBlobGas),
    hash: toData(tx.hash),
    input: toData(tx.input),
    nonce: toQuantity(tx.nonce),
    to: tx.to === undefined ? null : toAddress(tx.to),
    transactionIndex: location === undefined ? null : toQuantity(location.index),
    value: toQuantity(tx.value),
    type: toQuantity(tx.type),
    accessList: typed ? encodeAccessList(tx) : undefined,
    // A legacy tx shows its chain id only when EIP-155 protected.
    chainId: tx.chainId === undefined || (!typed && tx.chainId === 0n) ? undefined : toQuantity(tx.chainId),
    blobVersionedHashes: tx.blobVersionedHashes?.map(toData),
    authorizationList: tx.authorizationList?.map((a) => ({
      chainId: toQuantity(a.chainId),
      address: toAddress(a.address),
      nonce: toQuantity(a.nonce),
      yParity: toQuantity(a.yParity),
      r: toQuantity(a.r),
      s: toQuantity(a.s),
    })),
    v: toQuantity(tx.v),
    r: toQuantity(tx.r),
    s: toQuantity(tx.s),
    yParity: typed ? toQuantity(tx.v) : undefined,
  };
}
