import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../privval/index.js";
import type { Logger } from "../util/logger.js";
import { shuffle } from "../util/shuffle.js";
import { AddrBookFileError, AddrBookRejectedError } from "./errors.js";
import { formatNetAddress, isLocalAddress, isRoutableAddress, netAddressProblem, normalizeHost } from "./netAddress.js";
import type { NetAddress } from "./reactor.js";

// p2p/pex/params.go
const NEW_BUCKET_COUNT = 256;
const NEW_BUCKET_SIZE = 64;
const OLD_BUCKET_COUNT = 64;
const OLD_BUCKET_SIZE = 64;
const NEW_BUCKETS_PER_GROUP = 32;
const OLD_BUCKETS_PER_GROUP = 4;
const MAX_NEW_BUCKETS_PER_ADDRESS = 4;
const NEED_ADDRESS_THRESHOLD = 1000;
const GET_SELECTION_PERCENT = 23;
const MIN_GET_SELECTION = 32;
/** Must match the PEX reactor's max message size. */
export const MAX_GET_SELECTION = 250;
const NUM_MISSING_DAYS = 7;
const NUM_RETRIES = 3;
const MAX_FAILURES = 10;
const MIN_BAD_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_DUMP_INTERVAL_MS = 2 * 60 * 1000;

export const BUCKET_TYPE = { new: 1, old: 2 } as const;
export type BucketType = (typeof BUCKET_TYPE)[keyof typeof BUCKET_TYPE];

/** Go's zero time.Time, which CometBFT writes for "never". */
const ZERO_TIME_MS = Date.parse("0001-01-01T00:00:00Z");

/** What the book knows about one address (p2p/pex/known_address.go). */
interface KnownAddress {
  addr: NetAddress;
  src: NetAddress;
  buckets: number[];
  attempts: number;
  bucketType: BucketType;
  lastAttemptMs: number;
  lastSuccessMs: number;
  lastBanTimeMs: number;
}

/** addrbook.json as CometBFT writes it (pex/file.go). */
interface AddrBookJson {
  key: string;
  addrs: {
    addr: WireNetAddress;
    src: WireNetAddress;
    buckets: number[] | null;
    attempts: number;
    bucket_type: number;
    last_attempt: string;
    last_success: string;
    last_ban_time: string;
  }[];
}
interface WireNetAddress {
  id: string;
  ip: string;
  port: number;
}

export interface AddrBookOptions {
  /** `[p2p] addr_book_file`. */
  filePath: string;
  /** `[p2p] addr_book_strict`: refuse non-routable addresses (127.0.0.1, 10.x, ...). */
  routabilityStrict: boolean;
  log: Logger;
  /** How often start() saves the book (CometBFT: 2 min). */
  dumpIntervalMs?: number;
  now?: () => number;
}

/**
 * Known peer addresses in "new" (heard of) and "old" (connected and useful) buckets, as in
 * CometBFT's pex.addrBook. Bucket placement hashes the address's /16 group with a random key, so
 * one source cannot fill the book. Buckets hash with sha256 instead of highwayhash.
 */
export class AddrBook {
  readonly filePath: string;
  readonly #strict: boolean;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #dumpIntervalMs: number;
  readonly #ourAddrs = new Set<string>();
  readonly #privateIds = new Set<string>();
  readonly #lookup = new Map<string, KnownAddress>();
  readonly #badPeers = new Map<string, KnownAddress>();
  readonly #bucketsNew: Map<string, KnownAddress>[];
  readonly #bucketsOld: Map<string, KnownAddress>[];
  #nNew = 0;
  #nOld = 0;
  #key: string;
  #timer: NodeJS.Timeout | undefined;
  #saving: Promise<void> = Promise.resolve();

  constructor(opts: AddrBookOptions) {
    this.filePath = opts.filePath;
    this.#strict = opts.routabilityStrict;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#dumpIntervalMs = opts.dumpIntervalMs ?? DEFAULT_DUMP_INTERVAL_MS;
    this.#key = randomBytes(12).toString("hex");
    this.#bucketsNew = Array.from({ length: NEW_BUCKET_COUNT }, () => new Map());
    this.#bucketsOld = Array.from({ length: OLD_BUCKET_COUNT }, () => new Map());
  }

  /** Loads the file (when present) and saves periodically until stop(). */
  async start(): Promise<void> {
    await this.load();
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => {
        this.save().catch((err: unknown) => this.#log.error({ err }, "Failed to save AddrBook to file"));
      }, this.#dumpIntervalMs);
      this.#timer.unref();
    }
  }

  /** Stops the periodic save and saves once more. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.save();
  }

  // ---- our addresses and private IDs

  addOurAddress(addr: NetAddress): void {
    this.#log.info({ addr: formatNetAddress(addr) }, "Add our address to book");
    this.#ourAddrs.add(formatNetAddress(addr));
  }

  ourAddress(addr: NetAddress): boolean {
    return this.#ourAddrs.has(formatNetAddress(addr));
  }

  addPrivateIds(ids: readonly string[]): void {
    for (const id of ids) this.#privateIds.add(id);
  }

  isPrivateId(id: string): boolean {
    return this.#privateIds.has(id);
  }

  // ---- adding and removing

  /**
   * Adds `addr` heard from `src` to a new bucket (probabilistically again when already known).
   * Throws AddrBookRejectedError when it is invalid, banned, private, ours or (strict) non-routable.
   */
  addAddress(addr: NetAddress, src: NetAddress): void {
    addr = { id: addr.id, host: normalizeHost(addr.host), port: addr.port };
    const text = formatNetAddress(addr);
    const problem = netAddressProblem(addr);
    if (problem !== undefined) throw new AddrBookRejectedError("invalid", text, problem);
    if (this.#badPeers.has(addr.id)) throw new AddrBookRejectedError("banned", text);
    if (this.#privateIds.has(addr.id)) throw new AddrBookRejectedError("private", text);
    if (this.#privateIds.has(src.id)) throw new AddrBookRejectedError("privateSrc", formatNetAddress(src));
    if (this.#ourAddrs.has(text)) throw new AddrBookRejectedError("self", text);
    if (this.#strict && !isRoutableAddress(addr)) throw new AddrBookRejectedError("nonRoutable", text);

    let ka = this.#lookup.get(addr.id);
    if (ka) {
      // An old address keeps its IP: a peer cannot move a vetted ID elsewhere (eclipse attacks).
      if (ka.bucketType === BUCKET_TYPE.old) return;
      if (ka.buckets.length >= MAX_NEW_BUCKETS_PER_ADDRESS) return;
      // The more buckets it is in already, the less likely it goes into another.
      if (Math.floor(Math.random() * 2 * ka.buckets.length) !== 0) return;
    } else {
      ka = {
        addr,
        src,
        buckets: [],
        attempts: 0,
        bucketType: BUCKET_TYPE.new,
        lastAttemptMs: this.#now(),
        lastSuccessMs: ZERO_TIME_MS,
        lastBanTimeMs: ZERO_TIME_MS,
      };
    }
    this.#addToNewBucket(ka, this.#calcNewBucket(addr, src));
  }

  removeAddress(addr: NetAddress): void {
    const ka = this.#lookup.get(addr.id);
    if (!ka) return;
    this.#log.info({ addr: formatNetAddress(addr) }, "Remove address from book");
    this.#removeFromAllBuckets(ka);
  }

  hasAddress(addr: NetAddress): boolean {
    return this.#lookup.has(addr.id);
  }

  /** Ever marked good and nothing bad since (in an old bucket). */
  isGood(addr: NetAddress): boolean {
    return this.#lookup.get(addr.id)?.bucketType === BUCKET_TYPE.old;
  }

  isBanned(addr: NetAddress): boolean {
    return this.#badPeers.has(addr.id);
  }

  size(): number {
    return this.#nNew + this.#nOld;
  }

  empty(): boolean {
    return this.size() === 0;
  }

  needMoreAddrs(): boolean {
    return this.size() < NEED_ADDRESS_THRESHOLD;
  }

  /** Every known address (new and old), for tests and debugging. */
  addresses(): NetAddress[] {
    return [...this.#lookup.values()].map((ka) => ka.addr);
  }

  // ---- marking

  /** The peer was useful: reset attempts and promote it to an old bucket. */
  markGood(id: string): void {
    const ka = this.#lookup.get(id);
    if (!ka) return;
    const now = this.#now();
    ka.lastAttemptMs = now;
    ka.attempts = 0;
    ka.lastSuccessMs = now;
    if (ka.bucketType === BUCKET_TYPE.new) this.#moveToOld(ka);
  }

  markAttempt(addr: NetAddress): void {
    const ka = this.#lookup.get(addr.id);
    if (!ka) return;
    ka.lastAttemptMs = this.#now();
    ka.attempts++;
  }

  /** Bans the address for `banTimeMs` and takes it out of the buckets. */
  markBad(addr: NetAddress, banTimeMs: number): void {
    const ka = this.#lookup.get(addr.id);
    if (!ka) return;
    if (!this.#badPeers.has(addr.id)) {
      const until = this.#now() + banTimeMs;
      if (ka.lastBanTimeMs < until) ka.lastBanTimeMs = until;
      this.#badPeers.set(addr.id, ka);
      this.#log.info({ addr: formatNetAddress(addr) }, "Add address to blacklist");
    }
    this.#removeFromAllBuckets(ka);
  }

  /** Puts peers whose ban expired back into a new bucket. */
  reinstateBadPeers(): void {
    for (const [id, ka] of this.#badPeers) {
      if (ka.lastBanTimeMs > this.#now()) continue;
      ka.bucketType = BUCKET_TYPE.new;
      ka.buckets = [];
      this.#addToNewBucket(ka, this.#calcNewBucket(ka.addr, ka.src));
      this.#badPeers.delete(id);
      this.#log.info({ addr: formatNetAddress(ka.addr) }, "Reinstated address");
    }
  }

  // ---- picking

  /**
   * A random address to dial, from an old or a new bucket; `biasTowardsNewAddrs` in [0, 100] weighs
   * new against old (sqrt of each count times its weight). Undefined when the chosen kind is empty.
   */
  pickAddress(biasTowardsNewAddrs: number): NetAddress | undefined {
    if (this.size() === 0) return undefined;
    const bias = Math.max(0, Math.min(100, biasTowardsNewAddrs));
    const oldCorrelation = Math.sqrt(this.#nOld) * (100 - bias);
    const newCorrelation = Math.sqrt(this.#nNew) * bias;
    const pickOld = (newCorrelation + oldCorrelation) * Math.random() < oldCorrelation;
    if ((pickOld && this.#nOld === 0) || (!pickOld && this.#nNew === 0)) return undefined;
    const all = [...this.#lookup.values()].filter(
      (ka) => ka.bucketType === (pickOld ? BUCKET_TYPE.old : BUCKET_TYPE.new),
    );
    return all[Math.floor(Math.random() * all.length)]?.addr;
  }

  /** A random selection to share over PEX: 23% of the book, at least 32, at most 250; no private IDs. */
  getSelection(): NetAddress[] {
    const all = this.#shareable();
    const n = this.#selectionSize(all.length);
    shuffle(all);
    return all.slice(0, n).map((ka) => ka.addr);
  }

  /** Like getSelection, with `biasTowardsNewAddrs` percent taken from new buckets (seed mode). */
  getSelectionWithBias(biasTowardsNewAddrs: number): NetAddress[] {
    const all = this.#shareable();
    const n = this.#selectionSize(all.length);
    const bias = Math.max(0, Math.min(100, biasTowardsNewAddrs));
    const news = shuffle(all.filter((ka) => ka.bucketType === BUCKET_TYPE.new));
    const olds = shuffle(all.filter((ka) => ka.bucketType === BUCKET_TYPE.old));
    const numNew = Math.max(Math.round((bias / 100) * n), n - olds.length);
    const picked = news.slice(0, numNew);
    picked.push(...olds.slice(0, n - picked.length));
    return picked.map((ka) => ka.addr);
  }

  #shareable(): KnownAddress[] {
    return [...this.#lookup.values()].filter((ka) => !this.#privateIds.has(ka.addr.id));
  }

  #selectionSize(bookSize: number): number {
    const n = Math.max(Math.min(MIN_GET_SELECTION, bookSize), Math.floor((bookSize * GET_SELECTION_PERCENT) / 100));
    return Math.min(MAX_GET_SELECTION, n);
  }

  // ---- buckets

  #bucket(type: BucketType, idx: number): Map<string, KnownAddress> {
    const b = type === BUCKET_TYPE.new ? this.#bucketsNew[idx] : this.#bucketsOld[idx];
    if (!b) throw new RangeError(`bucket ${idx} out of range`);
    return b;
  }

  #addToNewBucket(ka: KnownAddress, idx: number): void {
    if (ka.bucketType === BUCKET_TYPE.old) return;
    const key = formatNetAddress(ka.addr);
    const bucket = this.#bucket(BUCKET_TYPE.new, idx);
    if (bucket.has(key)) return;
    if (bucket.size > NEW_BUCKET_SIZE) this.#expireNew(idx);
    bucket.set(key, ka);
    if (!ka.buckets.includes(idx)) {
      ka.buckets.push(idx);
      if (ka.buckets.length === 1) this.#nNew++;
    }
    this.#lookup.set(ka.addr.id, ka);
  }

  #addToOldBucket(ka: KnownAddress, idx: number): boolean {
    const key = formatNetAddress(ka.addr);
    const bucket = this.#bucket(BUCKET_TYPE.old, idx);
    if (bucket.has(key)) return true;
    if (bucket.size > OLD_BUCKET_SIZE) return false;
    bucket.set(key, ka);
    if (!ka.buckets.includes(idx)) {
      ka.buckets.push(idx);
      if (ka.buckets.length === 1) this.#nOld++;
    }
    this.#lookup.set(ka.addr.id, ka);
    return true;
  }

  #removeFromBucket(ka: KnownAddress, idx: number): void {
    this.#bucket(ka.bucketType, idx).delete(formatNetAddress(ka.addr));
    const before = ka.buckets.length;
    ka.buckets = ka.buckets.filter((b) => b !== idx);
    if (before > 0 && ka.buckets.length === 0) {
      if (ka.bucketType === BUCKET_TYPE.new) this.#nNew--;
      else this.#nOld--;
      this.#lookup.delete(ka.addr.id);
    }
  }

  #removeFromAllBuckets(ka: KnownAddress): void {
    const key = formatNetAddress(ka.addr);
    for (const idx of ka.buckets) this.#bucket(ka.bucketType, idx).delete(key);
    if (ka.buckets.length > 0) {
      if (ka.bucketType === BUCKET_TYPE.new) this.#nNew--;
      else this.#nOld--;
    }
    ka.buckets = [];
    this.#lookup.delete(ka.addr.id);
  }

  /** Makes room in a full new bucket: drop a bad entry, else the oldest. */
  #expireNew(idx: number): void {
    const bucket = this.#bucket(BUCKET_TYPE.new, idx);
    for (const ka of bucket.values()) {
      if (this.#isBad(ka)) {
        this.#removeFromBucket(ka, idx);
        return;
      }
    }
    const oldest = this.#pickOldest(bucket);
    if (oldest) this.#removeFromBucket(oldest, idx);
  }

  #pickOldest(bucket: Map<string, KnownAddress>): KnownAddress | undefined {
    let oldest: KnownAddress | undefined;
    for (const ka of bucket.values()) if (!oldest || ka.lastAttemptMs < oldest.lastAttemptMs) oldest = ka;
    return oldest;
  }

  /** Promotes to an old bucket; a full one demotes its oldest entry to a new bucket. */
  #moveToOld(ka: KnownAddress): void {
    if (ka.buckets.length === 0) return;
    this.#removeFromAllBuckets(ka);
    ka.bucketType = BUCKET_TYPE.old;
    const idx = this.#calcOldBucket(ka.addr);
    if (this.#addToOldBucket(ka, idx)) return;
    const oldest = this.#pickOldest(this.#bucket(BUCKET_TYPE.old, idx));
    if (oldest) {
      this.#removeFromBucket(oldest, idx);
      oldest.bucketType = BUCKET_TYPE.new;
      this.#addToNewBucket(oldest, this.#calcNewBucket(oldest.addr, oldest.src));
    }
    if (!this.#addToOldBucket(ka, idx)) this.#log.error({ addr: formatNetAddress(ka.addr) }, "Could not re-add to old");
  }

  /** known_address.go isBad: a new address, not tried in the last minute, that looks dead. */
  #isBad(ka: KnownAddress): boolean {
    if (ka.bucketType === BUCKET_TYPE.old) return false;
    const now = this.#now();
    if (ka.lastAttemptMs > now - 60_000) return false;
    if (ka.lastAttemptMs < now - NUM_MISSING_DAYS * DAY_MS) return true;
    if (ka.lastSuccessMs === ZERO_TIME_MS && ka.attempts >= NUM_RETRIES) return true;
    return ka.lastSuccessMs < now - MIN_BAD_DAYS * DAY_MS && ka.attempts >= MAX_FAILURES;
  }

  #hash(...parts: (string | Buffer)[]): bigint {
    const h = createHash("sha256");
    for (const p of parts) h.update(p);
    return h.digest().readBigUInt64BE(0);
  }

  // hash(key + group + srcgroup) % per_group, then hash(key + srcgroup + that) % count (addrbook.go)
  #calcNewBucket(addr: NetAddress, src: NetAddress): number {
    const h1 = this.#hash(this.#key, this.#groupKey(addr), this.#groupKey(src)) % BigInt(NEW_BUCKETS_PER_GROUP);
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(h1);
    return Number(this.#hash(this.#key, this.#groupKey(src), buf) % BigInt(NEW_BUCKET_COUNT));
  }

  #calcOldBucket(addr: NetAddress): number {
    const h1 = this.#hash(this.#key, formatNetAddress(addr)) % BigInt(OLD_BUCKETS_PER_GROUP);
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(h1);
    return Number(this.#hash(this.#key, this.#groupKey(addr), buf) % BigInt(OLD_BUCKET_COUNT));
  }

  /** The /16 of an IPv4 address, the /32 of an IPv6 one, "local"/"unroutable" in strict mode. */
  #groupKey(addr: NetAddress): string {
    if (this.#strict && isLocalAddress(addr)) return "local";
    if (this.#strict && !isRoutableAddress(addr)) return "unroutable";
    const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(addr.host);
    if (v4) return `${v4[1]}.${v4[2]}.0.0`;
    if (addr.host.includes(":")) return addr.host.split(":").slice(0, 2).join(":");
    return addr.host;
  }

  // ---- persistence

  /** Writes addrbook.json atomically (temp file + rename); saves never overlap. */
  save(): Promise<void> {
    const run = this.#saving.then(() => this.#saveNow());
    this.#saving = run.catch(() => undefined);
    return run;
  }

  async #saveNow(): Promise<void> {
    this.#log.info({ size: this.size() }, "Saving AddrBook to file");
    const json: AddrBookJson = {
      key: this.#key,
      addrs: [...this.#lookup.values()].map((ka) => ({
        addr: toWire(ka.addr),
        src: toWire(ka.src),
        buckets: ka.buckets,
        attempts: ka.attempts,
        bucket_type: ka.bucketType,
        last_attempt: formatTime(ka.lastAttemptMs),
        last_success: formatTime(ka.lastSuccessMs),
        last_ban_time: formatTime(ka.lastBanTimeMs),
      })),
    };
    await mkdir(dirname(this.filePath), { recursive: true });
    await writeFileAtomic(this.filePath, JSON.stringify(json, null, "\t"), 0o644);
  }

  /** Reads addrbook.json when it exists; false when there is none. Throws AddrBookFileError when corrupt. */
  async load(): Promise<boolean> {
    if (!existsSync(this.filePath)) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.filePath, "utf8"));
    } catch (err) {
      throw new AddrBookFileError(this.filePath, "cannot read or parse it", err);
    }
    if (!isAddrBookJson(parsed)) throw new AddrBookFileError(this.filePath, 'expected {"key": hex, "addrs": [...]}');
    if (parsed.key) this.#key = parsed.key;
    for (const w of parsed.addrs ?? []) {
      const ka: KnownAddress = {
        addr: fromWire(w.addr),
        src: fromWire(w.src),
        buckets: [],
        attempts: w.attempts ?? 0,
        bucketType: w.bucket_type === BUCKET_TYPE.old ? BUCKET_TYPE.old : BUCKET_TYPE.new,
        lastAttemptMs: parseTime(w.last_attempt),
        lastSuccessMs: parseTime(w.last_success),
        lastBanTimeMs: parseTime(w.last_ban_time),
      };
      if (this.#lookup.has(ka.addr.id)) continue;
      const limit = ka.bucketType === BUCKET_TYPE.old ? OLD_BUCKET_COUNT : NEW_BUCKET_COUNT;
      let idxs = (w.buckets ?? []).filter((b) => Number.isInteger(b) && b >= 0 && b < limit);
      if (idxs.length === 0) {
        idxs = [
          ka.bucketType === BUCKET_TYPE.old ? this.#calcOldBucket(ka.addr) : this.#calcNewBucket(ka.addr, ka.src),
        ];
      }
      const key = formatNetAddress(ka.addr);
      for (const idx of new Set(idxs)) {
        this.#bucket(ka.bucketType, idx).set(key, ka);
        ka.buckets.push(idx);
      }
      this.#lookup.set(ka.addr.id, ka);
      if (ka.bucketType === BUCKET_TYPE.new) this.#nNew++;
      else this.#nOld++;
    }
    return true;
  }
}

function toWire(a: NetAddress): WireNetAddress {
  return { id: a.id, ip: a.host, port: a.port };
}

function fromWire(w: WireNetAddress): NetAddress {
  return { id: w.id, host: normalizeHost(w.ip), port: w.port };
}

function formatTime(ms: number): string {
  return ms <= ZERO_TIME_MS ? "0001-01-01T00:00:00Z" : new Date(ms).toISOString();
}

function parseTime(s: string | undefined): number {
  if (!s) return ZERO_TIME_MS;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? ZERO_TIME_MS : ms;
}

function isWireAddr(v: unknown): v is WireNetAddress {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.id === "string" && typeof o.ip === "string" && typeof o.port === "number";
}

function isAddrBookJson(v: unknown): v is AddrBookJson {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  if (o.key !== undefined && typeof o.key !== "string") return false;
  if (o.addrs === null || o.addrs === undefined) return true;
  if (!Array.isArray(o.addrs)) return false;
  return o.addrs.every((a) => {
    if (typeof a !== "object" || a === null) return false;
    const r = a as Record<string, unknown>;
    return isWireAddr(r.addr) && isWireAddr(r.src);
  });
}
