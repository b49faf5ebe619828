import { type KvStore, openKvStore } from "./kvStore.js";
import { openMemoryKvStore } from "./memoryKvStore.js";

/** config.toml's `db_backend`. */
export type KvBackend = "lmdb" | "memdb";

/**
 * The store behind `db_backend` (config.toml): LMDB in `dir`, or with "memdb" (CometBFT's in-memory
 * backend) a store in this process's memory that is gone when it ends (memoryKvStore.ts).
 */
export async function openKvBackend(
  backend: KvBackend,
  dir: string,
  opts: { noSync?: boolean } = {},
): Promise<KvStore> {
  if (backend === "memdb") return openMemoryKvStore();
  return openKvStore(dir, opts);
}
