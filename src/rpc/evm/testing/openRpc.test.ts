import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { SchemaValidator } from "./jsonSchema.js";
import { EXECUTION_APIS_DIR, loadOpenRpc } from "./openRpc.js";
import { parseScalar, parseYaml } from "./yaml.js";

/** The test-support YAML reader and schema validator, checked against the spec's own examples. */

describe("yaml", () => {
  test("default: scalars, blocks and flow collections", () => {
    expect(
      parseYaml(
        "a: 1\nb: 'x''y'\nc: \"q\\n\"\nd:\n  - 1\n  -\n    - 2\ne: [x, 'y']\nf: {}\ng: |\n  l1\n  l2\nh: >-\n  w1\n  w2\ni: plain\n  more\nj: ~\n",
      ),
    ).toEqual({
      a: 1,
      b: "x'y",
      c: "q\n",
      d: [1, [2]],
      e: ["x", "y"],
      f: {},
      g: "l1\nl2\n",
      h: "w1 w2",
      i: "plain more",
      j: null,
    });
    expect(parseScalar("0.5")).toBe(0.5);
    expect(parseScalar("0x1")).toBe("0x1");
  });

  test("default: every execution-apis file parses", () => {
    for (const dir of readdirSync(EXECUTION_APIS_DIR)) {
      for (const file of readdirSync(`${EXECUTION_APIS_DIR}/${dir}`)) {
        expect(() => parseYaml(readFileSync(`${EXECUTION_APIS_DIR}/${dir}/${file}`, "utf8"))).not.toThrow();
      }
    }
  });
});

const KNOWN_BAD_EXAMPLES = [
  "debug_getBadBlocks",
  "eth_feeHistory",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByHash",
  "eth_newBlockFilter",
  "eth_newFilter",
  "eth_newPendingTransactionFilter",
  "eth_sendRawTransaction",
  "eth_sendTransaction",
  "txpool_content",
  "txpool_contentFrom",
];

describe("json schema", () => {
  const spec = loadOpenRpc();

  test("default: every spec example result validates against its method's schema", () => {
    let checked = 0;
    const problems: string[] = [];
    for (const m of spec.methods.values()) {
      const examples = (m as unknown as { examples?: { result?: { value?: unknown } }[] }).examples ?? [];
      for (const ex of examples) {
        if (ex.result === undefined || !("value" in ex.result) || m.result === undefined) continue;
        const errors = spec.validateResult(m.name, ex.result.value);
        if (errors.length > 0) problems.push(`${m.name}: ${errors.join("; ")}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    // The snapshot's own examples that break its schemas (odd-length hashes, leading zeros,
    // missing blockTimestamp/type, a misspelt key): the validator must catch exactly these.
    const failing = [...new Set(problems.map((p) => p.slice(0, p.indexOf(":"))))].sort();
    expect(failing).toEqual(KNOWN_BAD_EXAMPLES);
  });

  test("error: the validator rejects wrong shapes", () => {
    const v = new SchemaValidator({ q: { type: "string", pattern: "^0x(0|[1-9a-f][0-9a-f]*)$" } });
    expect(v.validate({ $ref: "#/components/schemas/q" }, "0x01")).toHaveLength(1);
    expect(v.validate({ type: "object", required: ["a"], additionalProperties: false }, { b: 1 })).toHaveLength(2);
    expect(v.validate({ oneOf: [{ type: "string" }, { type: "null" }] }, 5)).toHaveLength(1);
    expect(v.validate({ anyOf: [{ type: "integer" }] }, 1.5)).toHaveLength(1);
    expect(v.validate({ not: { type: "null" } }, null)).toHaveLength(1);
    expect(v.validate({ type: "array", items: { enum: ["a"] } }, ["a", "b"])).toHaveLength(1);
  });
});
