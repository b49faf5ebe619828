import { ComethError } from "../../util/errors.js";

/** A kvstore tx that does not follow any of the accepted formats; the message goes to the debug log (CheckTx answers the code alone, as v0.38). */
export class InvalidKvTxError extends ComethError {
  constructor(reason: string) {
    super(`invalid tx format: ${reason}`);
  }
}

/** The kvstore database holds something this version cannot read. */
export class KvStoreAppStateError extends ComethError {
  constructor(what: string, opts: { cause?: unknown } = {}) {
    super(`cannot read ${what} from the kvstore database. Remove the app's data directory to start over`, opts);
  }
}
