import { SchemaMessage } from "../types/index.js";
import { InvalidMempoolMessageError } from "./errors.js";

/**
 * tendermint.mempool.Message (CometBFT v0.38 proto/tendermint/mempool/types.proto):
 * `message Txs { repeated bytes txs = 1; }` inside `message Message { oneof sum { Txs txs = 1; } }`.
 */
const SCHEMA = `
syntax = "proto3";
package tendermint.mempool;
message Txs { repeated bytes txs = 1; }
message Message { oneof sum { Txs txs = 1; } }
`;

const PbMessage = new SchemaMessage<PbMessageShape>(SCHEMA, "tendermint.mempool.Message");

interface PbMessageShape {
  txs?: { txs?: Uint8Array[] };
}

/** Message{Txs{txs}} bytes. CometBFT v0.38 sends one tx per message. */
export function encodeMempoolTxs(txs: readonly Uint8Array[]): Uint8Array {
  return PbMessage.encode({ txs: { txs: [...txs] } });
}

/** The txs of a mempool Message (possibly none). Throws InvalidMempoolMessageError. */
export function decodeMempoolTxs(bytes: Uint8Array): Uint8Array[] {
  const pb = PbMessage.decode(
    bytes,
    (err) =>
      new InvalidMempoolMessageError(
        `cannot decode tendermint.mempool.Message: ${err.message}. The peer sent corrupt bytes`,
        { cause: err },
      ),
  );
  if (pb.txs === undefined || pb.txs === null) {
    throw new InvalidMempoolMessageError(
      "mempool message has no known type (empty oneof). The peer sent a message this version does not know",
    );
  }
  // Copy out of the received buffer: admitted txs live on in the mempool and in blocks.
  return (pb.txs.txs ?? []).map((t) => new Uint8Array(t));
}

function varintSize(n: number): number {
  let size = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}

/**
 * The largest mempool message: one tx of `maxTxBytes` wrapped in Txs and Message (the mempool
 * channel's RecvMessageCapacity in CometBFT: batchMsg.Size()).
 */
export function mempoolRecvMessageCapacity(maxTxBytes: number): number {
  const txs = 1 + varintSize(maxTxBytes) + maxTxBytes;
  return 1 + varintSize(txs) + txs;
}
