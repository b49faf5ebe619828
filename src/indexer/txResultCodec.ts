import { TxResult as PbTxResult } from "cosmjs-types/tendermint/abci/types";
import type { ExecTxResult } from "../types/index.js";
import { IndexCorruptionError } from "./errors.js";
import type { IndexedTx } from "./indexer.js";

/**
 * The protobuf abci.TxResult: what CometBFT's kv indexer stores under the tx hash and its psql sink
 * writes to tx_results.tx_result.
 */
export function encodeTxResult(r: IndexedTx): Uint8Array {
  return PbTxResult.encode({
    height: BigInt(r.height),
    index: r.index,
    tx: r.tx,
    result: {
      code: r.result.code,
      data: r.result.data,
      log: r.result.log,
      info: r.result.info,
      gasWanted: r.result.gasWanted,
      gasUsed: r.result.gasUsed,
      events: r.result.events.map((e) => ({
        type: e.type,
        attributes: e.attributes.map((a) => ({ key: a.key, value: a.value, index: a.index })),
      })),
      codespace: r.result.codespace,
    },
  }).finish();
}

export function decodeTxResult(bytes: Uint8Array): IndexedTx {
  let pb: PbTxResult;
  try {
    pb = PbTxResult.decode(bytes);
  } catch (err) {
    throw new IndexCorruptionError("a TxResult", { cause: err });
  }
  if (pb.height < 0n || pb.height > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new IndexCorruptionError(`a TxResult (height ${pb.height})`);
  }
  const r = pb.result;
  // Copies, so results never alias a database buffer.
  const result: ExecTxResult = {
    code: r.code,
    data: new Uint8Array(r.data),
    log: r.log,
    info: r.info,
    gasWanted: r.gasWanted,
    gasUsed: r.gasUsed,
    events: r.events.map((e) => ({
      type: e.type,
      attributes: e.attributes.map((a) => ({ key: a.key, value: a.value, index: a.index })),
    })),
    codespace: r.codespace,
  };
  return { height: Number(pb.height), index: pb.index, tx: new Uint8Array(pb.tx), result };
}
