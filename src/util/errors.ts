/**
 * The base of every error class in cometh: an error's `name` is its class's name (`StoreError`,
 * `InvalidVoteError`), so logs, `String(err)` and RPC error text say which one it is. Subclasses add
 * fields or build the message; none sets the name.
 */
export class ComethError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
