import type { ChainEpoch, TxInclusion } from "../../events/index.js";
import type { EvmEventSource, TxWaitOutcome, TxWaitRequest } from "../../rpc/evm/index.js";

/**
 * The RPC's event source (`events`): the node calls it for committed blocks and admitted txs;
 * rollbacks come from the node's chain epoch, waits for a tx's block from the node's TxInclusion.
 */
export class EvmFeed implements EvmEventSource {
  readonly #blocks = new Set<(height: number) => void>();
  readonly #pending = new Set<(hash: Uint8Array) => void>();
  readonly #epoch: ChainEpoch | undefined;
  readonly #inclusion: TxInclusion;

  constructor(inclusion: TxInclusion, epoch?: ChainEpoch) {
    this.#inclusion = inclusion;
    this.#epoch = epoch;
  }

  /** A dev chain was rolled back to `height` (evm_revert, hardhat_reset): the chain epoch's rewinds. */
  onRollback(listener: (height: number) => void): () => void {
    return this.#epoch?.onRewind(listener) ?? noop;
  }

  onNewBlock(listener: (height: number) => void): () => void {
    this.#blocks.add(listener);
    return () => this.#blocks.delete(listener);
  }
  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void {
    this.#pending.add(listener);
    return () => this.#pending.delete(listener);
  }
  waitForTx(raw: Uint8Array, opts: TxWaitRequest): { outcome: Promise<TxWaitOutcome>; cancel(): void } {
    return this.#inclusion.waitOutcome(raw, opts);
  }
  newBlock(height: number): void {
    for (const l of this.#blocks) l(height);
  }
  pendingTransaction(hash: Uint8Array): void {
    for (const l of this.#pending) l(hash);
  }
}

function noop(): void {}
