import { BinaryReader } from "cosmjs-types/binary";
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
      // Our events have the protobuf message's shape (type; attributes of key, value, index): no copy.
      events: r.result.events,
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

/**
 * A stored TxResult whose height and index are read from the record's first fields and whose tx and
 * result are decoded on first use: searches sort and page many hits and decode only the page.
 */
class LazyIndexedTx implements IndexedTx {
  readonly height: number;
  readonly index: number;
  #bytes: Uint8Array;
  #decoded: IndexedTx | undefined;

  constructor(bytes: Uint8Array, height: number, index: number) {
    this.#bytes = bytes;
    this.height = height;
    this.index = index;
  }

  get tx(): Uint8Array {
    return this.#full().tx;
  }

  get result(): ExecTxResult {
    return this.#full().result;
  }

  #full(): IndexedTx {
    this.#decoded ??= decodeTxResult(this.#bytes);
    return this.#decoded;
  }
}

/**
 * Like decodeTxResult, but defers decoding tx and result. Height (field 1) and index (field 2) are
 * read directly when the record starts with them, as encodeTxResult writes it; otherwise it decodes.
 */
export function decodeTxResultLazily(bytes: Uint8Array): IndexedTx {
  // proto3 leaves zero fields out: field 1 (height, varint) and field 2 (index, varint) are each optional.
  const reader = new BinaryReader(bytes);
  let height = 0n;
  let index = 0;
  try {
    if (bytes[reader.pos] === 0x08) {
      reader.uint32();
      height = reader.int64();
    }
    if (bytes[reader.pos] === 0x10) {
      reader.uint32();
      index = reader.uint32();
    }
  } catch {
    return decodeTxResult(bytes);
  }
  if (height < 0n || height > BigInt(Number.MAX_SAFE_INTEGER)) return decodeTxResult(bytes);
  return new LazyIndexedTx(bytes, Number(height), index);
}
