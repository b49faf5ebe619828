import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { StoreFileError } from "./errors.js";
import { openKvStore } from "./kvStore.js";
import { checkLmdbFile } from "./lmdbFile.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "cometh-lmdbfile-"));
  dirs.push(d);
  return d;
}

/** An LMDB file with a few transactions of data; the last one writes a value spanning overflow pages. */
async function sampleFile(): Promise<string> {
  const file = join(await tempDir(), "sample.lmdb");
  const kv = await openKvStore(file);
  const t = kv.table("x");
  for (let i = 0; i < 5; i++) {
    await kv.transaction(() => {
      for (let j = 0; j < 200; j++) t.put(Buffer.from(`k${i}-${j}`), Buffer.alloc(100, i));
    });
  }
  await kv.transaction(() => t.put(Buffer.from("big"), Buffer.alloc(100_000, 7)));
  await kv.close();
  return file;
}

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

function problemOf(file: string): string | undefined {
  try {
    checkLmdbFile(file);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(StoreFileError);
    expect((err as StoreFileError).file).toBe(file);
    return (err as Error).message;
  }
}

describe.skipIf(process.platform === "win32" || !process.arch.endsWith("64"))("checkLmdbFile", () => {
  test("default: a sound file, a missing one and a directory environment pass", async () => {
    const file = await sampleFile();
    expect(problemOf(file)).toBeUndefined();
    expect(problemOf(join(await tempDir(), "none.lmdb"))).toBeUndefined();
    const dir = join(await tempDir(), "env");
    mkdirSync(dir);
    const kv = await openKvStore(dir);
    await kv.transaction(() => kv.put(Buffer.from("a"), Buffer.from("b")));
    await kv.close();
    expect(problemOf(dir)).toBeUndefined();
    writeFileSync(join(dir, "data.mdb"), Buffer.alloc(0));
    expect(() => checkLmdbFile(dir)).toThrow(`the database file ${join(dir, "data.mdb")} is empty (0 bytes)`);
  });

  test("error: truncated, header zeroed, second header zeroed, random bytes, empty; never written", async () => {
    const cases: [string, (f: string) => void, RegExp][] = [
      ["cut in half", (f) => truncateSync(f, Math.floor(statSync(f).size / 2)), /is truncated: /],
      ["cut to 100 bytes", (f) => truncateSync(f, 100), /is truncated: 100 bytes, shorter than one LMDB header page/],
      [
        "first page zeroed",
        (f) => {
          const b = readFileSync(f);
          b.fill(0, 0, 4096);
          writeFileSync(f, b);
        },
        /has a damaged header: its first header page carries no LMDB meta page/,
      ],
      [
        "second page zeroed",
        (f) => {
          const b = readFileSync(f);
          b.fill(0, 4096, 8192);
          writeFileSync(f, b);
        },
        /has a damaged header: its second header page carries no LMDB meta page/,
      ],
      ["random bytes", (f) => writeFileSync(f, randomBytes(statSync(f).size)), /has a damaged header/],
      ["empty", (f) => truncateSync(f, 0), /is empty \(0 bytes\)/],
      // The last pages hold the big value's overflow pages, no tree root: only reading tells.
      ["last page cut", (f) => truncateSync(f, statSync(f).size - 4096), /is truncated: .* and reading it fails/],
    ];
    for (const [name, damage, want] of cases) {
      const file = await sampleFile();
      damage(file);
      const before = sha(file);
      const message = problemOf(file);
      expect(message, name).toMatch(want);
      expect(message, name).toMatch(/cometh did not open it and wrote nothing to it; restore it from a backup$/);
      expect(sha(file), name).toBe(before);
    }
  });

  test("error: openKvStore refuses a damaged file before LMDB maps it", async () => {
    const file = await sampleFile();
    truncateSync(file, 8192 + 100);
    await expect(openKvStore(file)).rejects.toThrow(StoreFileError);
  });
});
