import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, test } from "vitest";

/**
 * ARCHITECTURE.md: a folder of src/ is entered through its index.ts. This test reads every import
 * and re-export in src/ (static and dynamic, `import type` included) and fails on one that reaches
 * a file of another folder other than that folder's index.ts, unless an entry of EXCEPTIONS covers
 * it. It also fails on an entry that no longer matches any import, so the list only shrinks: when an
 * import is moved to index.ts, delete the entry it used.
 *
 * Folders are those with a row in ARCHITECTURE.md: each top-level folder of src/ and the nested ones
 * in NESTED (src/rpc has no index.ts; each of its three folders has one). Files under test/, bench/
 * and bin/ are not checked.
 */

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Nested folders with a row (and an index.ts) of their own, deepest first. */
const NESTED = ["app/evm", "app/kvstore", "app/socket", "p2p/conn", "rpc/jsonrpc", "rpc/comet", "rpc/evm"] as const;

interface Exception {
  /** The importing folder, or "*" for any. */
  readonly from: string;
  /** A file under src/ (`p2p/reactor.ts`) or a folder prefix ending in "/" (`util/`). */
  readonly to: string;
  /** Covers only `import type` / `export type` (erased at build: no runtime coupling). */
  readonly typeOnly?: true;
  /** Covers only imports from tests (`*.test.ts`) and test support (`testing/`, `testing.ts`). */
  readonly testsOnly?: true;
  readonly why: string;
}

const CYCLE_APP =
  "app/index.ts re-exports app/evm, app/kvstore and app/socket: importing it from them would be a cycle";
const CYCLE_P2P =
  "p2p/index.ts re-exports conn/: importing it from conn/ (or conn/index.ts from a file conn/ imports) would be a cycle";
const TYPES_BY_FILE =
  "historical: type-only imports of the defining file (erased at build); the folder's index.ts exports the same names. Switch the import when the file is next edited and delete the entry";

/** Imports that do not go through index.ts today, each with why. */
const EXCEPTIONS: readonly Exception[] = [
  {
    from: "*",
    to: "util/",
    why: "util/ has no index.ts: bytes, time, clock, logger and shuffle are leaf modules with no project imports, imported file by file",
  },
  { from: "app/evm", to: "app/application.ts", typeOnly: true, why: CYCLE_APP },
  { from: "app/kvstore", to: "app/application.ts", typeOnly: true, why: CYCLE_APP },
  { from: "app/socket", to: "app/application.ts", typeOnly: true, why: CYCLE_APP },
  { from: "app/evm", to: "app/snapshots/index.ts", why: `the snapshot format both built-in apps share; ${CYCLE_APP}` },
  {
    from: "app/kvstore",
    to: "app/snapshots/index.ts",
    why: `the snapshot format both built-in apps share; ${CYCLE_APP}`,
  },
  { from: "p2p/conn", to: "p2p/reactor.ts", typeOnly: true, why: CYCLE_P2P },
  { from: "p2p/conn", to: "p2p/nodeInfo.ts", why: `the handshake exchanges NodeInfo; ${CYCLE_P2P}` },
  {
    from: "p2p",
    to: "p2p/conn/errors.ts",
    why: `nodeInfo.ts (which conn/ imports) throws conn's ConnectionError; ${CYCLE_P2P}`,
  },
  { from: "app", to: "types/abci.ts", typeOnly: true, why: TYPES_BY_FILE },
  { from: "consensus", to: "types/", typeOnly: true, why: TYPES_BY_FILE },
  { from: "privval", to: "types/keys.ts", typeOnly: true, why: TYPES_BY_FILE },
  { from: "rpc/comet", to: "types/", typeOnly: true, why: TYPES_BY_FILE },
  { from: "blocksync", to: "p2p/reactor.ts", typeOnly: true, why: TYPES_BY_FILE },
  { from: "evidence", to: "p2p/reactor.ts", typeOnly: true, why: TYPES_BY_FILE },
  { from: "reactors", to: "p2p/reactor.ts", typeOnly: true, why: TYPES_BY_FILE },
];

interface CrossImport {
  /** `src/…/file.ts:line`. */
  readonly at: string;
  readonly fromFolder: string;
  /** The imported file, relative to src/. */
  readonly target: string;
  readonly toFolder: string;
  readonly typeOnly: boolean;
  readonly fromTest: boolean;
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) tsFiles(path, out);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function toPosix(p: string): string {
  return p.split(sep).join("/");
}

/** The folder (a row of ARCHITECTURE.md) a path under src/ belongs to. */
function folderOf(relPath: string): string {
  for (const nested of NESTED) if (relPath.startsWith(`${nested}/`)) return nested;
  const slash = relPath.indexOf("/");
  return slash < 0 ? "" : relPath.slice(0, slash);
}

function isTestSupport(relPath: string): boolean {
  return relPath.endsWith(".test.ts") || relPath.includes("/testing/") || relPath.endsWith("/testing.ts");
}

/** Every relative import of one file that lands in another folder of src/. */
function crossImports(file: string): CrossImport[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const from = toPosix(relative(SRC, file));
  const fromFolder = folderOf(from);
  const out: CrossImport[] = [];
  const add = (specifier: string, node: ts.Node, typeOnly: boolean) => {
    if (!specifier.startsWith(".")) return;
    const target = toPosix(relative(SRC, resolve(dirname(file), specifier.replace(/\.js$/, ".ts"))));
    if (target.startsWith("..")) return;
    const toFolder = folderOf(target);
    if (toFolder === fromFolder) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    out.push({ at: `src/${from}:${line}`, fromFolder, target, toFolder, typeOnly, fromTest: isTestSupport(from) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, node, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function covers(e: Exception, imp: CrossImport): boolean {
  if (e.from !== "*" && e.from !== imp.fromFolder) return false;
  if (e.to.endsWith("/") ? !imp.target.startsWith(e.to) : imp.target !== e.to) return false;
  if (e.typeOnly === true && !imp.typeOnly) return false;
  if (e.testsOnly === true && !imp.fromTest) return false;
  return true;
}

/** A folder's test support (`testing/`, `testing.ts`) may be imported by any folder's tests and test support. */
function isTestSupportImport(imp: CrossImport): boolean {
  return imp.fromTest && (imp.target.includes("/testing/") || imp.target.endsWith("/testing.ts"));
}

describe("architecture: folders are entered through index.ts (ARCHITECTURE.md)", () => {
  const imports = tsFiles(SRC).flatMap(crossImports);
  const bypasses = imports.filter((imp) => imp.target !== `${imp.toFolder}/index.ts`);

  test("default: every cross-folder import goes through index.ts or is a listed exception", () => {
    const unexplained = bypasses
      .filter((imp) => !isTestSupportImport(imp) && !EXCEPTIONS.some((e) => covers(e, imp)))
      .map(
        (imp) =>
          `${imp.at} imports src/${imp.target}${imp.typeOnly ? " (type-only)" : ""}: import src/${imp.toFolder}/index.ts instead (export the name there if needed)`,
      );
    expect(unexplained).toEqual([]);
  });

  test("default: every exception is still used (delete the ones that are not)", () => {
    const unused = EXCEPTIONS.filter((e) => !bypasses.some((imp) => covers(e, imp))).map(
      (e) => `${e.from} -> ${e.to}${e.typeOnly === true ? " (type-only)" : ""}`,
    );
    expect(unused).toEqual([]);
  });

  test("error: production code never imports another folder's test support", () => {
    const wrong = imports
      .filter((imp) => !imp.fromTest && (imp.target.includes("/testing/") || imp.target.endsWith("/testing.ts")))
      .map((imp) => `${imp.at} imports src/${imp.target}`);
    expect(wrong).toEqual([]);
  });
});

/**
 * One style for private class members: ES private names (`#name`), not TypeScript's `private`
 * modifier. A `private constructor` stays allowed: ES has no private constructors, and the modifier
 * keeps `new` for the class's own factory. Entries of PRIVATE_MODIFIER_EXCEPTIONS are files or
 * folder prefixes (ending in "/") under src/ not converted yet; each must still match a use.
 */
const PRIVATE_MODIFIER_EXCEPTIONS: readonly { readonly path: string; readonly why: string }[] = [];

interface PrivateUse {
  /** `src/…/file.ts:line name`. */
  readonly at: string;
  /** The file, relative to src/. */
  readonly file: string;
}

/** Every `private` modifier of one file, constructors excepted. */
function privateModifiers(file: string): PrivateUse[] {
  const text = readFileSync(file, "utf8");
  if (!text.includes("private")) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const rel = toPosix(relative(SRC, file));
  const out: PrivateUse[] = [];
  const visit = (node: ts.Node): void => {
    if (
      !ts.isConstructorDeclaration(node) &&
      ts.canHaveModifiers(node) &&
      ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword) === true
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const name = (node as { name?: ts.Node }).name?.getText(source) ?? "?";
      out.push({ at: `src/${rel}:${line} ${name}`, file: rel });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function exempt(path: string, file: string): boolean {
  return path.endsWith("/") ? file.startsWith(path) : file === path;
}

describe("architecture: private class members are ES private names (#name)", () => {
  const uses = tsFiles(SRC).flatMap(privateModifiers);

  test("default: no `private` modifier in src/ except on constructors", () => {
    const wrong = uses
      .filter((u) => !PRIVATE_MODIFIER_EXCEPTIONS.some((e) => exempt(e.path, u.file)))
      .map((u) => `${u.at}: use a #name instead of the private modifier`);
    expect(wrong).toEqual([]);
  });

  test("default: every private-modifier exception is still used (delete the ones that are not)", () => {
    const unused = PRIVATE_MODIFIER_EXCEPTIONS.filter((e) => !uses.some((u) => exempt(e.path, u.file))).map(
      (e) => e.path,
    );
    expect(unused).toEqual([]);
  });
});
