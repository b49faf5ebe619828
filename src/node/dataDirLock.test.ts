import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { DataDirLockedError, lockDataDir } from "./dataDirLock.js";

/** The PID of a process that has exited (a `true` run to the end). */
async function deadPid(): Promise<number> {
  const child = spawn("true");
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid as number;
}

describe("lockDataDir", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cometh-lock-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("behavior: a second lock of a held directory fails, naming the holder; after release it succeeds", async () => {
    const release = await lockDataDir(dir);
    expect((await readFile(join(dir, "LOCK"), "latin1")).split(" ")[0]).toBe(String(process.pid));
    const second = lockDataDir(dir);
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(`in use by another cometh node (process ${process.pid}, this one)`);
    await release();
    await expect(readFile(join(dir, "LOCK"))).rejects.toThrow(/ENOENT/);
    const again = await lockDataDir(dir);
    await again();
  });

  test("behavior: a lock held by another live process refuses the start", async () => {
    const sleeper = spawn("sleep", ["30"]);
    try {
      const pid = sleeper.pid as number;
      const stat = await readFile(`/proc/${pid}/stat`, "latin1");
      const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
      await writeFile(join(dir, "LOCK"), `${pid} ${start}\n`);
      await expect(lockDataDir(dir)).rejects.toThrow(`(process ${pid})`);
      // Still the holder's file.
      expect(await readFile(join(dir, "LOCK"), "latin1")).toBe(`${pid} ${start}\n`);
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  test("behavior: stale locks are taken over: owner gone, PID reused by another process, this process's leftover, garbage", async () => {
    const live = spawn("sleep", ["30"]);
    try {
      const stale = [
        `${await deadPid()} 12345\n`,
        // A live PID whose start time is not the recorded one: the PID now names another process.
        `${live.pid} 1\n`,
        // This process's PID, with no node of this process holding the directory.
        `${process.pid} 1\n`,
        "not a lock\n",
      ];
      for (const text of stale) {
        await writeFile(join(dir, "LOCK"), text);
        const release = await lockDataDir(dir);
        expect((await readFile(join(dir, "LOCK"), "latin1")).split(" ")[0]).toBe(String(process.pid));
        await release();
      }
    } finally {
      live.kill("SIGKILL");
    }
  });

  test("behavior: a release leaves a lock file that is no longer this node's alone", async () => {
    const release = await lockDataDir(dir);
    await writeFile(join(dir, "LOCK"), "1 1\n");
    await release();
    expect(await readFile(join(dir, "LOCK"), "latin1")).toBe("1 1\n");
  });
});
