import { describe, expect, test } from "vitest";
import { batchLimitError, runBatch } from "./batch.js";
import { defineRoutes, dispatchRequest, isCacheable } from "./dispatch.js";
import { encodeResponse, encodeResponses, errorResponse, successResponse } from "./envelope.js";
import { InternalError, InvalidParamsError, ParseError, ServerError } from "./errors.js";
import { compactGoJson, encodeGoString, encodeJson, JsonSyntaxError, parseJson, RawJson } from "./json.js";
import { decodeJsonParams, decodeUriParam, goBase64Decode, goHexDecode, ParamDecodeError, p } from "./params.js";
import { parseRequestPayload, parseSingleRequest, RequestDecodeError } from "./request.js";

const syntaxError = (text: string) => {
  try {
    parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err.message;
    throw err;
  }
  return "no error";
};

describe("Go-compatible JSON reading", () => {
  const vectors: [string, string][] = [
    ["", "unexpected end of JSON input"],
    ["x", "invalid character 'x' looking for beginning of value"],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ["[1,]", "invalid character ']' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
    ["[1 2]", "invalid character '2' after array element"],
    ["tru", "unexpected end of JSON input"],
    ["trux", "invalid character 'x' in literal true (expecting 'e')"],
    ["nul", "unexpected end of JSON input"],
    ["01", "invalid character '1' after top-level value"],
    ["-", "unexpected end of JSON input"],
    ["-a", "invalid character 'a' in numeric literal"],
    ["1.e", "invalid character 'e' after decimal point in numeric literal"],
    ["1e+x", "invalid character 'x' in exponent of numeric literal"],
    ['"\\q"', "invalid character 'q' in string escape code"],
    ['"\\u12G4"', "invalid character 'G' in \\u hexadecimal character escape"],
    ['"a\tb"', "invalid character '\\t' in string literal"],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ['{"a":1}}', "invalid character '}' after top-level value"],
  ];
  for (const [input, message] of vectors) {
    test(`error: ${JSON.stringify(input)}`, () => {
      expect(syntaxError(input)).toBe(message);
    });
  }

  test("default: raw text of values is kept", () => {
    const node = parseJson(' {"a": [1, "x\\u0041"], "b": 12345678901234567890 } ');
    expect(node.kind).toBe("object");
    if (node.kind !== "object") return;
    expect(node.entries[0]?.[1].raw).toBe('[1, "x\\u0041"]');
    expect(node.entries[1]?.[1]).toEqual({ kind: "number", raw: "12345678901234567890" });
  });

  test("args: decoder mode reads the first value only", () => {
    expect(parseJson('{"a":1} trailing', { firstValueOnly: true }).kind).toBe("object");
    expect(() => parseJson("", { firstValueOnly: true })).toThrow("EOF");
    expect(() => parseJson('{"a":', { firstValueOnly: true })).toThrow("unexpected EOF");
  });
});

describe("Go-compatible JSON writing", () => {
  test("default: HTML-safe escaping and Go escapes", () => {
    expect(encodeGoString("<a&b>\u2028\u2029")).toBe('"\\u003ca\\u0026b\\u003e\\u2028\\u2029"');
    expect(encodeGoString('q"\\\n\r\t\b\f\u0001\u001f')).toBe('"q\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f"');
    expect(encodeGoString("héllo 😀")).toBe('"héllo 😀"');
    expect(encodeGoString("bad\ud800x")).toBe('"bad\ufffdx"');
  });

  test("default: objects keep insertion order and drop undefined members", () => {
    expect(encodeJson({ b: 1, a: [true, null, "x"], c: undefined, d: 12345678901234567890n })).toBe(
      '{"b":1,"a":[true,null,"x"],"d":12345678901234567890}',
    );
    expect(
      encodeJson(
        new Map([
          ["2", 1],
          ["1", 2],
        ]),
      ),
    ).toBe('{"2":1,"1":2}');
  });

  test("default: raw JSON is compacted and escaped", () => {
    expect(encodeJson({ s: new RawJson('{ "a" : "<x>",\n "2": 1, "1": 2 }') })).toBe(
      '{"s":{"a":"\\u003cx\\u003e","2":1,"1":2}}',
    );
    expect(compactGoJson('[ "a b", "c\\" d" ]')).toBe('["a b","c\\" d"]');
  });
});

describe("envelope", () => {
  test("default: key order and omitted parts", () => {
    expect(encodeResponse(successResponse(5n, { a: 1 }))).toBe('{"jsonrpc":"2.0","id":5,"result":{"a":1}}');
    expect(encodeResponse(successResponse("x", null))).toBe('{"jsonrpc":"2.0","id":"x","result":null}');
    expect(
      encodeResponse(errorResponse(undefined, new ParseError("bad", { message: "Parse error. Invalid JSON" }))),
    ).toBe('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"bad"}}');
    expect(encodeResponse(errorResponse(-1n, new InternalError("")))).toBe(
      '{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error"}}',
    );
    expect(encodeResponse(errorResponse("s", new ServerError("gone")))).toBe(
      '{"jsonrpc":"2.0","id":"s","error":{"code":-32000,"message":"Server error","data":"gone"}}',
    );
  });

  test("default: a single answer is unwrapped, several form an array", () => {
    const one = successResponse(1n, {});
    expect(encodeResponses([one], { unwrapSingle: true })).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(encodeResponses([one], { unwrapSingle: false })).toBe('[{"jsonrpc":"2.0","id":1,"result":{}}]');
    expect(encodeResponses([one, one], { unwrapSingle: true })).toBe(
      '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]',
    );
  });
});

describe("request decoding", () => {
  test("default: ids", () => {
    expect(parseSingleRequest('{"id":"7","method":"m"}').id).toBe("7");
    expect(parseSingleRequest('{"id":7.99,"method":"m"}').id).toBe(7n);
    expect(parseSingleRequest('{"id":1e30,"method":"m"}').id).toBe(-(1n << 63n));
    expect(parseSingleRequest('{"id":null,"method":"m"}').id).toBeUndefined();
    expect(parseSingleRequest('{"method":"m"}').id).toBeUndefined();
  });

  test("error: bad ids and field types", () => {
    expect(() => parseSingleRequest('{"id":false}')).toThrow("json-rpc ID (false) is of unknown type (bool)");
    expect(() => parseSingleRequest('{"id":{"b":1,"a":"x"}}')).toThrow(
      "json-rpc ID (map[a:x b:1]) is of unknown type (map[string]interface {})",
    );
    expect(() => parseSingleRequest('{"id":[1,2]}')).toThrow("json-rpc ID ([1 2]) is of unknown type ([]interface {})");
    expect(() => parseSingleRequest('{"id":1,"method":[]}')).toThrow(
      "json: cannot unmarshal array into Go struct field .method of type string",
    );
    expect(() => parseSingleRequest("5")).toThrow(RequestDecodeError);
  });

  test("default: batches and null", () => {
    expect(parseRequestPayload("null")).toEqual({ batch: true, requests: [] });
    const batch = parseRequestPayload('[{"id":1,"method":"a"},null]');
    expect(batch.batch).toBe(true);
    expect(batch.requests.map((r) => r.id)).toEqual([1n, undefined]);
    expect(parseRequestPayload('{"id":1,"method":"a"}').batch).toBe(false);
    expect(() => parseRequestPayload('[{"id":true}]')).toThrow(/cannot unmarshal array into Go value of type struct/);
  });

  test("default: batch limit", () => {
    const payload = parseRequestPayload(JSON.stringify(Array.from({ length: 3 }, (_, i) => ({ id: i, method: "x" }))));
    expect(batchLimitError(payload, 2)?.data).toBe("batch request exceeds maximum (2) allowed number of requests");
    expect(batchLimitError(payload, 3)).toBeUndefined();
    expect(batchLimitError(payload, 0)).toBeUndefined();
  });
});

const decodeErr = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ParamDecodeError) return err.message;
    throw err;
  }
  return "no error";
};

describe("param codecs (cmtjson)", () => {
  const j = (text: string) => parseJson(text);

  test("default: int64 as JSON strings", () => {
    expect(p.int64.decode(j('"42"'))).toBe(42n);
    expect(p.int64.decode(j('"-9223372036854775808"'))).toBe(-(1n << 63n));
    expect(p.int64.decode(j('"null"'))).toBe(0n);
    expect(p.optional(p.int64).decode(j("null"))).toBeUndefined();
  });

  test("error: int64 encodings", () => {
    expect(decodeErr(() => p.int64.decode(j("5")))).toBe('invalid 64-bit integer encoding "5", expected string');
    expect(decodeErr(() => p.int64.decode(j("true")))).toBe('invalid 64-bit integer encoding "true", expected string');
    expect(decodeErr(() => p.int64.decode(j('"abc"')))).toBe("invalid character 'a' looking for beginning of value");
    expect(decodeErr(() => p.int64.decode(j('"1.5"')))).toBe(
      "json: cannot unmarshal number 1.5 into Go value of type int64",
    );
    expect(decodeErr(() => p.int64.decode(j('"9223372036854775808"')))).toBe(
      "json: cannot unmarshal number 9223372036854775808 into Go value of type int64",
    );
    expect(decodeErr(() => p.int64.decode(j('""')))).toBe("unexpected end of JSON input");
    expect(decodeErr(() => p.uint.decode(j('"-1"')))).toBe(
      "json: cannot unmarshal number -1 into Go value of type uint",
    );
  });

  test("default and error: bytes (base64) with Go's offsets", () => {
    expect(Buffer.from(p.bytes.decode(j('"YWJjZA=="')))).toEqual(Buffer.from("abcd"));
    const b64 = (s: string) => decodeErr(() => goBase64Decode(new Uint8Array(Buffer.from(s))));
    expect(b64("abc")).toBe("illegal base64 data at input byte 0");
    expect(b64("a===")).toBe("illegal base64 data at input byte 1");
    expect(b64("!!!!")).toBe("illegal base64 data at input byte 0");
    expect(b64("YWJj ZA==")).toBe("illegal base64 data at input byte 4");
    expect(b64("YQ==YQ==")).toBe("illegal base64 data at input byte 4");
    expect(b64("YQ=")).toBe("illegal base64 data at input byte 3");
    expect(Buffer.from(goBase64Decode(new Uint8Array(Buffer.from("YQ==\n")))).toString()).toBe("a");
    expect(decodeErr(() => p.bytes.decode(j("12")))).toBe(
      "json: cannot unmarshal number into Go value of type []uint8",
    );
  });

  test("default and error: HexBytes and hex", () => {
    expect(Buffer.from(p.hexBytes.decode(j('"ABcd"'))).toString("hex")).toBe("abcd");
    expect(decodeErr(() => p.hexBytes.decode(j("12")))).toBe("invalid hex string: 12");
    expect(decodeErr(() => goHexDecode("abc"))).toBe("encoding/hex: odd length hex string");
    expect(decodeErr(() => goHexDecode("abz"))).toBe("encoding/hex: invalid byte: U+007A 'z'");
    expect(decodeErr(() => goHexDecode("0x"))).toBe("encoding/hex: invalid byte: U+0078 'x'");
  });

  test("default and error: bool, string, string lists", () => {
    expect(p.bool.decode(j("true"))).toBe(true);
    expect(decodeErr(() => p.bool.decode(j('"true"')))).toBe(
      "json: cannot unmarshal string into Go value of type bool",
    );
    expect(decodeErr(() => p.string.decode(j("1")))).toBe("json: cannot unmarshal number into Go value of type string");
    expect(p.stringList.decode(j('["a",null]'))).toEqual(["a", ""]);
    expect(decodeErr(() => p.stringList.decode(j('"a"')))).toBe(
      "json: cannot unmarshal string into Go value of type []json.RawMessage",
    );
  });

  test("default: URI forms", () => {
    expect(decodeUriParam(p.optional(p.int64), "12")).toBe(12n);
    expect(decodeUriParam(p.optional(p.int64), '"12"')).toBe(12n);
    expect(Buffer.from(decodeUriParam(p.bytes, "0x6869")).toString()).toBe("hi");
    expect(Buffer.from(decodeUriParam(p.bytes, '"hi"')).toString()).toBe("hi");
    expect(Buffer.from(decodeUriParam(p.hexBytes, '"hi"')).toString()).toBe("hi");
    expect(decodeUriParam(p.string, "0x6869")).toBe("hi");
    expect(decodeUriParam(p.string, "\"tm.event='Tx'\"")).toBe("tm.event='Tx'");
    expect(decodeUriParam(p.bool, "true")).toBe(true);
    expect(decodeUriParam(p.stringList, '["a","b"]')).toEqual(["a", "b"]);
    expect(decodeErr(() => decodeUriParam(p.int64, "0x10"))).toBe("got a hex string arg, but expected 'int64'");
    expect(decodeErr(() => decodeUriParam(p.bool, "0x01"))).toBe("got a hex string arg, but expected 'bool'");
    expect(decodeErr(() => decodeUriParam(p.string, "abc"))).toBe(
      "invalid character 'a' looking for beginning of value",
    );
    expect(decodeErr(() => decodeUriParam(p.bytes, '"'))).toBe("unexpected end of JSON input");
  });

  test("default and error: params objects and arrays", () => {
    const shape = { minHeight: p.int64, maxHeight: p.int64 };
    expect(decodeJsonParams(shape, undefined)).toEqual({ minHeight: 0n, maxHeight: 0n });
    expect(decodeJsonParams(shape, j('{"maxHeight":"3","other":1}'))).toEqual({ minHeight: 0n, maxHeight: 3n });
    expect(decodeJsonParams(shape, j('["1","2"]'))).toEqual({ minHeight: 1n, maxHeight: 2n });
    expect(decodeErr(() => decodeJsonParams(shape, j('["1"]')))).toBe(
      "expected 2 parameters ([minHeight maxHeight]), got 1 ([[34 49 34]])",
    );
    expect(decodeErr(() => decodeJsonParams({}, j("[1]")))).toBe("expected 0 parameters ([]), got 1 ([[49]])");
  });
});

describe("dispatch", () => {
  const routes = defineRoutes<{ n: number }, { tag: string }>()({
    add: { params: { a: p.int64, b: p.optional(p.int64) }, run: ({ a, b }, s) => String(a + (b ?? 0n) + BigInt(s.n)) },
    boom: { params: {}, run: () => Promise.reject(new RangeError("exploded")) },
    cached: { params: { h: p.optional(p.int64) }, cacheable: { whenSet: ["h"] }, run: () => "x" },
    wsOnly: { params: {}, transport: "ws", run: () => "ws" },
  });
  const opts = {
    transport: "http" as const,
    paramsError: (d: string) => new InvalidParamsError(d),
    mapError: (e: unknown) => new InternalError(String((e as Error).message)),
  };
  const call = (method: string, params?: string) =>
    dispatchRequest(
      routes,
      { id: 1n, method, params: params === undefined ? undefined : parseJson(params) },
      { n: 1 },
      { tag: "t" },
      opts,
    );

  test("default: results, errors and transports", async () => {
    expect((await call("add", '{"a":"2","b":"3"}')).response).toEqual({ id: 1n, result: "6" });
    expect(encodeResponse((await call("boom")).response)).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"exploded"}}',
    );
    expect(encodeResponse((await call("wsOnly")).response)).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
    );
    expect(encodeResponse((await call("toString")).response)).toContain("-32601");
    expect(encodeResponse((await call("add", '{"a":1}')).response)).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: invalid 64-bit integer encoding \\"1\\", expected string"}}',
    );
  });

  test("default: cacheability", async () => {
    expect((await call("cached", '{"h":"5"}')).cacheable).toBe(true);
    expect((await call("cached")).cacheable).toBe(false);
    const route = routes.cached;
    if (route === undefined) throw new RangeError("missing route");
    expect(isCacheable(route, { h: 0n })).toBe(true);
    const outcome = await runBatch(
      parseRequestPayload('[{"id":1,"method":"cached","params":{"h":"1"}},{"method":"add"}]'),
      (r) => dispatchRequest(routes, r, { n: 1 }, { tag: "t" }, opts),
    );
    expect(outcome.responses).toHaveLength(1);
    expect(outcome.cacheable).toBe(true);
  });
});

describe("Go-compatible JSON writing, fast path", () => {
  test("behavior: strings with and without escapes agree with the character-by-character writer", () => {
    const samples = [
      "",
      "plain",
      "0xABCDEF",
      "with space",
      "tab\there",
      'quote"',
      "back\\slash",
      "<>&",
      "\u2028",
      "😀",
      "\ud800",
      "é",
    ];
    for (const a of samples) {
      for (const b of samples) {
        const s = `${a}${b}`;
        // JSON.stringify and Go agree except for HTML escapes, U+2028/9 and lone surrogates.
        const expected = JSON.stringify(s)
          .replaceAll("<", "\\u003c")
          .replaceAll(">", "\\u003e")
          .replaceAll("&", "\\u0026")
          .replaceAll("\u2028", "\\u2028")
          .replaceAll("\u2029", "\\u2029")
          .replace(/\\ud800/g, "\ufffd")
          .replace(/\\b/g, "\\b");
        expect(encodeGoString(s)).toBe(expected);
      }
    }
  });
  test("behavior: EncodedJson is spliced unchanged", async () => {
    const { EncodedJson } = await import("./json.js");
    const inner = encodeJson({ a: "<x>", b: [1, 2] });
    expect(encodeJson({ r: new EncodedJson(inner) })).toBe(`{"r":${inner}}`);
  });
});

describe("DeadlineSweeper", () => {
  test("behavior: expires what passed its deadline, not what was unwatched or is still in time", async () => {
    const { DeadlineSweeper } = await import("./deadlineSweeper.js");
    const sweeper = new DeadlineSweeper<string>(5);
    const expired: string[] = [];
    const now = Date.now();
    sweeper.watch("late", now + 10, () => expired.push("late"));
    sweeper.watch("cancelled", now + 10, () => expired.push("cancelled"));
    sweeper.watch("far", now + 60_000, () => expired.push("far"));
    sweeper.unwatch("cancelled");
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (expired.length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
    expect(expired).toEqual(["late"]);
    sweeper.unwatch("far");
  });
});
