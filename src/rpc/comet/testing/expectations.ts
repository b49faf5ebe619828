import { expect } from "vitest";
import type { Reply, Transport } from "./rpcTestClient.js";

/** Assertions shared by the node-RPC suites: what each transport answers for success and failure. */

// biome-ignore lint/suspicious/noExplicitAny: results are inspected freely in tests
export function resultOf(reply: Reply): any {
  expect(reply.body?.error, `unexpected error: ${reply.text}`).toBeUndefined();
  if (reply.status !== 0) expect(reply.status).toBe(200);
  expect(Object.keys(reply.body)).toEqual(["jsonrpc", "id", "result"]);
  return reply.body.result;
}

/** A handler failure: -32603 with the text as data (URI: HTTP 500, id -1; POST: HTTP 200). */
export function expectInternalError(reply: Reply, transport: Transport, data: string | RegExp): void {
  const error = reply.body?.error;
  expect(error, reply.text).toBeDefined();
  expect(error.code).toBe(-32603);
  expect(error.message).toBe("Internal error");
  if (typeof data === "string") expect(error.data).toBe(data);
  else expect(error.data).toMatch(data);
  if (transport === "uri") {
    expect(reply.status).toBe(500);
    expect(reply.body.id).toBe(-1);
  } else if (transport === "http") {
    expect(reply.status).toBe(200);
  }
}

/** Undecodable params: URI -32602 (500), POST -32602 (200), WebSocket -32603. */
export function expectParamsError(reply: Reply, transport: Transport, detail: string | RegExp): void {
  const error = reply.body?.error;
  expect(error, reply.text).toBeDefined();
  const prefix =
    transport === "uri" ? "error converting http params to arguments: " : "error converting json params to arguments: ";
  expect(typeof error.data).toBe("string");
  expect((error.data as string).startsWith(prefix), error.data).toBe(true);
  const rest = (error.data as string).slice(prefix.length);
  if (typeof detail === "string") expect(rest).toBe(detail);
  else expect(rest).toMatch(detail);
  if (transport === "ws") {
    expect(error.code).toBe(-32603);
    expect(error.message).toBe("Internal error");
  } else {
    expect(error.code).toBe(-32602);
    expect(error.message).toBe("Invalid params");
    expect(reply.status).toBe(transport === "uri" ? 500 : 200);
  }
}

/** Unknown method (or a WebSocket-only one over HTTP): -32601 without data; URI gives 404 text for unknown paths. */
export function expectMethodNotFound(reply: Reply, transport: Transport): void {
  if (transport === "uri") {
    expect(reply.status).toBe(404);
    return;
  }
  expect(reply.body.error).toEqual({ code: -32601, message: "Method not found" });
  if (transport === "http") expect(reply.status).toBe(200);
}
