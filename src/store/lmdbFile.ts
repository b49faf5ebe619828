import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { endianness } from "node:os";
import { extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { StoreFileError } from "./errors.js";

/**
 * Checks an LMDB data file before LMDB maps it. LMDB trusts the file: a zeroed or overwritten header, a
 * file cut short or one that is not LMDB at all makes lmdb-js crash the process (SIGSEGV reading a
 * garbage root, SIGBUS touching a page past the end of the file) or, for some headers, write fresh meta
 * pages over the old ones. This reads only the two header pages and the two tree roots they name
 * (the layout of lmdb-js 3's liblmdb, `mdb.c`: MDB_page_header, MDB_meta, MDB_db), so it costs a few
 * reads whatever the size of the file. It throws StoreFileError naming the file and the problem, and
 * never writes. A missing file is fine (LMDB creates it).
 *
 * Not detected: bytes overwritten inside pages that are not a header or a root (LMDB keeps no page
 * checksums; finding those means reading the whole file).
 */
export function checkLmdbFile(path: string): void {
  // lmdb-js's rule: a path with an extension is the data file, one without is a directory holding data.mdb.
  const file = extname(path) === "" ? join(path, "data.mdb") : path;
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new StoreFileError(file, "is not a regular file", { damaged: false });
    size = st.size;
  } catch (err) {
    if (err instanceof StoreFileError) throw err;
    if ((err as { code?: unknown }).code === "ENOENT") return;
    throw new StoreFileError(file, `cannot be read: ${(err as Error).message}`, { cause: err, damaged: false });
  }
  // The offsets below are those of 64-bit little-endian builds (pgno_t and txnid_t are 8 bytes).
  if (!LAYOUT_KNOWN) return;
  if (size === 0) {
    throw new StoreFileError(file, "is empty (0 bytes): it was truncated, or LMDB was stopped while creating it");
  }
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    throw new StoreFileError(file, `cannot be read: ${(err as Error).message}`, { cause: err, damaged: false });
  }
  try {
    checkOpenFile(file, fd, size);
  } finally {
    closeSync(fd);
  }
}

const LAYOUT_KNOWN = endianness() === "LE" && process.arch.endsWith("64");

/** sizeof(MDB_page_header): pgno u64, txnid u64, pad u16, flags u16, lower/upper u16+u16. */
const PAGE_HEADER = 24;
/** sizeof(MDB_meta) on 64-bit builds. */
const META_BYTES = 144;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_META = 0x08;
const P_INVALID = 0xffff_ffff_ffff_ffffn;
const MIN_PAGE = 512;
const MAX_PAGE = 65536;

interface Meta {
  /** Where it sits, for messages. */
  readonly name: string;
  readonly psize: number;
  readonly lastPage: bigint;
  readonly txnid: bigint;
  readonly freeRoot: bigint;
  readonly mainRoot: bigint;
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf;
}

/** MDB_meta at `off` of `b`: MDB_db entries are 48 bytes (pad u32, flags u16, depth u16, 4 × u64 counts, root u64). */
function parseMeta(name: string, b: Buffer, off: number): Meta {
  return {
    name,
    psize: b.readUInt32LE(off + 24),
    freeRoot: b.readBigUInt64LE(off + 24 + 40),
    mainRoot: b.readBigUInt64LE(off + 72 + 40),
    lastPage: b.readBigUInt64LE(off + 120),
    txnid: b.readBigUInt64LE(off + 128),
  };
}

function checkHeaderPage(file: string, b: Buffer, which: string): void {
  const flags = b.readUInt16LE(18);
  const magic = b.readUInt32LE(PAGE_HEADER);
  if ((flags & P_META) === 0 || magic !== MDB_MAGIC) {
    throw new StoreFileError(
      file,
      `has a damaged header: its ${which} header page carries no LMDB meta page (the magic number 0xbeefc0de is missing: zeroed, overwritten, or not an LMDB file)`,
    );
  }
  const version = b.readUInt32LE(PAGE_HEADER + 4) & 0xffff;
  if (version !== MDB_DATA_VERSION) {
    throw new StoreFileError(
      file,
      `has LMDB data format version ${version} in its ${which} header page; this LMDB reads version ${MDB_DATA_VERSION}`,
    );
  }
}

function checkOpenFile(file: string, fd: number, size: number): void {
  if (size < PAGE_HEADER + META_BYTES) {
    throw new StoreFileError(file, `is truncated: ${size} bytes, shorter than one LMDB header page`);
  }
  const first = readAt(fd, 0, Math.min(size, MAX_PAGE));
  checkHeaderPage(file, first, "first");
  const psize = first.readUInt32LE(PAGE_HEADER + 24);
  if (psize < MIN_PAGE || psize > MAX_PAGE || (psize & (psize - 1)) !== 0) {
    throw new StoreFileError(file, `has a damaged header: it names a page size of ${psize} bytes`);
  }
  if (size < 2 * psize) {
    throw new StoreFileError(file, `is truncated: ${size} bytes, shorter than its two ${psize}-byte header pages`);
  }
  const second = readAt(fd, psize, psize);
  checkHeaderPage(file, second, "second");
  // lmdb-js also keeps a "sync" meta in the second half of page 0 (overlapping sync) and picks the
  // newest of the three by transaction id; that copy has no magic number of its own.
  const metas = [
    parseMeta("first header page", first, PAGE_HEADER),
    parseMeta("first header page's sync copy", first, psize / 2 + PAGE_HEADER),
    parseMeta("second header page", second, PAGE_HEADER),
  ].filter((m, i) => i !== 1 || m.txnid > 0n);
  let newest = metas[0] as Meta;
  for (const m of metas) if (m.txnid > newest.txnid) newest = m;
  const pages = BigInt(Math.floor(size / psize));
  for (const m of metas) {
    const rootOk = (r: bigint) => r === P_INVALID || (r >= 2n && r <= m.lastPage);
    if (m.psize !== psize || m.lastPage < 1n || !rootOk(m.freeRoot) || !rootOk(m.mainRoot)) {
      throw new StoreFileError(file, `has a damaged header: its ${m.name} does not describe a valid database`);
    }
  }
  for (const root of [newest.mainRoot, newest.freeRoot]) {
    if (root === P_INVALID) continue;
    if (root >= pages) {
      throw new StoreFileError(
        file,
        `is truncated: ${size} bytes (${pages} pages of ${psize} bytes), but its header names page ${root} as a tree root`,
      );
    }
    const page = readAt(fd, Number(root) * psize, PAGE_HEADER);
    const flags = page.readUInt16LE(18);
    if (page.readBigUInt64LE(0) !== root || (flags & (P_BRANCH | P_LEAF)) === 0 || (flags & P_META) !== 0) {
      throw new StoreFileError(file, `is damaged: page ${root}, a tree root named by its header, is overwritten`);
    }
  }
  const expected = newest.lastPage + 1n;
  // A file may legitimately end a few pages short of the header's last page: pages freed in the same
  // transaction that allocated them are never written. Only a full read tells that apart from a cut.
  if (pages < expected && !readsCompletely(file)) {
    throw new StoreFileError(
      file,
      `is truncated: ${size} bytes (${pages} pages of ${psize} bytes), but its header counts ${expected} pages, and reading it fails`,
    );
  }
}

/**
 * Opens the file read-only in a child process and reads every table through: a page past the end of
 * the file kills that process (SIGBUS), not this one.
 */
function readsCompletely(file: string): boolean {
  const lmdbUrl = pathToFileURL(createRequire(import.meta.url).resolve("lmdb")).href;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", READ_ALL, lmdbUrl, file], {
    stdio: "ignore",
    timeout: 10 * 60_000,
  });
  return res.status === 0 && res.signal === null;
}

const READ_ALL = `
const [lmdbUrl, path] = process.argv.slice(1);
const { open } = await import(lmdbUrl);
const root = open({ path, readOnly: true, maxDbs: 256, compression: false, encoding: "binary" });
const names = [];
for (const key of root.getKeys()) if (typeof key === "string") names.push(key);
for (const name of names) {
  const db = root.openDB(name, { encoding: "binary", keyEncoding: "binary" });
  for (const entry of db.getRange({})) if (entry.value === undefined) process.exit(1);
}
await root.close();
`;
