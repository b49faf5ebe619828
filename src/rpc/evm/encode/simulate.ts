import type { WireValue } from "../../jsonrpc/index.js";
import { decodeRevertReason } from "../errors.js";
import type { SimulatedBlock, SimulatedCall } from "../services.js";
import { toAddress, toData, toQuantity } from "./hex.js";
import { encodeLog } from "./receipt.js";
import { encodeTransaction } from "./transaction.js";

/**
 * eth_simulateV1's answer (docs/ethereum-rpc.md "eth_simulateV1"): one block object per simulated
 * block, keys in the order geth writes them (RPCMarshalBlock builds a map, so Go sorts the keys),
 * with `calls` holding each call's result in geth's simCallResult field order.
 */

/** geth's errCodeVMError: a call that failed for another reason than REVERT. */
const VM_ERROR_CODE = -32015;
/** geth's revertError code. */
const REVERT_CODE = 3;

function encodeCall(c: SimulatedCall): WireValue {
  const out: { [key: string]: WireValue } = {
    // geth's ExecutionResult.Return(): nothing for a failed call (a revert's data is in `error`).
    returnData: c.status === 1 ? toData(c.returnData) : "0x",
    logs: c.logs.map((l) =>
      encodeLog({
        address: l.address,
        topics: l.topics,
        data: l.data,
        blockNumber: Number(l.blockNumber),
        blockHash: l.blockHash,
        blockTimestamp: Number(l.blockTimestamp),
        transactionHash: l.transactionHash,
        transactionIndex: l.transactionIndex,
        logIndex: l.logIndex,
      }),
    ),
    gasUsed: toQuantity(c.gasUsed),
    maxUsedGas: toQuantity(c.maxUsedGas),
    status: toQuantity(c.status),
  };
  if (c.status === 0) {
    if (c.vmError === "execution reverted") {
      const reason = decodeRevertReason(c.returnData);
      out.error = {
        message: reason === undefined ? "execution reverted" : `execution reverted: ${reason}`,
        code: REVERT_CODE,
        data: toData(c.returnData),
      };
    } else {
      const suffix = c.gasCapped ? " (gas limit was capped by the RPC server's global gas cap)" : "";
      out.error = { message: `${c.vmError}${suffix}`, code: VM_ERROR_CODE };
    }
  }
  return out;
}

/** One simulated block; transactions as hashes, or as objects (with their senders) when `fullTx`. */
export function encodeSimulatedBlock(b: SimulatedBlock, fullTx: boolean): WireValue {
  const fields: { [key: string]: WireValue } = {
    baseFeePerGas: toQuantity(b.baseFeePerGas),
    blobGasUsed: toQuantity(b.blobGasUsed),
    calls: b.calls.map(encodeCall),
    difficulty: toQuantity(b.difficulty),
    excessBlobGas: toQuantity(b.excessBlobGas),
    extraData: "0x",
    gasLimit: toQuantity(b.gasLimit),
    gasUsed: toQuantity(b.gasUsed),
    hash: toData(b.hash),
    logsBloom: toData(b.logsBloom),
    miner: toAddress(b.miner),
    mixHash: toData(b.mixHash),
    nonce: "0x0000000000000000",
    number: toQuantity(b.number),
    parentBeaconBlockRoot: toData(b.parentBeaconBlockRoot),
    parentHash: toData(b.parentHash),
    receiptsRoot: toData(b.receiptsRoot),
    requestsHash: toData(b.requestsHash),
    sha3Uncles: "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
    size: toQuantity(b.size),
    stateRoot: toData(b.stateRoot),
    timestamp: toQuantity(b.timestamp),
    transactions: b.transactions.map((tx, index) =>
      fullTx
        ? encodeTransaction(tx, {
            blockHash: b.hash,
            blockNumber: Number(b.number),
            blockTimestamp: Number(b.timestamp),
            index,
            baseFeePerGas: b.baseFeePerGas,
          })
        : toData(tx.hash),
    ),
    transactionsRoot: toData(b.transactionsRoot),
    uncles: [],
    withdrawals: b.withdrawals.map((w) => ({
      index: toQuantity(w.index),
      validatorIndex: toQuantity(w.validatorIndex),
      address: toAddress(w.address),
      amount: toQuantity(w.amount),
    })),
    withdrawalsRoot: toData(b.withdrawalsRoot),
  };
  return fields;
}
