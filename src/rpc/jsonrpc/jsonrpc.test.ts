import { describe, expect, test } from "vitest";
import { encodeResponse, encodeResponses, errorResponse, successResponse } from "./envelope.js";
import { InternalError, ParseError, ServerError } from "./errors.js";
import { compactGoJson, encodeGoString, encodeJson, JsonSyntaxError, parseJson, RawJson } from "./json.js";

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

  test("behavior: strings read as one slice up to an escape go on through the escapes", () => {
    const str = (text: string) => {
      const node = parseJson(text);
      return node.kind === "string" ? node.value : undefined;
    };
    expect(str('"0xabcdef"')).toBe("0xabcdef");
    expect(str('"0xab\\ncd\\u0041"')).toBe("0xab\ncdA");
    expect(str('"ab\\"c"')).toBe('ab"c');
    expect(str('""')).toBe("");
    expect(syntaxError('"0xabc')).toBe("unexpected end of JSON input");
    expect(syntaxError('"0xab\u0001"')).toBe("invalid character '\\x01' in string literal");
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
