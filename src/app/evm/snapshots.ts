import { join } from "node:path";
import { EMPTY_BYTES } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import { SnapshotService, type SnapshotSettings } from "../snapshots/index.js";
import type { EvmStateDb } from "./stateDb.js";

/**
 * The EVM app's state sync snapshots (docs/state-sync.md) on the built-in apps' SnapshotService: the
 * committed state is EvmStateDb.snapshotEntries (pointer, settings, accounts, storage, code, the last
 * 256 block records), kept under `<dbDir>/snapshots`; a restore empties the database, writes the
 * chunks as they come and reloads the app from the restored pointer.
 *
 * The app hash chains each height's state diff (stateDb.ts), so it does not commit to the state as
 * a whole: what is checked is each chunk against the metadata's hash list, and the metadata against
 * the light-client-verified app hash (docs/compatibility.md, "state sync").
 */
export function evmSnapshotService(
  db: EvmStateDb,
  opts: { dbDir: string; log: Logger; snapshots?: SnapshotSettings },
  reload: () => void,
): SnapshotService {
  return new SnapshotService(
    {
      entries: () => db.snapshotEntries(),
      clear: () => db.kv.transaction(() => db.clearForRestore()),
      write: (entries) => db.kv.transaction(() => db.restoreEntries(entries)),
      finish: async () => {
        const meta = await db.finishRestore();
        reload();
        return { height: meta?.height ?? 0, appHash: meta?.appHash ?? EMPTY_BYTES };
      },
    },
    {
      dir: join(opts.dbDir, "snapshots"),
      log: opts.log,
      ...(opts.snapshots === undefined ? {} : { settings: opts.snapshots }),
    },
  );
}
