import { request as httpRequest } from "node:http";
import WebSocket from "ws";

/**
 * A test client speaking the three node-RPC transports: URI GET, JSON-RPC POST and WebSocket.
 * Arguments are given once with both spellings (JSON-RPC value and URI text). Test support only.
 */

export type Transport = "uri" | "http" | "ws";
export const TRANSPORTS: readonly Transport[] = ["uri", "http", "ws"];

/** One argument in its two wire spellings. */
export interface Arg {
  readonly json: unknown;
  readonly uri: string;
}

export const arg = {
  /** int64/int: a JSON string in JSON-RPC, bare digits in URI. */
  int: (n: number | bigint): Arg => ({ json: String(n), uri: String(n) }),
  str: (s: string): Arg => ({ json: s, uri: JSON.stringify(s) }),
  /** []byte: base64 in JSON-RPC, 0x-hex in URI. */
  bytes: (b: Uint8Array): Arg => ({
    json: Buffer.from(b).toString("base64"),
    uri: `0x${Buffer.from(b).toString("hex")}`,
  }),
  /** HexBytes: hex without 0x in JSON-RPC, 0x-hex in URI. */
  hex: (b: Uint8Array): Arg => ({
    json: Buffer.from(b).toString("hex").toUpperCase(),
    uri: `0x${Buffer.from(b).toString("hex")}`,
  }),
  bool: (v: boolean): Arg => ({ json: v, uri: String(v) }),
  raw: (json: unknown, uri: string): Arg => ({ json, uri }),
};

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test replies are inspected freely
  readonly body: any;
}

export interface RawHttpOptions {
  method?: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A plain HTTP request (no keep-alive) returning status, headers and body text. */
export function rawHttp(base: string, opts: RawHttpOptions): Promise<Reply> {
  const url = new URL(opts.path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? "GET", headers: { connection: "close", ...(opts.headers ?? {}) }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parseMaybe(text) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

export class WsTestClient {
  readonly ws: WebSocket;
  readonly #pending = new Map<string, (m: unknown) => void>();
  /** Messages that were not the first answer to an id (pushed events), by id; plus id-less ones under "". */
  readonly pushes = new Map<string, unknown[]>();
  readonly #pushWaiters: { id: string; count: number; resolve: () => void }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on("message", (data: Buffer) => {
      const msg = JSON.parse(data.toString("utf8")) as { id?: unknown };
      const key = msg.id === undefined ? "" : JSON.stringify(msg.id);
      const waiter = this.#pending.get(key);
      if (waiter !== undefined) {
        this.#pending.delete(key);
        waiter(msg);
        return;
      }
      const list = this.pushes.get(key) ?? [];
      list.push(msg);
      this.pushes.set(key, list);
      for (const w of [...this.#pushWaiters]) {
        if (w.id === key && list.length >= w.count) {
          this.#pushWaiters.splice(this.#pushWaiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  }

  static connect(url: string, opts: WebSocket.ClientOptions = {}): Promise<WsTestClient> {
    const ws = new WebSocket(url, opts);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new WsTestClient(ws)));
      ws.once("error", reject);
    });
  }

  /** Sends a raw frame and waits for the answer carrying `expectId` (JSON of the id; "" for none). */
  sendRaw(frame: string | Buffer, expectId: string, binary = false): Promise<unknown> {
    const answer = new Promise<unknown>((resolve) => this.#pending.set(expectId, resolve));
    this.ws.send(frame, { binary });
    return answer;
  }

  waitPushes(id: unknown, count: number, timeoutMs = 5000): Promise<unknown[]> {
    const key = JSON.stringify(id);
    const have = this.pushes.get(key) ?? [];
    if (have.length >= count) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new RangeError(`timed out waiting for ${count} pushes on ${key}`)),
        timeoutMs,
      );
      this.#pushWaiters.push({
        id: key,
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.pushes.get(key) ?? []);
        },
      });
    });
  }

  close(): Promise<void> {
    this.ws.close();
    return this.closed.then(() => undefined);
  }
}

let nextId = 1;

/** Calls one method over any transport. */
export class RpcTestClient {
  readonly base: string;
  #ws: WsTestClient | undefined;

  constructor(base: string) {
    this.base = base;
  }

  async wsClient(): Promise<WsTestClient> {
    this.#ws ??= await WsTestClient.connect(`${this.base.replace(/^http/, "ws")}/websocket`);
    return this.#ws;
  }

  async call(transport: Transport, method: string, params: Record<string, Arg> = {}): Promise<Reply> {
    if (transport === "uri") {
      const q = Object.entries(params)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.uri)}`)
        .join("&");
      return rawHttp(this.base, { path: `/${method}${q === "" ? "" : `?${q}`}` });
    }
    const id = nextId++;
    const jsonParams = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v.json]));
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: jsonParams });
    if (transport === "http") {
      return rawHttp(this.base, { method: "POST", path: "/", body, headers: { "content-type": "application/json" } });
    }
    const ws = await this.wsClient();
    const msg = await ws.sendRaw(body, JSON.stringify(id));
    return { status: 0, headers: {}, text: JSON.stringify(msg), body: msg };
  }

  async close(): Promise<void> {
    await this.#ws?.close();
    this.#ws = undefined;
  }
}
