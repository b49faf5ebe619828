import { describe, expect, test } from "vitest";
import { parseJson } from "../jsonrpc/index.js";
import { decodeArgs, method } from "./method.js";
import { ParamError, p } from "./params.js";

/** Param codecs: geth's decoding rules and error texts. */

const node = (json: string) => parseJson(json);

function fails(decode: (n: ReturnType<typeof node>) => unknown, json: string): string {
  try {
    decode(node(json));
  } catch (err) {
    if (err instanceof ParamError) return err.message;
    throw err;
  }
  throw new TypeError(`${json} decoded`);
}

describe("hex codecs", () => {
  test.each([
    ['"0x"', 0n],
    ['""', 0n],
    ['"0x0"', 0n],
    ['"0x400"', 1024n],
    ['"0XfF"', 255n],
    [`"0x${"f".repeat(64)}"`, (1n << 256n) - 1n],
  ] as const)("default: quantity %s", (json, want) => {
    if (json === '"0x"')
      expect(fails(p.quantity.decode, json)).toBe(
        'json: cannot unmarshal hex string "0x" into Go value of type *hexutil.Big',
      );
    else expect(p.quantity.decode(node(json))).toBe(want);
  });

  test.each([
    ['"0x0400"', "json: cannot unmarshal hex number with leading zero digits into Go value of type *hexutil.Big"],
    ['"400"', "json: cannot unmarshal hex string without 0x prefix into Go value of type *hexutil.Big"],
    ['"0xg"', "json: cannot unmarshal invalid hex string into Go value of type *hexutil.Big"],
    [`"0x1${"0".repeat(64)}"`, "json: cannot unmarshal hex number > 256 bits into Go value of type *hexutil.Big"],
    ["1024", "json: cannot unmarshal non-string into Go value of type *hexutil.Big"],
    ["null", "json: cannot unmarshal non-string into Go value of type *hexutil.Big"],
  ])("error: quantity %s", (json, text) => {
    expect(fails(p.quantity.decode, json)).toBe(text);
  });

  test("error: uint64 range and index", () => {
    expect(fails(p.uint64.decode, `"0x1${"0".repeat(16)}"`)).toBe(
      "json: cannot unmarshal hex number > 64 bits into Go value of type hexutil.Uint64",
    );
    expect(p.index.decode(node('"0x10"'))).toBe(16);
  });

  test("default: data is even-length hex; empty allowed", () => {
    expect(p.data.decode(node('"0x"'))).toEqual(new Uint8Array(0));
    expect(p.data.decode(node('"0x0042"'))).toEqual(Uint8Array.from([0, 0x42]));
    expect(fails(p.data.decode, '"0xf0f0f"')).toBe(
      "json: cannot unmarshal hex string of odd length into Go value of type hexutil.Bytes",
    );
    expect(fails(p.data.decode, '"004200"')).toBe(
      "json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Bytes",
    );
  });

  test("default: addresses and hashes need exact lengths, any case", () => {
    expect(p.address.decode(node(`"0x${"aB".repeat(20)}"`))).toHaveLength(20);
    expect(fails(p.address.decode, `"0x${"a".repeat(38)}"`)).toBe(
      "hex string has length 38, want 40 for common.Address",
    );
    expect(fails(p.hash.decode, `"0x${"a".repeat(63)}"`)).toBe(
      "json: cannot unmarshal hex string of odd length into Go value of type common.Hash",
    );
    expect(fails(p.hash.decode, '"\\u0030x00"')).toMatch(/without 0x prefix/);
  });
});

describe("block parameters", () => {
  test("default: tags, numbers, hashes and EIP-1898 objects", () => {
    expect(p.block.decode(node('"earliest"'))).toEqual({ kind: "number", number: 0 });
    expect(p.block.decode(node('"safe"'))).toEqual({ kind: "tag", tag: "safe" });
    expect(p.block.decode(node('"0x10"'))).toEqual({ kind: "number", number: 16 });
    expect(p.blockRef.decode(node('"finalized"'))).toEqual({ kind: "tag", tag: "finalized" });
    expect(p.blockRef.decode(node('{"blockNumber":"safe"}'))).toEqual({ kind: "tag", tag: "safe" });
    const hash = `0x${"ab".repeat(32)}`;
    expect(p.blockRef.decode(node(`"${hash}"`))).toMatchObject({ kind: "hash", requireCanonical: false });
    expect(p.blockRef.decode(node(`{"blockHash":"${hash}","requireCanonical":true}`))).toMatchObject({
      kind: "hash",
      requireCanonical: true,
    });
  });

  test("error: unknown tags and bad objects", () => {
    expect(fails(p.block.decode, '"pendingx"')).toBe(
      'unknown block "pendingx": use a 0x-prefixed hex number or one of the tags earliest, latest, pending, safe, finalized',
    );
    expect(fails(p.block.decode, '"0x01"')).toBe("hex number with leading zero digits");
    expect(fails(p.block.decode, "5")).toMatch(/^block must be a JSON string/);
    expect(fails(p.blockRef.decode, "{}")).toBe('block object needs "blockHash" or "blockNumber"');
    expect(fails(p.blockRef.decode, `{"blockHash":"0x12"}`)).toBe("hex string has length 2, want 64 for common.Hash");
  });
});

describe("structured arguments", () => {
  test("default: transaction args ignore unknown fields, match names case-insensitively", () => {
    const r = p.callRequest.decode(
      node('{"TO":"0x0000000000000000000000000000000000000001","gas":"0x5208","foo":1,"input":"0x01"}'),
    );
    expect(r.gas).toBe(21000n);
    expect(r.data).toEqual(Uint8Array.from([1]));
    expect(r.to).toHaveLength(20);
  });

  test("error: struct field errors name the field", () => {
    expect(fails(p.callRequest.decode, '{"value":"0x00"}')).toBe(
      "json: cannot unmarshal hex number with leading zero digits into Go struct field TransactionArgs.value of type *hexutil.Big",
    );
  });

  test("error: a field inside a nested struct names the innermost struct and the whole field path (Go's encoding/json)", () => {
    expect(fails(p.traceConfig.decode, '{"blockOverrides":{"number":"12"}}')).toBe(
      "json: cannot unmarshal hex string without 0x prefix into Go struct field BlockOverrides.BlockOverrides.Number of type *hexutil.Big",
    );
  });

  test("default: debug_traceCall's blockOverrides decode as eth_simulateV1's", () => {
    const cfg = p.traceConfig.decode(node('{"blockOverrides":{"number":"0x10","baseFeePerGas":"0x7","time":"0x5"}}'));
    expect(cfg.blockOverrides).toEqual({ number: 16n, baseFeePerGas: 7n, time: 5n });
  });

  test("default: filter topics (null wildcard, OR lists, null inside a list)", () => {
    const t = `0x${"11".repeat(32)}`;
    const f = p.filter.decode(node(`{"topics":[null,"${t}",["${t}","${t}"],["${t}",null]]}`));
    expect(f.topics.map((x) => (x === null ? null : x.length))).toEqual([null, 1, 2, null]);
  });

  test("default: state overrides by address", () => {
    const o = p.stateOverrides.decode(
      node(
        `{"0x00000000000000000000000000000000000000AA":{"balance":"0x1","stateDiff":{"0x${"00".repeat(32)}":"0x${"00".repeat(31)}01"}}}`,
      ),
    );
    expect(o.get(`0x${"00".repeat(19)}aa`)?.balance).toBe(1n);
  });

  test("default: trace config", () => {
    const c = p.traceConfig.decode(node('{"tracer":"callTracer","tracerConfig":{"onlyTopCall":true},"timeout":"1m"}'));
    expect(c).toMatchObject({ tracer: "callTracer", onlyTopCall: true, timeoutMs: 60_000 });
  });
});

describe("arity", () => {
  const m = method([p.address, p.optional(p.bool)], () => null);
  test("default: trailing optional arguments may be omitted or null", () => {
    expect(decodeArgs(m, node(`["0x${"00".repeat(20)}"]`))).toHaveLength(2);
    expect(decodeArgs(m, node(`["0x${"00".repeat(20)}", null]`))[1]).toBeUndefined();
    expect(
      decodeArgs(
        method([], () => null),
        undefined,
      ),
    ).toEqual([]);
  });
  test("error: too many, missing, non-array", () => {
    expect(() => decodeArgs(m, node("[1,2,3]"))).toThrow("too many arguments, want at most 2");
    expect(() => decodeArgs(m, node("[]"))).toThrow("missing value for required argument 0");
    expect(() => decodeArgs(m, node("{}"))).toThrow("non-array args");
    expect(() => decodeArgs(m, node('["0x1"]'))).toThrow(/^invalid argument 0: /);
  });
});
