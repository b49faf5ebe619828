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
 * the OS already has); `writeSync` and `flushAndSync` also fsync. The head file rotates to
 * `wal.000`, `wal.001`, … past `maxFileBytes`, and the oldest rotated files are removed past
 * `maxTotalBytes` (autofile group: 10 MiB heads, 1 GiB total).
 */
export interface WalOptions {
  maxFileBytes?: number;
  maxTotalBytes?: number;
  log: Logger;
  /**
   * fsync on writeSync/flushAndSync (default true). A dev chain turns it off: records still reach the
   * OS at once, so they survive the process being killed, not a power loss.
   */
  sync?: boolean;
}

export interface WalSearchResult {
  found: boolean;
  /** Records after the EndHeight marker, oldest first (empty when not found). */
  messages: TimedWalMessage[];
}

const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_TOTAL_BYTES = 1024 * 1024 * 1024;

/** Frames one record. */
export function frameWalRecord(m: TimedWalMessage): Uint8Array {
  const data = encodeWalMessage(m);
  if (data.length > MAX_WAL_MSG_BYTES) {
    throw new WalWriteError(`WAL message is ${data.length} bytes, more than the ${MAX_WAL_MSG_BYTES}-byte limit`);
  }
  const out = Buffer.alloc(8 + data.length);
  out.writeUInt32BE(crc32(data) >>> 0, 0);
  out.writeUInt32BE(data.length, 4);
  out.set(data, 8);
  return new Uint8Array(out);
}

/** Decodes every record of a WAL file; `validBytes` is the length of the prefix that decoded. */
export function decodeWalFile(bytes: Uint8Array): {
  messages: TimedWalMessage[];
  validBytes: number;
  error?: WalCorruptionError;
} {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const messages: TimedWalMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (off + 8 > buf.length)
      return { messages, validBytes: off, error: new WalCorruptionError(`torn WAL record header at offset ${off}`) };
    const sum = buf.readUInt32BE(off);
    const len = buf.readUInt32BE(off + 4);
    if (len > MAX_WAL_MSG_BYTES) {
      return {
        messages,
        validBytes: off,
        error: new WalCorruptionError(`WAL record at offset ${off} claims ${len} bytes, over the limit`),
      };
    }
    if (off + 8 + len > buf.length) {
      return {
        messages,
        validBytes: off,
        error: new WalCorruptionError(
          `torn WAL record at offset ${off}: ${len} bytes announced, ${buf.length - off - 8} present`,
        ),
      };
    }
    const data = buf.subarray(off + 8, off + 8 + len);
    if (crc32(data) >>> 0 !== sum) {
      return {
        messages,
        validBytes: off,
        error: new WalCorruptionError(`WAL record at offset ${off} fails its checksum`),
      };
    }
    try {
      messages.push(decodeWalMessage(new Uint8Array(data)));
    } catch (err) {
      const e = err instanceof WalCorruptionError ? err : new WalCorruptionError(String(err), { cause: err });
      return { messages, validBytes: off, error: e };
    }
    off += 8 + len;
  }
  return { messages, validBytes: off };
}

export class Wal {
  readonly path: string;
  private fd: number;
  private headBytes: number;
  private dirty = false;
  private closed = false;
  private readonly log: Logger;
  private readonly maxFileBytes: number;
  private readonly maxTotalBytes: number;
  private readonly sync: boolean;

  private constructor(path: string, fd: number, headBytes: number, opts: WalOptions) {
    this.path = path;
    this.fd = fd;
    this.headBytes = headBytes;
    this.log = opts.log;
    this.maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.maxTotalBytes = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
    this.sync = opts.sync ?? true;
  }

  /**
   * Opens (creating the directory) the WAL. A torn or corrupted tail of the head file is cut off:
   * the file is first copied to `<path>.CORRUPTED`, then truncated to its valid prefix. A new WAL
   * starts with EndHeight(0).
   */
  static async open(path: string, opts: WalOptions): Promise<Wal> {
    mkdirSync(dirname(path), { recursive: true });
    let size = 0;
    if (existsSync(path)) {
      const bytes = readFileSync(path);
      const res = decodeWalFile(bytes);
      if (res.error !== undefined) {
        const backup = `${path}.CORRUPTED`;
        copyFileSync(path, backup);
        const fd = openSync(path, "r+");
        try {
          ftruncateSync(fd, res.validBytes);
          await fsyncFd(fd);
        } finally {
          closeSync(fd);
        }
        opts.log.error(
          { err: res.error.message, keptBytes: res.validBytes, droppedBytes: bytes.length - res.validBytes, backup },
          "the WAL file is corrupted; kept the valid prefix",
        );
      }
      size = res.validBytes;
    }
    const fd = openSync(path, "a");
    const wal = new Wal(path, fd, size, opts);
    if (size === 0 && wal.rotatedFiles().length === 0) {
      await wal.writeSync({ kind: "endHeight", height: 0 }, 0n);
    }
    return wal;
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): drops every record, rotated files included, and starts
   * over with `#ENDHEIGHT height`, so a restart replays from the restored height.
   */
  async reset(height: number, time: Timestamp): Promise<void> {
    closeSync(this.fd);
    for (const f of this.rotatedFiles()) unlinkSync(f);
    const fd = openSync(this.path, "w");
    this.fd = fd;
    this.headBytes = 0;
    this.dirty = false;
    await this.writeSync({ kind: "endHeight", height }, time);
  }

  /** Appends a record (no fsync). */
  write(msg: WalMessage, time: Timestamp): void {
    if (this.closed) return;
    const frame = frameWalRecord({ time, msg });
    try {
      writeAll(this.fd, frame);
    } catch (err) {
      throw new WalWriteError(`failed to write to the consensus WAL ${this.path}. Check the file system`, {
        cause: err,
      });
    }
    this.headBytes += frame.length;
    this.dirty = true;
  }

  /** Appends a record and fsyncs it. */
  async writeSync(msg: WalMessage, time: Timestamp): Promise<void> {
    this.write(msg, time);
    await this.flushAndSync();
    if (msg.kind === "endHeight") this.maybeRotate();
  }

  /** Makes everything written so far durable. */
  async flushAndSync(): Promise<void> {
    if (this.closed || !this.dirty) return;
    this.dirty = false;
    if (!this.sync) return;
    try {
      await fsyncFd(this.fd);
    } catch (err) {
      throw new WalWriteError(`failed to fsync the consensus WAL ${this.path}. Check the file system`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flushAndSync();
    this.closed = true;
    closeSync(this.fd);
  }

  /** Rotated files, oldest first. */
  private rotatedFiles(): string[] {
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
  private maybeRotate(): void {
    if (this.headBytes < this.maxFileBytes) return;
    const rotated = this.rotatedFiles();
    const last = rotated.at(-1);
    const next = last === undefined ? 0 : Number(/\.(\d+)$/.exec(last)?.[1] ?? "0") + 1;
    closeSync(this.fd);
    renameSync(this.path, `${this.path}.${String(next).padStart(3, "0")}`);
    this.fd = openSync(this.path, "a");
    this.headBytes = 0;
    let total = 0;
    const all = this.rotatedFiles().reverse();
    for (const f of all) {
      total += statSync(f).size;
      if (total > this.maxTotalBytes) unlinkSync(f);
    }
  }

  /**
   * Finds EndHeight(height) and returns the records after it (SearchForEndHeight). Corrupted
   * records end the file they are in (the rest is ignored), as in IgnoreDataCorruptionErrors.
   */
  searchForEndHeight(height: number): WalSearchResult {
    const files = [...this.rotatedFiles(), this.path];
    // Newest first: the marker is almost always in the head.
    for (let i = files.length - 1; i >= 0; i--) {
      // biome-ignore lint/style/noNonNullAssertion: index in range
      const msgs = this.readFile(files[i]!);
      const at = msgs.findIndex((m) => m.msg.kind === "endHeight" && m.msg.height === height);
      if (at >= 0) {
        const after = msgs.slice(at + 1);
        for (const f of files.slice(i + 1)) after.push(...this.readFile(f));
        return { found: true, messages: after };
      }
    }
    return { found: false, messages: [] };
  }

  /** Every record of the group, oldest first (tests and debugging). */
  readAll(): TimedWalMessage[] {
    return [...this.rotatedFiles(), this.path].flatMap((f) => this.readFile(f));
  }

  private readFile(file: string): TimedWalMessage[] {
    if (!existsSync(file)) return [];
    const res = decodeWalFile(readFileSync(file));
    if (res.error !== undefined) this.log.error({ file, err: res.error.message }, "corrupted WAL data ignored");
    return res.messages;
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += writeSync(fd, data, off, data.length - off);
}

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
}
