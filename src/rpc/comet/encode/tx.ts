import type { WireValue } from "../../jsonrpc/index.js";
import type { IndexedTx, MerkleProofView } from "../services.js";
import { encodeExecTxResultJsonpb } from "./abci.js";
import { b64NonNil, hex, i64 } from "./wire.js";

/** ResultTx and TxProof (docs/cometbft-rpc.md §2.1, `tx`). */

export interface TxProofParts {
  rootHash: Uint8Array;
  data: Uint8Array;
  proof: MerkleProofView;
}

/** TxProof: `{"root_hash":"HEX","data":"b64","proof":{"total":"2","index":"0","leaf_hash":"b64","aunts":["b64"]}}`. */
export function encodeTxProof(p: TxProofParts): WireValue {
  return {
    root_hash: hex(p.rootHash),
    data: b64NonNil(p.data),
    proof: {
      total: i64(p.proof.total),
      index: i64(p.proof.index),
      leaf_hash: b64NonNil(p.proof.leafHash),
      aunts: p.proof.aunts.map(b64NonNil),
    },
  };
}

/** ResultTx: the `proof` key is left out unless a proof was asked for. */
export function encodeResultTx(hash: Uint8Array, r: IndexedTx, proof: TxProofParts | undefined): WireValue {
  return {
    hash: hex(hash),
    height: i64(r.height),
    index: r.index,
    tx_result: encodeExecTxResultJsonpb(r.result),
    tx: b64NonNil(r.tx),
    proof: proof === undefined ? undefined : encodeTxProof(proof),
  };
}
