import { BlockInputError } from "./errors.js";
import type { BlockIndexInput } from "./indexer.js";

/** Checks the input and names its problems before anything is written. */
export function checkBlockInput(input: BlockIndexInput): void {
  if (!Number.isSafeInteger(input.height) || input.height < 1) {
    throw new BlockInputError(`height ${input.height} is not a positive integer`);
  }
  if (input.txs.length !== input.txResults.length) {
    throw new BlockInputError(
      `block ${input.height} has ${input.txs.length} txs but ${input.txResults.length} tx results`,
    );
  }
}
