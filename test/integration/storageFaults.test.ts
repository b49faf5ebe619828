import { createHash, randomBytes } from "node:crypto";
import {
  appendFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { scanWalFile } from "../../src/consensus/wal.js";
import { BlockStore, openKvStore } from "../../src/store/index.js";
import { bytesToHex } from "../../src/util/bytes.js";
import { makeTempHome, spawnNode, startNodeProcess, waitForHeight } from "./testNode.js";

/**
 * Storage faults at start, on a real `cometh start` child process (EVM app, kv indexer): the chain is
 * run, stopped, a file is damaged, and the node is started again.
 *
 * - The consensus WAL with a torn or damaged tail is repaired as CometBFT repairs it (the records
 *   before the damage are kept, the file as it was is copied to `wal.CORRUPTED`), one log line names
 *   the file and what was dropped, and the node goes on committing with every committed block intact.
 * - A damaged LMDB file (block and state store `node.lmdb`, EVM state `evm.db/data.mdb`, tx index
 *   `tx_index.lmdb`: truncated, header zeroed, random bytes) or a missing genesis.json stops the start
 *   with exit code 1 and one error line naming the file: no stack trace, no crash by signal, and not
 *   one byte of the data directory changed.
 */

const FAST = ["--consensus.timeout_commit", "50ms", "--consensus.timeout_propose", "1s"];

let pristine: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const tmp = await makeTempHome("cometh-faults-");
  cleanups.push(tmp.cleanup);
  pristine = tmp.home;
  const node = await startNodeProcess(pristine, FAST);
  await waitForHeight(node.rpcUrl, 5);
  expect(await node.stop()).toBe(0);
});

afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A fresh copy of the stopped chain's home. */
async function copyOfChain(): Promise<string> {
  const tmp = await makeTempHome("cometh-fault-case-");
  cleanups.push(tmp.cleanup);
  cpSync(pristine, tmp.home, { recursive: true });
  return tmp.home;
}

/** sha256 of every file under `dir` (LMDB lock files aside: they hold reader slots, not data). */
function digests(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith("-lock") || entry.name === "lock.mdb") continue;
    const path = join(entry.parentPath, entry.name);
    out[path] = createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return out;
}

/** Runs `cometh start` to its exit (bounded); returns the exit code, the signal and the output. */
async function startToExit(home: string): Promise<{ code: number | null; signal: string | null; output: string }> {
  const node = spawnNode([
    "start",
    "--home",
    home,
    "--rpc.laddr",
    "tcp://127.0.0.1:0",
    "--p2p.laddr",
    "tcp://127.0.0.1:0",
    "--json-rpc.enable=false",
  ]);
  node.ready.catch(() => undefined);
  const timer = setTimeout(() => node.child.kill("SIGKILL"), 30_000);
  const code = await node.exited;
  clearTimeout(timer);
  return { code, signal: node.child.signalCode, output: node.output() };
}

/** Hex hashes of blocks base..height as the block store holds them (the node must be stopped). */
async function committedBlocks(home: string): Promise<string[]> {
  const db = await openKvStore(join(home, "data", "node.lmdb"));
  try {
    const blocks = new BlockStore(db);
    const hashes: string[] = [];
    for (let h = blocks.base(); h <= blocks.height(); h++) {
      const meta = blocks.loadBlockMeta(h);
      hashes.push(meta === undefined ? `missing ${h}` : bytesToHex(meta.blockId.hash));
    }
    return hashes;
  } finally {
    await db.close();
  }
}

describe("storage faults: the consensus WAL", () => {
  type Damage = (wal: string) => void;

  /**
   * Runs the chain on a copy, kills it (-9) mid-height (until `wanted` holds for the WAL), damages the
   * WAL, starts again: the repair is logged, blocks keep coming, every block committed before is kept.
   */
  async function damagedWalResumes(damage: Damage, wanted: (wal: Uint8Array) => boolean = () => true) {
    const home = await copyOfChain();
    const walPath = join(home, "data", "cs.wal", "wal");
    for (let attempt = 0; ; attempt++) {
      const node = await startNodeProcess(home, FAST);
      const status = await waitForHeight(node.rpcUrl, 0);
      await waitForHeight(node.rpcUrl, status + 3);
      await node.kill();
      if (wanted(readFileSync(walPath)) || attempt === 5) break;
    }
    const before = await committedBlocks(home);
    damage(walPath);
    const damaged = readFileSync(walPath);

    const node = await startNodeProcess(home, FAST);
    await waitForHeight(node.rpcUrl, before.length + 3);
    const repaired = node
      .output()
      .split("\n")
      .filter((l) => l.includes(`repaired the consensus WAL ${walPath}: dropped `));
    expect(repaired, node.output()).toHaveLength(1);
    expect(await node.stop()).toBe(0);
    // The file as it was is kept beside the WAL.
    expect(readFileSync(`${walPath}.CORRUPTED`)).toEqual(damaged);
    const after = await committedBlocks(home);
    expect(after.length).toBeGreaterThanOrEqual(before.length + 3);
    expect(after.slice(0, before.length)).toEqual(before);
    return repaired[0] as string;
  }

  /** Offset of the last record of the WAL file. */
  const lastRecordOffset = (wal: Uint8Array) => scanWalFile(wal).records.at(-1)?.offset ?? 0;

  test("behavior: a torn last record is cut off at start; the node resumes, nothing committed is lost", async () => {
    const line = await damagedWalResumes((wal) => truncateSync(wal, statSync(wal).size - 5));
    expect(line).toMatch(
      /dropped its last \d+ bytes, from offset \d+ on \(torn record at offset \d+: \d+ bytes announced, \d+ present\)/,
    );
  });

  test("behavior: garbage after the last record is cut off at start; the node resumes", async () => {
    const line = await damagedWalResumes((wal) => appendFileSync(wal, randomBytes(700)));
    expect(line).toMatch(
      /dropped its last \d+ bytes, from offset \d+ on \((torn record|record at offset \d+ announces)/,
    );
  });

  test("behavior: a damaged record of the height being replayed is repaired as CometBFT's repairWalFile does", async () => {
    const line = await damagedWalResumes(
      (wal) => {
        const bytes = readFileSync(wal);
        const at = lastRecordOffset(bytes);
        bytes[at] = (bytes[at] ?? 0) ^ 0xff; // its checksum: a complete record that fails it
        writeFileSync(wal, bytes);
      },
      // Killed while a height was in progress: the last record comes after the last EndHeight.
      (wal) => scanWalFile(wal).records.at(-1)?.message.msg.kind !== "endHeight",
    );
    expect(line).toMatch(
      /from offset (\d+) on \(record at offset \1 fails its checksum\); the file as it was is kept in /,
    );
  });
});

describe("storage faults: LMDB files and genesis.json", () => {
  const STORES = {
    "block store and state store": ["data", "node.lmdb"],
    "EVM state": ["data", "evm.db", "data.mdb"],
    "tx index": ["data", "tx_index.lmdb"],
  } as const;
  const DAMAGES = {
    truncated: (file: string) => truncateSync(file, Math.floor(statSync(file).size / 2)),
    "header zeroed": (file: string) => {
      const bytes = readFileSync(file);
      bytes.fill(0, 0, 4096);
      writeFileSync(file, bytes);
    },
    "random bytes": (file: string) => writeFileSync(file, randomBytes(statSync(file).size)),
  } as const;

  for (const [store, parts] of Object.entries(STORES)) {
    for (const [how, damage] of Object.entries(DAMAGES)) {
      test(`error: ${store} (${parts.at(-1)}) ${how}: exit 1, the file named, nothing written`, async () => {
        const home = await copyOfChain();
        const file = join(home, ...parts);
        damage(file);
        const data = join(home, "data");
        const before = digests(data);
        const { code, signal, output } = await startToExit(home);
        expect(signal, output).toBeNull();
        expect(code, output).toBe(1);
        expect(output).toContain(`ERROR: the database file ${file} `);
        expect(output).toContain("cometh did not open it and wrote nothing to it; restore it from a backup");
        expect(output).not.toMatch(/^\s+at /m);
        expect(digests(data)).toEqual(before);
      });
    }
  }

  test("error: a missing genesis.json: exit 1, the file named, nothing written", async () => {
    const home = await copyOfChain();
    const genesis = join(home, "config", "genesis.json");
    rmSync(genesis);
    const before = digests(home);
    const { code, signal, output } = await startToExit(home);
    expect(signal, output).toBeNull();
    expect(code, output).toBe(1);
    expect(output).toContain(`ERROR: ${genesis}: does not exist`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(existsSync(genesis)).toBe(false);
    expect(digests(home)).toEqual(before);
  });
});
