import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import { parse as parseYaml } from "yaml";

/**
 * Loads the execution-apis OpenRPC snapshot (test/spec/execution-apis/src): `schemas/*.yaml`
 * are the components, `eth|debug|txpool/*.yaml` list methods with their result schemas, which Ajv
 * validates against. Test support only.
 */

export const EXECUTION_APIS_DIR = fileURLToPath(new URL("../../../../test/spec/execution-apis/src/", import.meta.url));

export type Schema = { readonly [keyword: string]: unknown };

export interface OpenRpcMethod {
  readonly name: string;
  readonly params: readonly { name: string; required?: boolean; schema: Schema }[];
  readonly result: { name: string; schema: Schema } | undefined;
}

export interface OpenRpcSpec {
  readonly methods: ReadonlyMap<string, OpenRpcMethod>;
  /** Problems of `value` as the result of `method` (empty = valid; one entry when there is no schema). */
  validateResult(method: string, value: unknown): string[];
}

/** The id under which the components are registered: method schemas' `#/components/…` refs point into it. */
const COMPONENTS_ID = "execution-apis";

export function readYamlDir(dir: string): unknown[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => parseYaml(readFileSync(`${dir}/${f}`, "utf8")) as unknown);
}

/** `schema` with its `#/components/…` references pointing into the registered components. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] = k === "$ref" && typeof v === "string" && v.startsWith("#/") ? `${COMPONENTS_ID}${v}` : rebase(v);
  }
  return out;
}

export function loadOpenRpc(dir = EXECUTION_APIS_DIR): OpenRpcSpec {
  const components: Record<string, Schema> = {};
  for (const doc of readYamlDir(`${dir}/schemas`)) Object.assign(components, doc as Record<string, Schema>);
  const methods = new Map<string, OpenRpcMethod>();
  for (const ns of ["eth", "debug", "txpool"]) {
    for (const doc of readYamlDir(`${dir}/${ns}`)) for (const m of doc as OpenRpcMethod[]) methods.set(m.name, m);
  }
  // The spec's schemas carry OpenRPC's own keywords (title, examples as objects…): not strict.
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  ajv.addSchema({ $id: COMPONENTS_ID, components: { schemas: components } });
  const compiled = new Map<string, ValidateFunction>();
  return {
    methods,
    validateResult(method, value) {
      const m = methods.get(method);
      if (m?.result === undefined) return [`no result schema for ${method}`];
      let validate = compiled.get(method);
      if (validate === undefined) {
        validate = ajv.compile(rebase(m.result.schema) as Schema);
        compiled.set(method, validate);
      }
      if (validate(value)) return [];
      return (validate.errors ?? []).map((e) => {
        const passing = (e.params as { passingSchemas?: unknown }).passingSchemas;
        // Say how many branches matched when too many did (an empty list fits both FilterResults branches).
        if (e.keyword === "oneOf" && Array.isArray(passing)) {
          return `$${e.instancePath}: matches ${passing.length} branches of oneOf`;
        }
        return `$${e.instancePath}: ${e.message ?? e.keyword}`;
      });
    },
  };
}
