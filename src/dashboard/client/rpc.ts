/**
 * The dashboard talks to the node it is served by, and only to it: JSON-RPC POSTs to `/` and one
 * WebSocket on `/websocket` for the NewBlock, NewRoundStep and Vote events (CometBFT's node RPC).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

let nextId = 1;

/** One node RPC call; rejects with the server's error message. */
export async function call(method: string, params: JsonObject = {}): Promise<JsonObject> {
  const res = await fetch("/", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  const body = (await res.json()) as { result?: JsonObject; error?: { message?: string; data?: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.data ?? body.error.message ?? "error"}`);
  return body.result ?? {};
}

export interface EventMessage {
  /** "NewBlock", "NewRoundStep", "Vote". */
  readonly type: string;
  readonly value: JsonObject;
}

/**
 * A WebSocket that subscribes to `queries` and hands every event to `onEvent`; reconnects after a
 * second when the connection drops (the node restarted), calling `onOpen` each time it is back.
 */
export class EventStream {
  readonly #queries: readonly string[];
  readonly #onEvent: (e: EventMessage) => void;
  readonly #onState: (connected: boolean) => void;
  #ws: WebSocket | undefined;
  #closed = false;

  constructor(queries: readonly string[], onEvent: (e: EventMessage) => void, onState: (connected: boolean) => void) {
    this.#queries = queries;
    this.#onEvent = onEvent;
    this.#onState = onState;
    this.#connect();
  }

  #connect(): void {
    if (this.#closed) return;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/websocket`);
    this.#ws = ws;
    ws.onopen = () => {
      this.#queries.forEach((query, i) => {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: `sub-${i}`, method: "subscribe", params: { query } }));
      });
      this.#onState(true);
    };
    ws.onmessage = (m) => {
      let msg: { result?: { data?: { type?: string; value?: JsonObject } } };
      try {
        msg = JSON.parse(String(m.data)) as typeof msg;
      } catch {
        return;
      }
      const data = msg.result?.data;
      if (data?.type === undefined || data.value === undefined) return;
      this.#onEvent({ type: data.type.replace("tendermint/event/", ""), value: data.value });
    };
    ws.onclose = () => {
      this.#onState(false);
      if (!this.#closed) setTimeout(() => this.#connect(), 1000);
    };
  }

  close(): void {
    this.#closed = true;
    this.#ws?.close();
  }
}

/** A JSON string or number as a number (CometBFT writes int64 values as strings). */
export function num(v: Json | undefined): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v !== "") return Number(v);
  return 0;
}

export function str(v: Json | undefined): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

export function obj(v: Json | undefined): JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {};
}

export function arr(v: Json | undefined): Json[] {
  return Array.isArray(v) ? v : [];
}
