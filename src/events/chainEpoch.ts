/**
 * The chain's epoch: how many times its heights were reused (a dev chain's rollback: evm_revert,
 * hardhat_reset). One object per node tells everything that keeps answers by height: readers compare
 * `current()` with the epoch their memo was made in (the node RPC's block and status answers), and
 * listeners hear each rewind as it happens (the Ethereum JSON-RPC's memos, filters and subscriptions).
 */
export class ChainEpoch {
  #epoch = 0;
  readonly #listeners = new Set<(height: number) => void>();

  /** The number of rewinds so far (0 on a chain that never reused a height). */
  current(): number {
    return this.#epoch;
  }

  /** Calls `listener` with the height the chain went back to, at each rewind. Returns the unsubscribe function. */
  onRewind(listener: (height: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The chain went back to `height`: the heights above it will be made again. */
  rewound(height: number): void {
    this.#epoch++;
    for (const l of [...this.#listeners]) l(height);
  }
}
