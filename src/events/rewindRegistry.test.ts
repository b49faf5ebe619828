import { expect, test } from "vitest";
import { RewindRefusedError } from "./errors.js";
import { RewindRegistry } from "./rewindRegistry.js";

test("behavior: rewindTo walks the stores in registration order, each after the last one finished", async () => {
  const reg = new RewindRegistry();
  const calls: string[] = [];
  reg.register({
    name: "a",
    rewindTo: async (h) => {
      await new Promise((r) => setImmediate(r));
      calls.push(`a${h}`);
    },
  });
  reg.register({ name: "b", rewindTo: (h) => void calls.push(`b${h}`) });
  const removeC = reg.register({ name: "c", rewindTo: (h) => void calls.push(`c${h}`) });
  expect(reg.names()).toEqual(["a", "b", "c"]);
  await reg.rewindTo(7);
  removeC();
  await reg.rewindTo(0);
  expect(calls).toEqual(["a7", "b7", "c7", "a0", "b0"]);
});

test("error: a store that cannot go back refuses before any store is touched, naming itself", async () => {
  const reg = new RewindRegistry();
  const calls: string[] = [];
  reg.register({ name: "first", rewindTo: () => void calls.push("first") });
  let psql = true;
  reg.register({
    name: "tx indexer",
    cannotRewind: () => (psql ? "the tx indexer cannot forget blocks" : undefined),
    rewindTo: () => void calls.push("indexer"),
  });
  const err = await reg.rewindTo(3).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RewindRefusedError);
  expect((err as RewindRefusedError).store).toBe("tx indexer");
  expect((err as Error).message).toBe("the tx indexer cannot forget blocks");
  expect(() => reg.check()).toThrow(RewindRefusedError);
  expect(calls).toEqual([]);
  psql = false;
  await reg.rewindTo(3);
  expect(calls).toEqual(["first", "indexer"]);
});

test("error: a name is registered once; a store that throws stops the walk", async () => {
  const reg = new RewindRegistry();
  const calls: string[] = [];
  reg.register({
    name: "app",
    rewindTo: () => {
      throw new RewindRefusedError("app", "disk full");
    },
  });
  reg.register({ name: "blocks", rewindTo: () => void calls.push("blocks") });
  expect(() => reg.register({ name: "app", rewindTo: () => undefined })).toThrow(/already registered/);
  await expect(reg.rewindTo(1)).rejects.toThrow("disk full");
  expect(calls).toEqual([]);
});
