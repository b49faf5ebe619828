import { request as httpRequest } from "node:http";
import WebSocket from "ws";
import { ComethError } from "../../../util/errors.js";

/** HTTP and WebSocket helpers for talking to the EVM server in tests. Test support only. */

export interface HttpReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  readonly body: any;
}

export class TestClientError extends ComethError {}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One HTTP request without keep-alive. `body` objects are JSON-encoded. */
export function httpPost(
  url: string,
  body: unknown,
  opts: { method?: string; path?: string; headers?: Record<string, string> } = {},
): Promise<HttpReply> {
  const target = new URL(opts.path ?? "/", url);
  const payload =
    body === undefined ? undefined : typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      {
        method: opts.method ?? "POST",
        agent: false,
        headers: {
          "Content-Type": "application/json",
          Connection: "close",
          ...(payload === undefined ? {} : { "Content-Length": String(Buffer.byteLength(payload)) }),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parseMaybe(text) });
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

let nextId = 1;

/** A JSON-RPC call over HTTP; returns the whole response object. */
// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
export async function rpcCall(url: string, method: string, params: unknown[] = []): Promise<any> {
  const reply = await httpPost(url, { jsonrpc: "2.0", id: nextId++, method, params });
  if (reply.status !== 200) throw new TestClientError(`HTTP ${reply.status}: ${reply.text}`);
  return reply.body;
}

/** A WebSocket client matching answers by id and queueing notifications. */
export class WsClient {
  readonly ws: WebSocket;
  // biome-ignore lint/suspicious/noExplicitAny: messages are inspected freely in tests
  readonly messages: any[] = [];
  #waiters: (() => void)[] = [];
  #id = 1;
  closeCode: number | undefined;

  /** Wraps an open socket; WsClient.connect opens one. */
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => {
      const text = data.toString();
      this.messages.push(parseMaybe(text) ?? text);
      for (const w of this.#waiters.splice(0)) w();
    });
    ws.on("close", (code) => {
      this.closeCode = code;
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once("open", () => resolve(new WsClient(ws)));
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new TestClientError(`upgrade refused: ${res.statusCode}`)));
    });
  }

  send(payload: unknown): void {
    this.ws.send(typeof payload === "string" || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload));
  }

  /** Waits for the first message satisfying `pred` (removing it from the queue). */
  // biome-ignore lint/suspicious/noExplicitAny: messages are inspected freely in tests
  async next(pred: (m: any) => boolean = () => true, timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) return this.messages.splice(i, 1)[0];
      if (this.closeCode !== undefined) throw new TestClientError(`socket closed (${this.closeCode})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new TestClientError("timed out waiting for a WebSocket message");
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  async call(method: string, params: unknown[] = []): Promise<any> {
    const id = this.#id++;
    this.send({ jsonrpc: "2.0", id, method, params });
    return this.next((m) => m !== null && typeof m === "object" && m.id === id);
  }

  /** Next eth_subscription notification for `subscription`. */
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  notification(subscription: string, timeoutMs = 5000): Promise<any> {
    return this.next((m) => m?.method === "eth_subscription" && m.params?.subscription === subscription, timeoutMs);
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once("close", () => resolve());
      this.ws.close();
    });
  }
}
