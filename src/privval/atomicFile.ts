import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Crash-safe file replacement (CometBFT libs/tempfile.WriteFileAtomic): write a temp file in the same
 * directory, fsync it, rename it over the target, then fsync the directory so the rename itself is
 * durable. After the promise resolves, a crash leaves either the old or the new file, never a mix.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.${tmpCounter++}.tmp`);
  const fh = await open(tmp, "wx", mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDirectory(dir);
}

/**
 * writeFileAtomicSync without fsyncs (dev chains): still never a mix of old and new (the rename is
 * atomic), and it survives the process being killed; a power loss may keep the old file.
 */
export function writeFileAtomicNoSync(path: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${tmpCounter++}.tmp`);
  try {
    writeFileSync(tmp, data, { mode, flag: "wx" });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The synchronous twin of writeFileAtomic, for callers that are synchronous by contract. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.${tmpCounter++}.tmp`);
  const fd = openSync(tmp, "wx", mode);
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDirectorySync(dir);
}

let tmpCounter = 0;

async function fsyncDirectory(dir: string): Promise<void> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch (err) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
    if (!isDirSyncUnsupported(err)) throw err;
  } finally {
    await fh?.close();
  }
}

function fsyncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (err) {
    if (!isDirSyncUnsupported(err)) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isDirSyncUnsupported(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "EISDIR" || code === "EPERM" || code === "EINVAL" || code === "ENOTSUP";
}
