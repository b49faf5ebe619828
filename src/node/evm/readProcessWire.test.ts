import { describe, expect, test } from "vitest";
import { TEST_SETUP } from "./readProcessSetup.fixture.js";
import {
  fromReadProcess,
  ObservationBatch,
  ReadProcessWireError,
  readProcessSetup,
  toReadProcess,
} from "./readProcessWire.js";

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReadProcessWireError);
    return (err as Error).message;
  }
  throw new Error("did not throw");
}

const SETUP = TEST_SETUP;

describe("read process wire", () => {
  test("messages from the main process survive JSON and are checked", () => {
    for (const m of [
      { t: "conn", c: 7 },
      { t: "height", h: 0 },
      { t: "height", h: 123456 },
      { t: "answer", r: 3, a: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{"é":1}' },
    ]) {
      expect(toReadProcess(JSON.parse(JSON.stringify(m)))).toEqual(m);
    }
    expect(errorOf(() => toReadProcess({ t: "height", h: -1 }))).toBe(
      'read process wire: field h must be a non-negative integer: {"t":"height","h":-1}',
    );
    expect(errorOf(() => toReadProcess({ t: "height", h: 1.5 }))).toContain("field h must be a non-negative integer");
    expect(errorOf(() => toReadProcess({ t: "answer", r: 1 }))).toContain("field a must be a string");
    expect(errorOf(() => toReadProcess({ t: "nope" }))).toBe('read process wire: unknown message: {"t":"nope"}');
    expect(errorOf(() => toReadProcess("conn"))).toBe('read process wire: not an object: "conn"');
    expect(errorOf(() => toReadProcess(null))).toBe("read process wire: not an object: null");
    expect(errorOf(() => toReadProcess([1]))).toBe("read process wire: not an object: [1]");
  });

  test("messages from a read process survive JSON and are checked", () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x02"]}';
    for (const m of [
      { t: "ready" },
      { t: "failed", error: "cannot open" },
      { t: "error", error: "stack" },
      { t: "forward", r: 1, b: body, s: 1_796_000_000_000 },
      { t: "forward", r: 1, b: body, s: 1_796_000_000_000, h: [["ab".repeat(32), "cd".repeat(20)]] },
      { t: "back", c: 2, p: Buffer.from("OPTIONS / HTTP/1.1\r\n\r\n").toString("base64") },
      { t: "back", c: 2, p: "", f: 1 },
      { t: "closed", c: 2 },
      { t: "observed", n: ["eth_call", "eth_call"], d: [0.25, 1.5], f: [0, 1] },
    ]) {
      expect(fromReadProcess(JSON.parse(JSON.stringify(m)))).toEqual(m);
    }
    expect(errorOf(() => fromReadProcess({ t: "forward", r: 1, b: 5, s: 1 }))).toContain("field b must be a string");
    // Sender hints: [64-hex tx key, 40-hex sender] pairs, lower case.
    for (const h of [
      {},
      [["ab".repeat(32)]],
      [["AB".repeat(32), "cd".repeat(20)]],
      [["ab".repeat(32), "cd".repeat(19)]],
    ]) {
      expect(errorOf(() => fromReadProcess({ t: "forward", r: 1, b: body, s: 1, h }))).toContain("field h");
    }
    expect(errorOf(() => fromReadProcess({ t: "back", c: 2, p: "", f: 2 }))).toContain("field f must be 1");
    expect(errorOf(() => fromReadProcess({ t: "back", c: "2", p: "" }))).toContain(
      "field c must be a non-negative integer",
    );
    expect(errorOf(() => fromReadProcess({ t: "observed", n: ["eth_call"], d: [], f: [] }))).toContain(
      "observed needs arrays n, d and f of one length",
    );
    expect(errorOf(() => fromReadProcess({ t: "observed", n: ["eth_call"], d: [1], f: [2] }))).toContain(
      "observed entry 0 must be a name, a duration and 0 or 1",
    );
    expect(errorOf(() => fromReadProcess({ t: "observed", n: [1], d: [1], f: [0] }))).toContain("observed entry 0");
    // A long message is cut in the error text.
    expect(errorOf(() => fromReadProcess({ t: "x".repeat(500) })).length).toBeLessThan(200);
  });

  test("setup: checked field by field", () => {
    expect(readProcessSetup(JSON.stringify(SETUP))).toEqual(SETUP);
    expect(errorOf(() => readProcessSetup(undefined))).toBe(
      "a read process is started with its setup (JSON) as argument",
    );
    expect(errorOf(() => readProcessSetup("{"))).toMatch(/^read process setup is not JSON: /);
    expect(errorOf(() => readProcessSetup(JSON.stringify({ ...SETUP, chainId: "0x1" })))).toContain(
      "chainId must be decimal",
    );
    expect(errorOf(() => readProcessSetup(JSON.stringify({ ...SETUP, noSync: "no" })))).toContain(
      "noSync and allowUnprotectedTxs must be booleans",
    );
    expect(
      errorOf(() => readProcessSetup(JSON.stringify({ ...SETUP, rpc: { ...SETUP.rpc, httpTimeoutMs: -1 } }))),
    ).toContain("field httpTimeoutMs must be a non-negative integer");
    expect(errorOf(() => readProcessSetup(JSON.stringify({ ...SETUP, rpc: { ...SETUP.rpc, api: [1] } })))).toContain(
      "rpc.api must be a list of names",
    );
    expect(errorOf(() => readProcessSetup(JSON.stringify({ ...SETUP, rpc: undefined })))).toContain(
      "setup needs an object with rpc",
    );
  });

  test("observations: batched, taken once, and taken back for a payload the main process answers", () => {
    const batch = new ObservationBatch();
    expect(batch.take()).toBeUndefined();
    batch.add("eth_call", 0.5, false);
    const mark = batch.mark();
    batch.add("eth_call", 0.7, true);
    batch.add("eth_getBalance", 0.1, false);
    batch.dropSince(mark);
    batch.add("eth_call", 0.9, true);
    expect(batch.size).toBe(2);
    const m = batch.take();
    expect(m).toEqual({ t: "observed", n: ["eth_call", "eth_call"], d: [0.5, 0.9], f: [0, 1] });
    expect(fromReadProcess(JSON.parse(JSON.stringify(m)))).toEqual(m);
    expect(batch.size).toBe(0);
    expect(batch.take()).toBeUndefined();
  });
});
