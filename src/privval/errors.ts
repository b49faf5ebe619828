/**
 * The signer refused: a height/round/step regression, or a second, different message for the same
 * height/round/step (privval/file.go CheckHRS and "conflicting data"). Signing it could equivocate.
 */
export class DoubleSignError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The request cannot be signed as given (for example a vote extension on a prevote). */
export class InvalidSignRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** priv_validator_key.json or priv_validator_state.json is missing or malformed. */
export class PrivValidatorFileError extends Error {
  readonly file: string;
  constructor(file: string, problem: string, opts: { cause?: unknown } = {}) {
    super(`${file}: ${problem}`, { cause: opts.cause });
    this.name = new.target.name;
    this.file = file;
  }
}
