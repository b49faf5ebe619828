import { ComethError } from "../util/errors.js";

/** A node-level service (an adapter between subsystems) cannot answer; the message reaches the client. */
export class NodeServiceError extends ComethError {}
