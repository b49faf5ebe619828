import {
  closeSync,
  copyFileSync,
  existsSync,
  fsync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { crc32 } from "node:zlib";
import type { Logger } from "../util/logger.js";
import type { Timestamp } from "../util/time.js";
import { WalCorruptionError, WalWriteError } from "./errors.js";
import {
  decodeWalMessage,
  encodeWalMessage,
  MAX_WAL_MSG_BYTES,
  type TimedWalMessage,
  type WalMessage,
} from "./walCodec.js";

/**
 * The consensus write-ahead log (consensus/wal.go) at `<home>/data/cs.wal/wal`. Every record is
 * `crc32(data) u32 BE | len(data) u32 BE | data`. The checksum is zlib's CRC-32 (IEEE), not
 * CometBFT's CRC-32C: the file is not meant to be read by CometBFT tools.
 *
 * Records are appended to the file as soon as they are written (so a killed process loses nothing
 * the OS already has); `writeSync` and `flushAndSync` also fsync. A WAL without fsync (`sync: false`,
 * dev chains) keeps a height's records in memory, unencoded, and drops them at its EndHeight, which alone
 * reaches the file (see `WalOptions.sync`); a stop, search or repair before then writes them out. The head file rotates to
 * `wal.000`, `wal.001`, … past `maxFileBytes`, and the oldest rotated files are removed past
 * `maxTotalBytes` (autofile group: 10 MiB heads, 1 GiB total).
 */
export interface WalOptions {
  maxFileBytes?: number;
  maxTotalBytes?: number;
  log: Logger;
  /**
   * fsync on writeSync/flushAndSync (default true). A dev chain turns it off: a height's records are
   * then held in memory, so a killed process loses the records of the height it was making, which a
   * restart makes again (docs/dev-chain.md "What survives a crash"); never a power loss's worth more.
   * At the height's EndHeight its records are dropped, never encoded, and only the EndHeight record is
   * appended: catch-up replay reads only the records after the last EndHeight, so those of a finished
   * height are never read (writing them cost a dev chain ~8% of a mined block's CPU). A stop, a
   * search, a repair, or more than `PENDING_MAX_RECORDS` held, write the held records out first.
   */
  sync?: boolean;
}

export interface WalSearchResult {
  found: boolean;
  /** Records after the EndHeight marker, oldest first (empty when not found). */
  messages: TimedWalMessage[];
  /** The first damaged place after the marker (CometBFT's replay fails on it and repairs the head). */
  corruption?: WalProblem & { file: string };
}

/** What `Wal.repair` cut off the head file. */
export interface WalRepair {
  file: string;
  backup: string;
  offset: number;
  droppedBytes: number;
  /** Records that still decoded among the dropped bytes. */
  droppedRecords: number;
}

const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_TOTAL_BYTES = 1024 * 1024 * 1024;

/** Frames one record. */
export function frameWalRecord(m: TimedWalMessage): Uint8Array {
  // Encoded after 8 bytes left for the header: one buffer, no copy.
  const out = encodeWalMessage(m, 8);
  const length = out.length - 8;
  if (length > MAX_WAL_MSG_BYTES) {
    throw new WalWriteError(`WAL message is ${length} bytes, more than the ${MAX_WAL_MSG_BYTES}-byte limit`);
  }
  out.writeUInt32BE(crc32(out.subarray(8)) >>> 0, 0);
  out.writeUInt32BE(length, 4);
  return out;
}

/** A record that decoded, and where it starts in its file. */
export interface WalRecordAt {
  offset: number;
  message: TimedWalMessage;
}

/** A place in a WAL file where a record is damaged. */
export interface WalProblem {
  offset: number;
  error: WalCorruptionError;
}

/** What a WAL file holds, read as far as it can be. */
export interface WalFileScan {
  /** Records that decode, in order. */
  records: WalRecordAt[];
  /**
   * Complete records (their length fits the file) that fail their checksum or do not decode. Reading
   * goes on after them, as CometBFT's search for a height marker does (IgnoreDataCorruptionErrors).
   */
  bad: WalProblem[];
  /**
   * Where reading had to stop: a record that runs past the end of the file (a torn write) or that
   * announces more than the size limit. Nothing from here on can be read.
   */
  stop?: WalProblem;
}

/** Reads every record of a WAL file (see WalFileScan). */
export function scanWalFile(bytes: Uint8Array): WalFileScan {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: WalRecordAt[] = [];
  const bad: WalProblem[] = [];
  let off = 0;
  while (off < buf.length) {
    if (off + 8 > buf.length) {
      const error = new WalCorruptionError(
        `torn record header at offset ${off}: ${buf.length - off} of its 8 bytes present`,
      );
      return { records, bad, stop: { offset: off, error } };
    }
    const sum = buf.readUInt32BE(off);
    const len = buf.readUInt32BE(off + 4);
    if (len > MAX_WAL_MSG_BYTES) {
      const error = new WalCorruptionError(
        `record at offset ${off} announces ${len} bytes, over the ${MAX_WAL_MSG_BYTES}-byte limit`,
      );
      return { records, bad, stop: { offset: off, error } };
    }
    if (off + 8 + len > buf.length) {
      const error = new WalCorruptionError(
        `torn record at offset ${off}: ${len} bytes announced, ${buf.length - off - 8} present`,
      );
      return { records, bad, stop: { offset: off, error } };
    }
    const data = buf.subarray(off + 8, off + 8 + len);
    if (crc32(data) >>> 0 !== sum) {
      bad.push({ offset: off, error: new WalCorruptionError(`record at offset ${off} fails its checksum`) });
    } else {
      try {
        records.push({ offset: off, message: decodeWalMessage(new Uint8Array(data)) });
      } catch (err) {
        const e = err instanceof WalCorruptionError ? err : new WalCorruptionError(String(err), { cause: err });
        bad.push({ offset: off, error: new WalCorruptionError(`record at offset ${off}: ${e.message}`, { cause: e }) });
      }
    }
    off += 8 + len;
  }
  return { records, bad };
}

/** The first damaged place of a scan (a bad record or the stop), if any. */
export function firstWalProblem(scan: WalFileScan): WalProblem | undefined {
  const bad = scan.bad[0];
  if (bad === undefined) return scan.stop;
  return scan.stop !== undefined && scan.stop.offset < bad.offset ? scan.stop : bad;
}

/**
 * The records before the first damaged place (CometBFT's repairWalFile keeps exactly these);
 * `validBytes` is where that place starts (the file's length when there is none).
 */
export function decodeWalFile(bytes: Uint8Array): {
  messages: TimedWalMessage[];
  validBytes: number;
  error?: WalCorruptionError;
} {
  const scan = scanWalFile(bytes);
  const first = firstWalProblem(scan);
  if (first === undefined) return { messages: scan.records.map((r) => r.message), validBytes: bytes.length };
  return {
    messages: scan.records.filter((r) => r.offset < first.offset).map((r) => r.message),
    validBytes: first.offset,
    error: first.error,
  };
}

/**
 * A WAL without fsync writes out the records it holds once there are this many (a height that waits
 * long, timeouts recorded one after another, keeps a bounded list).
 */
const PENDING_MAX_RECORDS = 1024;

export class Wal {
  readonly path: string;
  #fd: number;
  #headBytes: number;
  #dirty = false;
  #closed = false;
  readonly #log: Logger;
  readonly #maxFileBytes: number;
  readonly #maxTotalBytes: number;
  readonly #sync: boolean;
  /** No rotated file exists (known after a reset removed them; false: not known, list the directory). */
  #noRotatedFiles = false;
  /** Without fsync: records of the current height not yet written to the file (`#writePending`), unencoded. */
  #pending: TimedWalMessage[] = [];

  private constructor(path: string, fd: number, headBytes: number, opts: WalOptions) {
    this.path = path;
    this.#fd = fd;
    this.#headBytes = headBytes;
    this.#log = opts.log;
    this.#maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.#maxTotalBytes = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
    this.#sync = opts.sync ?? true;
  }

  /**
   * Opens (creating the directory) the WAL. A new WAL starts with EndHeight(0). When the head file ends
   * in bytes that cannot be read (a record torn by a crash, a length over the limit), they are cut
   * off, the file as it was kept in `<path>.CORRUPTED` (see `repair`): appending after them would leave
   * every later record unreadable. Complete records that fail their checksum stay; catch-up replay
   * deals with them as CometBFT does (`repair`).
   */
  static async open(path: string, opts: WalOptions): Promise<Wal> {
    mkdirSync(dirname(path), { recursive: true });
    let size = 0;
    if (existsSync(path)) {
      const bytes = readFileSync(path);
      const scan = scanWalFile(bytes);
      size = bytes.length;
      if (scan.stop !== undefined) {
        await cutWalFile(path, bytes, scan, scan.stop, opts.log);
        size = scan.stop.offset;
      }
    }
    const fd = openSync(path, "a");
    const wal = new Wal(path, fd, size, opts);
    if (size === 0 && wal.#rotatedFiles().length === 0) {
      await wal.writeSync({ kind: "endHeight", height: 0 }, 0n);
    }
    return wal;
  }

  /**
   * CometBFT's WAL repair (consensus/state.go repairWalFile, run when catch-up replay meets corrupted
   * data): the head file keeps the records before its first damaged one, the file as it was is copied
   * to `<path>.CORRUPTED` first. One error line names the file and what was dropped. Returns undefined
   * when the head file has nothing damaged (the damage is in a rotated file, which CometBFT's repair
   * does not touch either).
   */
  async repair(): Promise<WalRepair | undefined> {
    this.#writePending();
    const bytes = readFileSync(this.path);
    const scan = scanWalFile(bytes);
    const first = firstWalProblem(scan);
    if (first === undefined) return undefined;
    const done = await cutWalFile(this.path, bytes, scan, first, this.#log);
    this.#headBytes = first.offset;
    this.#dirty = false;
    return done;
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): drops every record, rotated files included, and starts
   * over with `#ENDHEIGHT height`, so a restart replays from the restored height.
   */
  async reset(height: number, time: Timestamp): Promise<void> {
    // Once per evm_revert: the head file is cut in place (its descriptor appends, so the next record
    // goes at 0) rather than closed and reopened, and the directory is listed only while rotated
    // files may exist.
    if (!this.#noRotatedFiles) for (const f of this.#rotatedFiles()) unlinkSync(f);
    this.#noRotatedFiles = true;
    this.#pending = [];
    ftruncateSync(this.#fd, 0);
    this.#headBytes = 0;
    this.#dirty = false;
    await this.writeSync({ kind: "endHeight", height }, time);
  }

  /**
   * Appends a record (no fsync; without fsync at all, held until the height's EndHeight, which drops
   * the held records and appends itself alone: `WalOptions.sync`).
   */
  write(msg: WalMessage, time: Timestamp): void {
    if (this.#closed) return;
    this.#dirty = true;
    if (!this.#sync && msg.kind !== "endHeight") {
      this.#pending.push({ time, msg });
      if (this.#pending.length >= PENDING_MAX_RECORDS) this.#writePending();
      return;
    }
    if (this.#pending.length > 0) this.#pending = [];
    const frame = frameWalRecord({ time, msg });
    this.#writeOut(frame);
    this.#headBytes += frame.length;
  }

  #writeOut(bytes: Uint8Array): void {
    try {
      writeAll(this.#fd, bytes);
    } catch (err) {
      throw new WalWriteError(`failed to write to the consensus WAL ${this.path}. Check the file system`, {
        cause: err,
      });
    }
  }

  /** Without fsync: the records held in memory, encoded and appended in one write. */
  #writePending(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    const frames = pending.map(frameWalRecord);
    const bytes = frames.length === 1 ? (frames[0] as Uint8Array) : Buffer.concat(frames);
    this.#writeOut(bytes);
    this.#headBytes += bytes.length;
  }

  /** Appends a record and fsyncs it (without fsync: an EndHeight record writes the height's records out). */
  async writeSync(msg: WalMessage, time: Timestamp): Promise<void> {
    this.write(msg, time);
    await this.flushAndSync();
    if (msg.kind === "endHeight") this.#maybeRotate();
  }

  /** Makes everything written so far durable (without fsync: nothing to do until the EndHeight). */
  async flushAndSync(): Promise<void> {
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    if (!this.#sync) return;
    try {
      await fsyncFd(this.#fd);
    } catch (err) {
      throw new WalWriteError(`failed to fsync the consensus WAL ${this.path}. Check the file system`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#writePending();
    await this.flushAndSync();
    this.#closed = true;
    closeSync(this.#fd);
  }

  /** Rotated files, oldest first. */
  #rotatedFiles(): string[] {
    const dir = dirname(this.path);
    const base = basename(this.path);
    const re = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.(\\d{3,})$`);
    return readdirSync(dir)
      .map((f) => ({ f, m: re.exec(f) }))
      .filter((x) => x.m !== null)
      .sort((a, b) => Number(a.m?.[1]) - Number(b.m?.[1]))
      .map((x) => join(dir, x.f));
  }

  /** Head past maxFileBytes → next `wal.NNN`; oldest rotated files go past maxTotalBytes. */
  #maybeRotate(): void {
    if (this.#headBytes < this.#maxFileBytes) return;
    this.#writePending();
    const rotated = this.#rotatedFiles();
    const last = rotated.at(-1);
    const next = last === undefined ? 0 : Number(/\.(\d+)$/.exec(last)?.[1] ?? "0") + 1;
    closeSync(this.#fd);
    renameSync(this.path, `${this.path}.${String(next).padStart(3, "0")}`);
    this.#noRotatedFiles = false;
    this.#fd = openSync(this.path, "a");
    this.#headBytes = 0;
    let total = 0;
    const all = this.#rotatedFiles().reverse();
    for (const f of all) {
      total += statSync(f).size;
      if (total > this.#maxTotalBytes) unlinkSync(f);
    }
  }

  /**
   * Finds EndHeight(height) and returns the records after it (SearchForEndHeight). Damaged complete
   * records are skipped while searching, as with CometBFT's IgnoreDataCorruptionErrors; a damaged
   * place after the marker is reported in `corruption` (replay must not go on past it).
   */
  searchForEndHeight(height: number): WalSearchResult {
    this.#writePending();
    const files = [...this.#rotatedFiles(), this.path];
    const scans = new Map<string, WalFileScan>();
    const scanOf = (f: string): WalFileScan => {
      let scan = scans.get(f);
      if (scan === undefined) {
        scan = this.#scanFile(f);
        scans.set(f, scan);
      }
      return scan;
    };
    // Newest first: the marker is almost always in the head.
    for (let i = files.length - 1; i >= 0; i--) {
      const file = files[i] as string;
      const scan = scanOf(file);
      const at = scan.records.findIndex((r) => r.message.msg.kind === "endHeight" && r.message.msg.height === height);
      if (at < 0) continue;
      const markerOffset = (scan.records[at] as WalRecordAt).offset;
      const after = scan.records.slice(at + 1).map((r) => r.message);
      const problemAfter = (sc: WalFileScan, from: number): WalProblem | undefined => {
        const bad = sc.bad.find((b) => b.offset > from);
        const stop = sc.stop !== undefined && sc.stop.offset > from ? sc.stop : undefined;
        if (bad === undefined) return stop;
        return stop !== undefined && stop.offset < bad.offset ? stop : bad;
      };
      let corruption: WalSearchResult["corruption"];
      const own = problemAfter(scan, markerOffset);
      if (own !== undefined) corruption = { ...own, file };
      for (const later of files.slice(i + 1)) {
        const sc = scanOf(later);
        after.push(...sc.records.map((r) => r.message));
        const p = problemAfter(sc, -1);
        if (corruption === undefined && p !== undefined) corruption = { ...p, file: later };
      }
      return corruption === undefined ? { found: true, messages: after } : { found: true, messages: after, corruption };
    }
    return { found: false, messages: [] };
  }

  /** Every record of the group that decodes, oldest first (tests and debugging). */
  readAll(): TimedWalMessage[] {
    this.#writePending();
    return [...this.#rotatedFiles(), this.path].flatMap((f) => this.#scanFile(f).records.map((r) => r.message));
  }

  /** Damaged places already logged (each is logged once, not at every search). */
  readonly #reported = new Set<string>();

  #scanFile(file: string): WalFileScan {
    if (!existsSync(file)) return { records: [], bad: [] };
    const scan = scanWalFile(readFileSync(file));
    for (const p of scan.stop === undefined ? scan.bad : [...scan.bad, scan.stop]) {
      const key = `${file}@${p.offset}`;
      if (this.#reported.has(key)) continue;
      this.#reported.add(key);
      this.#log.error({ file, offset: p.offset, err: p.error.message }, "corrupted WAL record skipped");
    }
    return scan;
  }
}

/**
 * Cuts `path` at `from.offset` after copying it to `<path>.CORRUPTED`, fsyncs, and logs one error line
 * naming the file, the offset and what was dropped.
 */
async function cutWalFile(
  path: string,
  bytes: Uint8Array,
  scan: WalFileScan,
  from: WalProblem,
  log: Logger,
): Promise<WalRepair> {
  const backup = `${path}.CORRUPTED`;
  copyFileSync(path, backup);
  const fd = openSync(path, "r+");
  try {
    ftruncateSync(fd, from.offset);
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
  const droppedBytes = bytes.length - from.offset;
  const droppedRecords = scan.records.filter((r) => r.offset > from.offset).length;
  const what =
    droppedRecords === 0
      ? `its last ${droppedBytes} bytes`
      : `${droppedBytes} bytes, ${droppedRecords} readable records among them`;
  log.error(
    { file: path, offset: from.offset, droppedBytes, droppedRecords, backup, err: from.error.message },
    `repaired the consensus WAL ${path}: dropped ${what}, from offset ${from.offset} on (${from.error.message}); the file as it was is kept in ${backup}`,
  );
  return { file: path, backup, offset: from.offset, droppedBytes, droppedRecords };
}

function writeAll(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += writeSync(fd, data, off, data.length - off);
}

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
}
