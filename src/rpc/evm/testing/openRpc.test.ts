import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { EXECUTION_APIS_DIR, loadOpenRpc } from "./openRpc.js";

/** The execution-apis snapshot read with `yaml` and its schemas applied with Ajv, checked against the spec's own examples. */

describe("yaml", () => {
  test("default: every execution-apis file parses", () => {
    for (const dir of readdirSync(EXECUTION_APIS_DIR)) {
      for (const file of readdirSync(`${EXECUTION_APIS_DIR}/${dir}`)) {
        expect(() => parseYaml(readFileSync(`${EXECUTION_APIS_DIR}/${dir}/${file}`, "utf8"))).not.toThrow();
      }
    }
  });

  test("default: every method file lists methods with names and params", () => {
    const spec = loadOpenRpc();
    expect(spec.methods.size).toBeGreaterThan(50);
    for (const m of spec.methods.values()) {
      expect(m.name).toMatch(/^[a-z]+_[A-Za-z0-9]+$/);
      expect(Array.isArray(m.params)).toBe(true);
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

  test("error: wrong results are rejected", () => {
    // Leading zeros, a wrong type, a missing required key, an unknown key, a value of neither oneOf branch.
    expect(spec.validateResult("eth_blockNumber", "0x01")).not.toEqual([]);
    expect(spec.validateResult("eth_blockNumber", 1)).not.toEqual([]);
    expect(spec.validateResult("eth_chainId", "0x40000")).toEqual([]);
    const block = {
      ...(spec.methods.get("eth_getBlockByNumber") as unknown as { examples: { result: { value: object } }[] })
        .examples[0]?.result.value,
    } as Record<string, unknown>;
    expect(spec.validateResult("eth_getBlockByNumber", block)).toEqual([]);
    const { hash: _, ...noHash } = block;
    expect(spec.validateResult("eth_getBlockByNumber", noHash).join()).toMatch(/hash/);
    expect(spec.validateResult("eth_getBlockByNumber", { ...block, number: "0x01" })).not.toEqual([]);
    expect(spec.validateResult("eth_syncing", "yes")).not.toEqual([]);
    expect(spec.validateResult("eth_syncing", false)).toEqual([]);
    expect(spec.validateResult("eth_getLogs", [{ removed: "no" }])).not.toEqual([]);
    expect(spec.validateResult("eth_nope", "0x1")).toEqual(["no result schema for eth_nope"]);
  });
});
