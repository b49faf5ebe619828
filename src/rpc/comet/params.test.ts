import { describe, expect, test } from "vitest";
import { parseJson } from "../jsonrpc/index.js";
import { decodeJsonParams, decodeUriParam, goBase64Decode, goHexDecode, ParamDecodeError, p } from "./params.js";
import { batchLimitError, parseRequestPayload, parseSingleRequest, RequestDecodeError } from "./request.js";

/** CometBFT's request decoding and param codecs (the node RPC's side of the shared core). */

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
