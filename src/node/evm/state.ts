import type { EvmReader } from "../../app/evm/index.js";
import type { AccountProof, StateReader } from "../../rpc/evm/index.js";

/** The RPC's `state`: accounts, code, storage and proofs after a height, from the EVM app's reader. */
export class EvmStateAdapter implements StateReader {
  readonly #reader: EvmReader;

  constructor(reader: EvmReader) {
    this.#reader = reader;
  }

  balance(address: Uint8Array, height: number): bigint {
    return this.#reader.balance(address, height);
  }
  nonce(address: Uint8Array, height: number): bigint {
    return this.#reader.nonce(address, height);
  }
  code(address: Uint8Array, height: number): Uint8Array {
    return this.#reader.code(address, height);
  }
  storage(address: Uint8Array, slot: Uint8Array, height: number): Uint8Array {
    return this.#reader.storageAt(address, slot, height);
  }
  proof(address: Uint8Array, slots: readonly Uint8Array[], height: number): Promise<AccountProof> {
    return this.#reader.proof(address, slots, height);
  }
}
