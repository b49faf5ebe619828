import { readFileSync } from "node:fs";
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ComethError } from "../util/errors.js";

/**
 * One node per data directory. CometBFT's databases lock their files (goleveldb's LOCK), so a second
 * `cometbft start` on a home in use stops at once. cometh's LMDB files let several processes in, so
 * without this a second node on the same home got as far as the handshake and then wrote to the same
 * block store, WAL and validator state as the first (a double-sign risk), and the first could no
 * longer stop cleanly.
 *
 * The lock is the file `LOCK` in the data directory, created exclusively, holding the owner's PID and
 * its start time (Linux: /proc/<pid>/stat, field 22). A lock whose owner is gone (a node killed with
 * SIGKILL), or whose PID now names another process, is stale and taken over; a lock held by a live
 * owner makes the start fail with DataDirLockedError. Within one process (in-process test nodes) the
 * directories its nodes hold are remembered: a lock file with this process's PID is stale unless one
 * of them holds it (a node of this process that failed to start released it, or never wrote it).
 */

/** The data directory is held by another running node. */
export class DataDirLockedError extends ComethError {}

const LOCK_FILE = "LOCK";

/** Directories this process holds (by running nodes); a lock file with this PID and not listed is stale. */
const heldHere = new Set<string>();

interface Owner {
  pid: number;
  /** Clock ticks since boot when the process started; undefined where /proc is not readable. */
  start: string | undefined;
}

function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // Field 2 (comm) is parenthesised and may hold spaces: count from the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19];
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function parseOwner(text: string): Owner | undefined {
  const [pidText, start] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, start: start === undefined || start === "" ? undefined : start };
}

/** True when the process named by the lock file still runs (and is the same process, where that can be told). */
function ownerRuns(owner: Owner, dir: string): boolean {
  if (owner.pid === process.pid) return heldHere.has(dir);
  if (!alive(owner.pid)) return false;
  if (owner.start === undefined) return true;
  const now = startTime(owner.pid);
  return now === undefined || now === owner.start;
}

/**
 * Throws DataDirLockedError when a running node holds data directory `dir` (what `unsafe-reset-all`
 * checks before deleting it); a stale lock or none passes.
 */
export async function assertDataDirFree(dir: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCK_FILE), "latin1");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const owner = parseOwner(text);
  if (owner !== undefined && ownerRuns(owner, dir)) throw lockedError(dir, owner);
}

function lockedError(dir: string, owner: Owner): DataDirLockedError {
  return new DataDirLockedError(
    `the data directory ${dir} is in use by another cometh node (process ${owner.pid}${owner.pid === process.pid ? ", this one" : ""}). Stop that node first, or give this one another --home`,
  );
}

/**
 * Takes the lock of data directory `dir` (which exists), or throws DataDirLockedError naming the PID
 * that holds it. Returns the release, which removes the file if it is still this node's.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  const me = `${process.pid} ${startTime(process.pid) ?? ""}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(path, "wx");
      try {
        await fh.writeFile(me);
      } finally {
        await fh.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 2) throw err;
    }
    let text: string;
    try {
      text = await readFile(path, "latin1");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    const owner = parseOwner(text);
    if (owner !== undefined && ownerRuns(owner, dir)) throw lockedError(dir, owner);
    // A stale lock (its owner is gone, or the file is not one of ours): removed, then taken afresh.
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
    });
  }
  heldHere.add(dir);
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    heldHere.delete(dir);
    try {
      if ((await readFile(path, "latin1")) === me) await unlink(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  };
}
