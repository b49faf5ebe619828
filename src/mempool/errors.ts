import { ComethError } from "../util/errors.js";

/** Admission errors. Messages are CometBFT's, byte for byte: clients match on them (docs/cometbft-rpc.md §2). */

export class MempoolError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** CometBFT ErrTxTooLarge. */
export class TxTooLargeError extends MempoolError {
  readonly max: number;
  readonly actual: number;
  constructor(max: number, actual: number) {
    super(`Tx too large. Max size is ${max}, but got ${actual}`);
    this.max = max;
    this.actual = actual;
  }
}

/** CometBFT ErrMempoolIsFull. */
export class MempoolFullError extends MempoolError {
  readonly numTxs: number;
  readonly maxTxs: number;
  readonly txsBytes: number;
  readonly maxTxsBytes: number;
  constructor(numTxs: number, maxTxs: number, txsBytes: number, maxTxsBytes: number) {
    super(
      `mempool is full: number of txs ${numTxs} (max: ${maxTxs}), total txs bytes ${txsBytes} (max: ${maxTxsBytes})`,
    );
    this.numTxs = numTxs;
    this.maxTxs = maxTxs;
    this.txsBytes = txsBytes;
    this.maxTxsBytes = maxTxsBytes;
  }
}

/** CometBFT ErrTxInCache: the tx was seen recently (in the mempool, committed, or kept as invalid). */
export class TxInCacheError extends MempoolError {
  constructor() {
    super("tx already exists in cache");
  }
}

/** update() was given a different number of results than txs. */
export class MempoolUpdateError extends MempoolError {}
