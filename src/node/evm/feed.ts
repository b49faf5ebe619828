import type { ChainEpoch } from "../../events/index.js";
import type { EvmEventSource } from "../../rpc/evm/index.js";

/**
 * The RPC's event source (`events`): the node calls it for committed blocks and admitted txs;
 * rollbacks come from the node's chain epoch.
 */
export class EvmFeed implements EvmEventSource {
  readonly #blocks = new Set<(height: number) => void>();
  readonly #pending = new Set<(hash: Uint8Array) => void>();
  readonly #epoch: ChainEpoch | undefined;

  constructor(epoch?: ChainEpoch) {
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
  /**
   * The one "wait for the next block" the node has: resolves true at the next committed block (once
   * the RPC can read it), false after `timeoutMs` or when `signal` aborts. eth_sendRawTransactionSync and the dev chain's
   * automine answers wait for a tx's block with it.
   */
  nextBlock(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (seen: boolean): void => {
        clearTimeout(timer);
        this.#blocks.delete(onBlock);
        signal?.removeEventListener("abort", onAbort);
        resolve(seen);
      };
      const onBlock = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(onAbort, timeoutMs);
      this.#blocks.add(onBlock);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
  newBlock(height: number): void {
    for (const l of this.#blocks) l(height);
  }
  pendingTransaction(hash: Uint8Array): void {
    for (const l of this.#pending) l(hash);
  }
}

function noop(): void {}
