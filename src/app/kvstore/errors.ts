/** A kvstore tx that does not follow any of the accepted formats; the message is the CheckTx log. */
export class InvalidKvTxError extends Error {
  constructor(reason: string) {
    super(`invalid tx format: ${reason}`);
    this.name = new.target.name;
  }
}

/** The kvstore database holds something this version cannot read. */
export class KvStoreAppStateError extends Error {
  constructor(what: string, opts: { cause?: unknown } = {}) {
    super(`cannot read ${what} from the kvstore database. Remove the app's data directory to start over`, opts);
    this.name = new.target.name;
  }
}
