import { ComethError } from "../../../util/errors.js";

/**
 * A JSON-Schema validator for the keywords the execution-apis schemas use: $ref (to
 * #/components/schemas/…), type, enum, const, pattern, minimum/maximum, required, properties,
 * additionalProperties, patternProperties, items, minItems/maxItems, oneOf, anyOf, allOf, not.
 * Returns the list of problems (empty = valid). Test support only.
 */

export type Schema = { readonly [keyword: string]: unknown };

export class SchemaError extends ComethError {}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case "null":
      return v === null;
    case "boolean":
      return typeof v === "boolean";
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "array":
      return Array.isArray(v);
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v);
    default:
      throw new SchemaError(`unknown type ${type}`);
  }
}

export class SchemaValidator {
  private readonly components: Readonly<Record<string, Schema>>;

  constructor(components: Readonly<Record<string, Schema>>) {
    this.components = components;
  }

  resolve(ref: string): Schema {
    const prefix = "#/components/schemas/";
    if (!ref.startsWith(prefix)) throw new SchemaError(`unsupported $ref ${ref}`);
    const s = this.components[ref.slice(prefix.length)];
    if (s === undefined) throw new SchemaError(`unknown schema ${ref}`);
    return s;
  }

  validate(schema: Schema, value: unknown, path = "$"): string[] {
    const errors: string[] = [];
    const s = schema;
    if (typeof s.$ref === "string") errors.push(...this.validate(this.resolve(s.$ref), value, path));
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
      if (!types.some((t) => typeMatches(t, value))) {
        errors.push(`${path}: expected ${types.join("|")}, got ${typeOf(value)}`);
        return errors;
      }
    }
    if (Array.isArray(s.enum) && !s.enum.some((e) => e === value)) {
      errors.push(`${path}: ${JSON.stringify(value)} not in enum ${JSON.stringify(s.enum)}`);
    }
    if (s.const !== undefined && s.const !== value) errors.push(`${path}: expected const ${JSON.stringify(s.const)}`);
    if (typeof value === "string" && typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) {
      errors.push(`${path}: ${JSON.stringify(value)} does not match ${s.pattern}`);
    }
    if (typeof value === "number") {
      if (typeof s.minimum === "number" && value < s.minimum) errors.push(`${path}: ${value} < minimum ${s.minimum}`);
      if (typeof s.maximum === "number" && value > s.maximum) errors.push(`${path}: ${value} > maximum ${s.maximum}`);
    }
    if (Array.isArray(value)) {
      if (typeof s.minItems === "number" && value.length < s.minItems)
        errors.push(`${path}: fewer than ${s.minItems} items`);
      if (typeof s.maxItems === "number" && value.length > s.maxItems)
        errors.push(`${path}: more than ${s.maxItems} items`);
      if (s.items !== undefined && typeof s.items === "object" && !Array.isArray(s.items)) {
        value.forEach((item, i) => {
          errors.push(...this.validate(s.items as Schema, item, `${path}[${i}]`));
        });
      }
    }
    if (typeMatches("object", value)) {
      const obj = value as Record<string, unknown>;
      for (const r of (s.required as string[] | undefined) ?? []) {
        if (!Object.hasOwn(obj, r)) errors.push(`${path}: missing required ${r}`);
      }
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      const patterns = Object.entries((s.patternProperties as Record<string, Schema> | undefined) ?? {});
      for (const [k, v] of Object.entries(obj)) {
        let known = false;
        const p = props[k];
        if (p !== undefined) {
          known = true;
          errors.push(...this.validate(p, v, `${path}.${k}`));
        }
        for (const [re, ps] of patterns) {
          if (new RegExp(re, "u").test(k)) {
            known = true;
            errors.push(...this.validate(ps, v, `${path}.${k}`));
          }
        }
        if (!known) {
          if (s.additionalProperties === false) errors.push(`${path}: unexpected property ${k}`);
          else if (typeof s.additionalProperties === "object" && s.additionalProperties !== null) {
            errors.push(...this.validate(s.additionalProperties as Schema, v, `${path}.${k}`));
          }
        }
      }
    }
    if (Array.isArray(s.allOf)) for (const sub of s.allOf as Schema[]) errors.push(...this.validate(sub, value, path));
    if (Array.isArray(s.anyOf)) {
      const results = (s.anyOf as Schema[]).map((sub) => this.validate(sub, value, path));
      if (!results.some((r) => r.length === 0)) {
        errors.push(`${path}: matches none of anyOf (${results.map((r) => r[0] ?? "").join(" / ")})`);
      }
    }
    if (Array.isArray(s.oneOf)) {
      const results = (s.oneOf as Schema[]).map((sub) => this.validate(sub, value, path));
      const ok = results.filter((r) => r.length === 0).length;
      if (ok !== 1) {
        errors.push(
          ok === 0
            ? `${path}: matches none of oneOf (${results.map((r) => r[0] ?? "").join(" / ")})`
            : `${path}: matches ${ok} branches of oneOf`,
        );
      }
    }
    if (s.not !== undefined && this.validate(s.not as Schema, value, path).length === 0) {
      errors.push(`${path}: must not match ${JSON.stringify(s.not)}`);
    }
    return errors;
  }
}
