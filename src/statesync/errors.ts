import { ComethError } from "../util/errors.js";

/** Base of every error state sync raises. */
export class StatesyncError extends ComethError {}

/** Bytes on the snapshot or chunk channel that are not a valid tendermint.statesync.Message (ValidateMsg). */
export class InvalidStatesyncMessageError extends StatesyncError {}

/** The light client could not verify a height through the RPC servers (or they disagree). */
export class LightClientError extends StatesyncError {}

/** A primary and a witness answered different headers for one height: one of them lies. */
export class ConflictingHeadersError extends LightClientError {}

/** No peer offered a snapshot the app could restore (CometBFT errNoSnapshots). */
export class NoSnapshotsError extends StatesyncError {}

/** The app asked to abort the restore, or answered against the protocol (CometBFT errAbort). */
export class StatesyncAbortError extends StatesyncError {}

/** The restored app does not have the verified app hash, height or app version (errVerifyFailed). */
export class StatesyncVerifyError extends StatesyncError {}
