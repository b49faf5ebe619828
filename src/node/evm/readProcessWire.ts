/**
 * What the main process and its read processes (readProcesses.ts, readProcess.ts) send each other over
 * the IPC channel of node:child_process (JSON; connections travel beside a message as handles). Every
 * message is checked when it arrives: a malformed one is a ReadProcessWireError naming what is wrong,
 * never a crash of the side that got it.
 *
 * Main → read process:
 * - `conn` + socket: a connection accepted on the HTTP address, nothing read from it yet; `c` names it.
 * - `height`: the latest committed height the main process has just published (sent before any of
 *   its answers can show it: EvmStateDb.onPublished).
 * - `answer`: the whole HTTP answer (status line, headers, body) to the forwarded request `r`.
 *
 * Read process → main:
 * - `ready` once its LMDB environment is open; `failed` when it cannot start (then it exits).
 * - `forward`: a POST body it does not answer itself (`r` numbers it, `s` is when its first byte
 *   arrived, ms since epoch): the main process answers it as its own fast path would.
 * - `back` + socket: connection `c` leaves the fast path (CORS, an upgrade, HTTP/1.0...): node:http
 *   in the main process serves it from `p`, the bytes read and not answered (base64).
 * - `closed`: connection `c` ended in the read process.
 * - `observed`: the outcomes of the calls it answered, for the main process's metrics: method names, durations (ms) and
 *   failure flags, one of each per call.
 * - `error`: a handler failure to log (the client got a 500, as from the main process).
 */

import { EvmAppError } from "../../app/evm/index.js";

/** A message on a read process's channel that is not one of the wire's. */
export class ReadProcessWireError extends EvmAppError {}

/** How a read process opens the app's database and serves HTTP as the main process does. */
export interface ReadProcessSetup {
  /** Its number (1-based; 0 is the main process), for logs. */
  readonly index: number;
  /** The app's LMDB file (`<dbDir>/data.mdb`). */
  readonly dbFile: string;
  readonly noSync: boolean;
  /** Decimal. */
  readonly chainId: string;
  readonly allowUnprotectedTxs: boolean;
  /** `[json-rpc]` values the calls and the HTTP fast path use (gas-cap in decimal). */
  readonly rpc: {
    readonly gasCap: string;
    readonly evmTimeoutMs: number;
    readonly httpTimeoutMs: number;
    readonly httpIdleTimeoutMs: number;
    readonly batchRequestLimit: number;
    readonly batchResponseMaxSize: number;
    readonly maxBodyBytes: number;
    readonly api: readonly string[];
  };
}

export type ToReadProcess =
  | { readonly t: "conn"; readonly c: number }
  | { readonly t: "height"; readonly h: number }
  | { readonly t: "answer"; readonly r: number; readonly a: string };

export type FromReadProcess =
  | { readonly t: "ready" }
  | { readonly t: "failed"; readonly error: string }
  | {
      readonly t: "forward";
      readonly r: number;
      readonly b: string;
      readonly s: number;
      /** The senders of the body's raw txs, recovered in the child: [CometBFT tx key, sender], in hex. */
      readonly h?: readonly (readonly [string, string])[];
    }
  | {
      readonly t: "back";
      readonly c: number;
      readonly p: string;
      /** 1: the connection's requests were mostly passed on (readProcess.ts PASS_BACK): serve it on the fast path. */
      readonly f?: 1;
    }
  | { readonly t: "closed"; readonly c: number }
  | {
      readonly t: "observed";
      readonly n: readonly string[];
      readonly d: readonly number[];
      readonly f: readonly number[];
    }
  | { readonly t: "error"; readonly error: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  const text = JSON.stringify(v);
  return text === undefined ? String(v) : text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

function wireError(what: string, m: unknown): ReadProcessWireError {
  return new ReadProcessWireError(`read process wire: ${what}: ${describe(m)}`);
}

function count(m: Record<string, unknown>, key: string, raw: unknown): number {
  const v = m[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw wireError(`field ${key} must be a non-negative integer`, raw);
  }
  return v;
}

function text(m: Record<string, unknown>, key: string, raw: unknown): string {
  const v = m[key];
  if (typeof v !== "string") throw wireError(`field ${key} must be a string`, raw);
  return v;
}

const TX_KEY = /^[0-9a-f]{64}$/;
const ADDRESS = /^[0-9a-f]{40}$/;

/** A forward's sender hints: [tx key, sender] pairs of lower-case hex (64 and 40 digits). */
function senderHints(h: unknown, raw: unknown): [string, string][] {
  if (!Array.isArray(h)) throw wireError("field h must be a list", raw);
  const out: [string, string][] = [];
  for (const pair of h) {
    if (!Array.isArray(pair) || pair.length !== 2 || !TX_KEY.test(String(pair[0])) || !ADDRESS.test(String(pair[1]))) {
      throw wireError("field h must hold [tx key, sender] pairs of lower-case hex", raw);
    }
    out.push([pair[0] as string, pair[1] as string]);
  }
  return out;
}

/** Checks a message the main process received from a read process. */
export function fromReadProcess(raw: unknown): FromReadProcess {
  if (!isRecord(raw)) throw wireError("not an object", raw);
  switch (raw.t) {
    case "ready":
      return { t: "ready" };
    case "failed":
      return { t: "failed", error: text(raw, "error", raw) };
    case "error":
      return { t: "error", error: text(raw, "error", raw) };
    case "forward":
      return {
        t: "forward",
        r: count(raw, "r", raw),
        b: text(raw, "b", raw),
        s: count(raw, "s", raw),
        ...(raw.h === undefined ? {} : { h: senderHints(raw.h, raw) }),
      };
    case "back":
      if (raw.f !== undefined && raw.f !== 1) throw wireError("field f must be 1 when present", raw);
      return { t: "back", c: count(raw, "c", raw), p: text(raw, "p", raw), ...(raw.f === 1 ? { f: 1 as const } : {}) };
    case "closed":
      return { t: "closed", c: count(raw, "c", raw) };
    case "observed": {
      const { n, d, f } = raw;
      if (
        !Array.isArray(n) ||
        !Array.isArray(d) ||
        !Array.isArray(f) ||
        n.length !== d.length ||
        n.length !== f.length
      ) {
        throw wireError("observed needs arrays n, d and f of one length", raw);
      }
      for (let i = 0; i < n.length; i++) {
        if (
          typeof n[i] !== "string" ||
          typeof d[i] !== "number" ||
          !Number.isFinite(d[i]) ||
          (f[i] !== 0 && f[i] !== 1)
        ) {
          throw wireError(`observed entry ${i} must be a name, a duration and 0 or 1`, raw);
        }
      }
      return { t: "observed", n: n as string[], d: d as number[], f: f as number[] };
    }
    default:
      throw wireError("unknown message", raw);
  }
}

/** Checks a message a read process received from the main process. */
export function toReadProcess(raw: unknown): ToReadProcess {
  if (!isRecord(raw)) throw wireError("not an object", raw);
  switch (raw.t) {
    case "conn":
      return { t: "conn", c: count(raw, "c", raw) };
    case "height":
      return { t: "height", h: count(raw, "h", raw) };
    case "answer":
      return { t: "answer", r: count(raw, "r", raw), a: text(raw, "a", raw) };
    default:
      throw wireError("unknown message", raw);
  }
}

/** Checks the setup a read process was started with (its first argument, JSON). */
export function readProcessSetup(json: string | undefined): ReadProcessSetup {
  if (json === undefined) throw new ReadProcessWireError("a read process is started with its setup (JSON) as argument");
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new ReadProcessWireError(`read process setup is not JSON: ${(err as Error).message}`);
  }
  if (!isRecord(raw) || !isRecord(raw.rpc)) throw wireError("setup needs an object with rpc", raw);
  const rpc = raw.rpc;
  count(raw, "index", raw);
  text(raw, "dbFile", raw);
  text(raw, "chainId", raw);
  if (!/^[0-9]+$/.test(raw.chainId as string)) throw wireError("chainId must be decimal", raw);
  if (typeof raw.noSync !== "boolean" || typeof raw.allowUnprotectedTxs !== "boolean") {
    throw wireError("noSync and allowUnprotectedTxs must be booleans", raw);
  }
  text(rpc, "gasCap", raw);
  if (!/^[0-9]+$/.test(rpc.gasCap as string)) throw wireError("rpc.gasCap must be decimal", raw);
  for (const key of [
    "evmTimeoutMs",
    "httpTimeoutMs",
    "httpIdleTimeoutMs",
    "batchRequestLimit",
    "batchResponseMaxSize",
    "maxBodyBytes",
  ]) {
    count(rpc, key, raw);
  }
  if (!Array.isArray(rpc.api) || rpc.api.some((a) => typeof a !== "string")) {
    throw wireError("rpc.api must be a list of names", raw);
  }
  return raw as unknown as ReadProcessSetup;
}

/**
 * Outcomes of the calls a read process answered, waiting to be sent to the main process (its metrics), in batches: one message a
 * second rather than one per call. `mark`/`dropSince` take back what a payload recorded when the
 * main process answers that payload after all (it counts it then).
 */
export class ObservationBatch {
  #names: string[] = [];
  #durations: number[] = [];
  #failed: number[] = [];

  get size(): number {
    return this.#names.length;
  }

  add(name: string, durationMs: number, failed: boolean): void {
    this.#names.push(name);
    this.#durations.push(durationMs);
    this.#failed.push(failed ? 1 : 0);
  }

  mark(): number {
    return this.#names.length;
  }

  dropSince(mark: number): void {
    this.#names.length = mark;
    this.#durations.length = mark;
    this.#failed.length = mark;
  }

  /** The message for what is kept, which is then forgotten; undefined when there is nothing. */
  take(): FromReadProcess | undefined {
    if (this.#names.length === 0) return undefined;
    const m: FromReadProcess = { t: "observed", n: this.#names, d: this.#durations, f: this.#failed };
    this.#names = [];
    this.#durations = [];
    this.#failed = [];
    return m;
  }
}
