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

/**
 * The remote signer refused a request (privval RemoteSignerError): a double-sign guard refusal, a
 * wrong chain id, a key it cannot provide. Not retried: asking again gets the same answer.
 */
export class RemoteSignerError extends ComethError {
  readonly code: number;
  readonly description: string;
  constructor(code: number, description: string) {
    super(`the remote signer refused: ${description} (code ${code})`);
    this.code = code;
    this.description = description;
  }
}

/** No signer is connected, or the connection failed or timed out: the request may be retried on another connection. */
export class SignerConnectionError extends ComethError {}

/** The other side sent bytes that are not the privval protocol, or an answer of the wrong kind. */
export class SignerProtocolError extends ComethError {}

/** priv_validator_laddr, or a signer's address, is not one privval can listen on or dial. */
export class SignerAddressError extends ComethError {}
