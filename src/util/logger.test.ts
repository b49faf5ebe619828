import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createLogger, silentLogger } from "./logger.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A logger writing to a temporary file, and a function that waits (at most 5 s) until the file holds
 * `lines` lines and returns them.
 */
function fileLogger(level: string, format: "plain" | "json") {
  const dir = mkdtempSync(join(tmpdir(), "cometh-logger-"));
  dirs.push(dir);
  const file = join(dir, "log");
  const fd = openSync(file, "w");
  const log = createLogger({ level, format, destination: fd });
  const read = async (lines: number): Promise<string[]> => {
    for (const deadline = Date.now() + 5000; ; ) {
      const got = readFileSync(file, "utf8").split("\n").filter(Boolean);
      if (got.length >= lines || Date.now() > deadline) {
        closeSync(fd);
        return got;
      }
      await new Promise<void>((resolve) => log.flush(() => setImmediate(resolve)));
    }
  };
  return { log, read };
}

describe("createLogger", () => {
  test("behavior: writes the lines at or above its level, with a child's bindings; json and plain formats", async () => {
    const json = fileLogger("info", "json");
    json.log.debug("hidden");
    json.log.child({ module: "consensus" }).info({ height: 3 }, "committed");
    json.log.error("bad");
    const lines = (await json.read(2)).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.level, l.msg, l.module, l.height])).toEqual([
      [30, "committed", "consensus", 3],
      [50, "bad", undefined, undefined],
    ]);

    const plain = fileLogger("warn", "plain");
    plain.log.info("hidden");
    plain.log.child({ module: "p2p" }).warn({ peer: "abc" }, "dropped");
    const plainLines = await plain.read(1);
    expect(plainLines).toHaveLength(1);
    expect(plainLines[0]).toMatch(/^W\[\d{4}-\d{2}-\d{2}\|[\d:.]+\] dropped module=p2p peer=abc$/);
  });

  test("behavior: level and isLevelEnabled answer before and after the first line; a child may set its own level", () => {
    const { log } = fileLogger("error", "json");
    expect(log.level).toBe("error");
    expect(log.isLevelEnabled("warn")).toBe(false);
    expect(log.isLevelEnabled("fatal")).toBe(true);
    const chatty = log.child({ module: "x" }, { level: "debug" });
    expect(chatty.isLevelEnabled("debug")).toBe(true);
    log.error("made");
    expect(log.level).toBe("error");
    expect(log.isLevelEnabled("warn")).toBe(false);
    expect(silentLogger().isLevelEnabled("fatal")).toBe(false);
  });

  test("behavior: pino is loaded only when a line is written", () => {
    const logger = fileURLToPath(new URL("./logger.ts", import.meta.url));
    const script = `
      const { createRequire } = await import("node:module");
      const { createLogger } = await import(${JSON.stringify(logger)});
      const pinoFile = createRequire(${JSON.stringify(logger)}).resolve("pino");
      const loaded = () => pinoFile in createRequire(${JSON.stringify(logger)}).cache;
      const log = createLogger({ level: "error" });
      log.info("not written");
      log.child({ module: "a" }).warn("not written");
      const before = loaded();
      log.child({ module: "a" }).error("written");
      console.log(JSON.stringify({ before, after: loaded() }));
    `;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop() as string)).toEqual({ before: false, after: true });
    expect(r.stderr).toMatch(/\] written module=a/);
    expect(r.stderr).not.toContain("not written");
  });
});
