import { EncodedJson, type WireValue } from "../../jsonrpc/index.js";
import type { EvmLog, EvmReceipt } from "../services.js";
import { toAddress, toData, toQuantity } from "./hex.js";

/** Receipts and logs in geth's field order (MarshalReceipt, types.Log). */

/**
 * One log, written straight to JSON text: every value is a hex string, a number or `false`, so no
 * escaping is needed, and eth_getLogs answers carry thousands of them.
 */
export function encodeLog(l: EvmLog): EncodedJson {
  let topics = "";
  for (let i = 0; i < l.topics.length; i++) topics += `${i === 0 ? "" : ","}"${toData(l.topics[i] as Uint8Array)}"`;
  return new EncodedJson(
    `{"address":"${toAddress(l.address)}","topics":[${topics}],"data":"${toData(l.data)}",` +
      `"blockNumber":"${toQuantity(l.blockNumber)}","transactionHash":"${toData(l.transactionHash)}",` +
      `"transactionIndex":"${toQuantity(l.transactionIndex)}","blockHash":"${toData(l.blockHash)}",` +
      `"blockTimestamp":"${toQuantity(l.blockTimestamp)}","logIndex":"${toQuantity(l.logIndex)}",` +
      // No reorgs under CometBFT's instant finality.
      `"removed":false}`,
  );
}

export function encodeReceipt(r: EvmReceipt): WireValue {
  return {
    blockHash: toData(r.blockHash),
    blockNumber: toQuantity(r.blockNumber),
    transactionHash: toData(r.transactionHash),
    transactionIndex: toQuantity(r.transactionIndex),
    from: toAddress(r.from),
    to: r.to === undefined ? null : toAddress(r.to),
    gasUsed: toQuantity(r.gasUsed),
    cumulativeGasUsed: toQuantity(r.cumulativeGasUsed),
    contractAddress: r.contractAddress === undefined ? null : toAddress(r.contractAddress),
    logs: r.logs.map(encodeLog),
    logsBloom: toData(r.logsBloom),
    type: toQuantity(r.type),
    effectiveGasPrice: toQuantity(r.effectiveGasPrice),
    status: toQuantity(r.status),
  };
}
