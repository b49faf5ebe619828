import { ComethError } from "../../../util/errors.js";

/**
 * The fork's source could not answer: every URL failed (refused, timed out, not JSON-RPC), or it
 * answered a request with a JSON-RPC error. Reaches a JSON-RPC client as -32000 with this text.
 */
export class ForkSourceError extends ComethError {}

/** A `--fork-*` option or a `forking` parameter that cannot be used (bad URL, block past the head). */
export class ForkConfigError extends ComethError {}
