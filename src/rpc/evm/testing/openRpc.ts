import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Schema, SchemaValidator } from "./jsonSchema.js";
import { parseYaml } from "./yaml.js";

/**
 * Loads the execution-apis OpenRPC snapshot (test/spec/execution-apis/src): `schemas/*.yaml`
 * are the components, `eth|debug|txpool/*.yaml` list methods with their result schemas.
 * Test support only.
 */

export const EXECUTION_APIS_DIR = fileURLToPath(new URL("../../../../test/spec/execution-apis/src/", import.meta.url));

export interface OpenRpcMethod {
  readonly name: string;
  readonly params: readonly { name: string; required?: boolean; schema: Schema }[];
  readonly result: { name: string; schema: Schema } | undefined;
}

export interface OpenRpcSpec {
  readonly methods: ReadonlyMap<string, OpenRpcMethod>;
  readonly validator: SchemaValidator;
  /** Problems of `value` as the result of `method` (throws for an unknown method). */
  validateResult(method: string, value: unknown): string[];
}

function loadDir(dir: string): unknown[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => parseYaml(readFileSync(`${dir}/${f}`, "utf8")));
}

export function loadOpenRpc(dir = EXECUTION_APIS_DIR): OpenRpcSpec {
  const components: Record<string, Schema> = {};
  for (const doc of loadDir(`${dir}/schemas`)) Object.assign(components, doc as Record<string, Schema>);
  const methods = new Map<string, OpenRpcMethod>();
  for (const ns of ["eth", "debug", "txpool"]) {
    for (const doc of loadDir(`${dir}/${ns}`)) for (const m of doc as OpenRpcMethod[]) methods.set(m.name, m);
  }
  const validator = new SchemaValidator(components);
  return {
    methods,
    validator,
    validateResult(method, value) {
      const m = methods.get(method);
      if (m?.result === undefined) return [`no result schema for ${method}`];
      return validator.validate(m.result.schema, value);
    },
  };
}
