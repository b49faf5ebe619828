import { ComethError } from "../../util/errors.js";

/** Snapshot metadata or a chunk that does not follow the built-in apps' format (docs/state-sync.md). */
export class SnapshotFormatError extends ComethError {}
