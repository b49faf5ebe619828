/** A node-level service (an adapter between subsystems) cannot answer; the message reaches the client. */
export class NodeServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NodeServiceError";
  }
}
