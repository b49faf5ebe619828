/**
 * Child process for the kill -9 test: saves blocks 1..N into the store at argv[2] and prints
 * "saved H" after each save resolves. The parent kills it with SIGKILL mid-run.
 */
import { BlockStore } from "../blockStore.js";
import { openKvStore } from "../kvStore.js";
import { makeTestBlock, type TestBlock } from "./blockFixtures.js";

const dir = process.argv[2];
const count = Number(process.argv[3] ?? "1000");
if (dir === undefined) process.exit(2);
const db = await openKvStore(dir);
const store = new BlockStore(db);
let prev: TestBlock | undefined;
for (let h = 1; h <= count; h++) {
  const b = makeTestBlock(h, prev, [new Uint8Array(3000).fill(h % 256)]);
  await store.saveBlock(b.block, b.parts, b.seenCommit);
  process.stdout.write(`saved ${h}\n`);
  prev = b;
}
await db.close();
