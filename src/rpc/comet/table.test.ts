import { describe, expect, test } from "vitest";
import { silentLogger } from "../../util/logger.js";
import { callMethod, InternalError, type JsonRpcRequest, parseJson, runPayload } from "../jsonrpc/index.js";
import type { CometCallContext, CometRuntime } from "./context.js";
import { p } from "./params.js";
import { parseRequestPayload } from "./request.js";
import type { CometServices } from "./services.js";
import { cometCalls, defineRoutes, isCacheable } from "./table.js";
import { httpCalls } from "./transports/http.js";

/** The node RPC's route table on the shared dispatch (rpc/jsonrpc/dispatch.ts). */
describe("dispatch", () => {
  const services = { n: 1 } as unknown as CometServices;
  const n = (s: CometServices) => (s as unknown as { n: number }).n;
  const runtime = { settings: {}, genesisChunks: [], log: silentLogger() } as unknown as CometRuntime;
  const routes = defineRoutes<CometServices, CometCallContext>()({
    add: { params: { a: p.int64, b: p.optional(p.int64) }, run: ({ a, b }, s) => String(a + (b ?? 0n) + BigInt(n(s))) },
    boom: { params: {}, run: () => Promise.reject(new RangeError("exploded")) },
    cached: { params: { h: p.optional(p.int64) }, cacheable: { whenSet: ["h"] }, run: () => "x" },
    wsOnly: { params: {}, wsOnly: true, run: () => "ws" },
  });
  const calls = cometCalls(routes, services, runtime, "http");
  const call = async (method: string, params?: string) => {
    const msg: JsonRpcRequest = {
      kind: "call",
      idJson: "1",
      id: 1n,
      method,
      params: params === undefined ? undefined : parseJson(params),
    };
    return callMethod(calls, msg, { remoteAddr: "", ws: undefined, uriArg: undefined });
  };

  test("default: results, errors and transports", async () => {
    expect((await call("add", '{"a":"2","b":"3"}')).text).toBe('{"jsonrpc":"2.0","id":1,"result":"6"}');
    expect((await call("boom")).text).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"exploded"}}',
    );
    expect((await call("wsOnly")).text).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
    );
    expect((await call("toString")).text).toContain("-32601");
    expect((await call("add", '{"a":1}')).text).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: invalid 64-bit integer encoding \\"1\\", expected string"}}',
    );
  });

  test("default: cacheability", async () => {
    expect((await call("cached", '{"h":"5"}')).cacheable).toBe(true);
    expect((await call("cached")).cacheable).toBe(false);
    const route = routes.cached;
    if (route === undefined) throw new RangeError("missing route");
    expect(isCacheable(route, { h: 0n })).toBe(true);
    const rules = {
      emptyBatch: undefined,
      batchTooLarge: undefined,
      batchLimit: 0,
      responseLimit: undefined,
      timedOut: () => new InternalError("unused"),
      unwrapSingle: false,
    };
    const outcome = await runPayload(
      parseRequestPayload('[{"id":1,"method":"cached","params":{"h":"1"}},{"method":"add"}]'),
      httpCalls(routes, services, runtime).runner,
      { remoteAddr: "", ws: undefined, uriArg: undefined },
      rules,
      undefined,
    );
    // One answer: the notification is not run.
    expect(JSON.parse(outcome.text ?? "[]")).toHaveLength(1);
    expect(outcome.cacheable).toBe(true);
  });
});
