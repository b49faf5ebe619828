import { ComethError } from "../util/errors.js";

/**
 * The signer refused: a height/round/step regression, or a second, different message for the same
 * height/round/step (privval/file.go CheckHRS and "conflicting data"). Signing it could equivocate.
 */
export class DoubleSignError extends ComethError {}

/** The request cannot be signed as given (for example a vote extension on a prevote). */
export class InvalidSignRequestError extends ComethError {}

/** priv_validator_key.json or priv_validator_state.json is missing or malformed. */
export class PrivValidatorFileError extends ComethError {
  readonly file: string;
  constructor(file: string, problem: string, opts: { cause?: unknown } = {}) {
    super(`${file}: ${problem}`, { cause: opts.cause });
    this.file = file;
  }
}
