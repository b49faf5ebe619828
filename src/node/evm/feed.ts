import type { EvmEventSource } from "../../rpc/evm/index.js";

/** The RPC's event source (`events`): the node calls it for committed blocks, admitted txs and rollbacks. */
export class EvmFeed implements EvmEventSource {
  readonly #blocks = new Set<(height: number) => void>();
  readonly #pending = new Set<(hash: Uint8Array) => void>();
  readonly #rollbacks = new Set<(height: number) => void>();

  onRollback(listener: (height: number) => void): () => void {
    this.#rollbacks.add(listener);
    return () => this.#rollbacks.delete(listener);
  }
  /** A dev chain was rolled back to `height` (evm_revert, hardhat_reset). */
  rollback(height: number): void {
    for (const l of this.#rollbacks) l(height);
  }

  onNewBlock(listener: (height: number) => void): () => void {
    this.#blocks.add(listener);
    return () => this.#blocks.delete(listener);
  }
  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void {
    this.#pending.add(listener);
    return () => this.#pending.delete(listener);
  }
  newBlock(height: number): void {
    for (const l of this.#blocks) l(height);
  }
  pendingTransaction(hash: Uint8Array): void {
    for (const l of this.#pending) l(hash);
  }
}
