import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  addressFromPubKey,
  generateEd25519PrivKey,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  type Vote,
  zeroBlockId,
} from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import { ROUND_STEP } from "./roundStep.js";
import { capturingLogger, tempDir } from "./testing/harness.js";
import { decodeWalFile, frameWalRecord, scanWalFile, Wal } from "./wal.js";
import type { WalMessage } from "./walCodec.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function walPath(): string {
  const { dir, cleanup } = tempDir("cometh-wal-");
  cleanups.push(cleanup);
  return join(dir, "cs.wal", "wal");
}

const pub = pubKeyFromPrivKey(generateEd25519PrivKey(new Uint8Array(32).fill(3)));
const vote: Vote = {
  type: SIGNED_MSG_TYPE.prevote,
  height: 5,
  round: 1,
  blockId: zeroBlockId(),
  timestamp: 1_700_000_000_123_456_789n,
  validatorAddress: addressFromPubKey(pub),
  validatorIndex: 0,
  signature: new Uint8Array(64).fill(9),
  extension: EMPTY_BYTES,
  extensionSignature: EMPTY_BYTES,
};

const samples: WalMessage[] = [
  { kind: "roundState", height: 5, round: 1, step: ROUND_STEP.prevote },
  { kind: "msgInfo", peerId: "", msg: { kind: "vote", vote } },
  { kind: "msgInfo", peerId: "abcd", msg: { kind: "vote", vote } },
  { kind: "timeout", timeout: { durationMs: 1500, height: 5, round: 1, step: ROUND_STEP.prevoteWait } },
  { kind: "endHeight", height: 5 },
];

describe("WAL", () => {
  test("default: a new WAL starts with EndHeight(0)", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    expect(wal.readAll().map((m) => m.msg)).toEqual([{ kind: "endHeight", height: 0 }]);
    await wal.close();
  });

  test("behavior: without fsync a height's records are held, and dropped at its EndHeight", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger(), sync: false });
    const size0 = statSync(path).size;
    const t = 1_700_000_000_000_000_000n;
    for (const m of samples.slice(0, 4)) await wal.writeSync(m, t);
    await wal.flushAndSync();
    // Held in memory: a killed process loses only the height in progress.
    expect(statSync(path).size).toBe(size0);
    // Replay never reads a finished height's records: only its EndHeight reaches the file.
    await wal.writeSync({ kind: "endHeight", height: 5 }, t);
    expect(decodeWalFile(readFileSync(path)).messages.map((r) => r.msg)).toEqual([
      { kind: "endHeight", height: 0 },
      { kind: "endHeight", height: 5 },
    ]);
    expect(wal.searchForEndHeight(5)).toEqual({ found: true, messages: [] });
    // A search (and close) writes out what is held first, in order, each record with its time.
    wal.write(samples[0] as WalMessage, t);
    expect(wal.searchForEndHeight(5).messages).toEqual([{ time: t, msg: samples[0] }]);
    wal.write(samples[1] as WalMessage, t + 1n);
    wal.write(samples[2] as WalMessage, t + 2n);
    await wal.close();
    expect(decodeWalFile(readFileSync(path)).messages).toEqual([
      { time: 0n, msg: { kind: "endHeight", height: 0 } },
      { time: t, msg: { kind: "endHeight", height: 5 } },
      { time: t, msg: samples[0] },
      { time: t + 1n, msg: samples[1] },
      { time: t + 2n, msg: samples[2] },
    ]);
    // Reopened, the held records of the unfinished height are what replay finds after EndHeight(5).
    const reopened = await Wal.open(path, { log: silentLogger(), sync: false });
    expect(reopened.searchForEndHeight(5).messages.map((r) => r.msg)).toEqual(samples.slice(0, 3));
    await reopened.close();
  });

  test("behavior: without fsync the held records are written out once 1024 are held", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger(), sync: false });
    const size0 = statSync(path).size;
    const rs = (round: number): WalMessage => ({ kind: "roundState", height: 1, round, step: ROUND_STEP.propose });
    for (let i = 0; i < 1023; i++) wal.write(rs(i), 1n);
    expect(statSync(path).size).toBe(size0);
    wal.write(rs(1023), 1n);
    const written = decodeWalFile(readFileSync(path)).messages;
    expect(written).toHaveLength(1025);
    expect(written.at(-1)?.msg).toEqual(rs(1023));
    await wal.close();
  });

  test("behavior: records round-trip and EndHeight search returns what follows", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    for (const m of samples) wal.write(m, 42n);
    await wal.writeSync({ kind: "roundState", height: 6, round: 0, step: ROUND_STEP.newHeight }, 43n);
    await wal.close();
    const reopened = await Wal.open(path, { log: silentLogger() });
    const all = reopened.readAll();
    expect(all.slice(1, 6).map((m) => m.msg)).toEqual(samples);
    expect(all[1]?.time).toBe(42n);
    const found = reopened.searchForEndHeight(5);
    expect(found.found).toBe(true);
    expect(found.messages.map((m) => m.msg.kind)).toEqual(["roundState"]);
    expect(reopened.searchForEndHeight(6).found).toBe(false);
    await reopened.close();
  });

  test("behavior: a torn tail is cut off on open and the file is backed up", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    for (const m of samples) wal.write(m, 1n);
    await wal.close();
    const goodSize = statSync(path).size;
    const frame = frameWalRecord({ time: 2n, msg: { kind: "endHeight", height: 6 } });
    appendFileSync(path, frame.subarray(0, frame.length - 3));
    const reopened = await Wal.open(path, { log: silentLogger() });
    expect(statSync(path).size).toBe(goodSize);
    expect(existsSync(`${path}.CORRUPTED`)).toBe(true);
    expect(statSync(`${path}.CORRUPTED`).size).toBe(goodSize + frame.length - 3);
    expect(reopened.readAll()).toHaveLength(samples.length + 1);
    // Appending continues after the valid prefix.
    await reopened.writeSync({ kind: "endHeight", height: 6 }, 3n);
    expect(reopened.searchForEndHeight(6).found).toBe(true);
    await reopened.close();
  });

  test("behavior: a record with a bad checksum ends the valid prefix", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    wal.write({ kind: "endHeight", height: 1 }, 1n);
    wal.write({ kind: "endHeight", height: 2 }, 1n);
    await wal.close();
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    const res = decodeWalFile(bytes);
    expect(res.error?.name).toBe("WalCorruptionError");
    expect(res.messages.map((m) => m.msg)).toEqual([
      { kind: "endHeight", height: 0 },
      { kind: "endHeight", height: 1 },
    ]);
    const reopened = await Wal.open(path, { log: silentLogger() });
    expect(reopened.searchForEndHeight(2).found).toBe(false);
    expect(reopened.searchForEndHeight(1).found).toBe(true);
    await reopened.close();
  });

  test("behavior: a record announcing more than the size limit ends what can be read; open cuts it off", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    await wal.writeSync({ kind: "endHeight", height: 1 }, 1n);
    await wal.close();
    const goodSize = statSync(path).size;
    appendFileSync(path, Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
    const { log, lines } = capturingLogger();
    const reopened = await Wal.open(path, { log });
    expect(statSync(path).size).toBe(goodSize);
    expect(lines.join("\n")).toContain(
      `repaired the consensus WAL ${path}: dropped its last 11 bytes, from offset ${goodSize} on`,
    );
    await reopened.close();
  });

  test("behavior: a damaged complete record is skipped by the search and left in place at open (CometBFT)", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    await wal.writeSync({ kind: "endHeight", height: 1 }, 1n);
    await wal.writeSync({ kind: "endHeight", height: 2 }, 1n);
    await wal.writeSync({ kind: "endHeight", height: 3 }, 1n);
    wal.write({ kind: "roundState", height: 4, round: 0, step: ROUND_STEP.propose }, 1n);
    await wal.close();
    const bytes = readFileSync(path);
    const scan = scanWalFile(bytes);
    // Flip a data byte of EndHeight(2): an older height than the one replayed.
    const at = scan.records[2]?.offset ?? 0;
    bytes[at + 8] = (bytes[at + 8] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    const reopened = await Wal.open(path, { log: silentLogger() });
    expect(existsSync(`${path}.CORRUPTED`)).toBe(false);
    expect(statSync(path).size).toBe(bytes.length);
    const res = reopened.searchForEndHeight(3);
    expect(res.found).toBe(true);
    expect(res.corruption).toBeUndefined();
    expect(res.messages.map((m) => m.msg.kind)).toEqual(["roundState"]);
    expect(reopened.searchForEndHeight(2).found).toBe(false);
    await reopened.close();
  });

  test("behavior: damage after the marker is reported; repair keeps the records before the first damaged one", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger() });
    await wal.writeSync({ kind: "endHeight", height: 1 }, 1n);
    wal.write({ kind: "roundState", height: 2, round: 0, step: ROUND_STEP.propose }, 1n);
    wal.write({ kind: "roundState", height: 2, round: 0, step: ROUND_STEP.prevote }, 1n);
    wal.write({ kind: "roundState", height: 2, round: 0, step: ROUND_STEP.precommit }, 1n);
    await wal.close();
    const bytes = readFileSync(path);
    const scan = scanWalFile(bytes);
    const at = scan.records[3]?.offset ?? 0; // the prevote step
    bytes[at] = (bytes[at] ?? 0) ^ 0xff; // its checksum
    writeFileSync(path, bytes);
    const { log, lines } = capturingLogger();
    const reopened = await Wal.open(path, { log });
    const res = reopened.searchForEndHeight(1);
    expect(res.corruption).toMatchObject({ file: path, offset: at });
    expect(res.messages).toHaveLength(2);
    const done = await reopened.repair();
    expect(done).toMatchObject({ file: path, offset: at, droppedBytes: bytes.length - at, droppedRecords: 1 });
    expect(readFileSync(`${path}.CORRUPTED`)).toEqual(bytes);
    expect(statSync(path).size).toBe(at);
    expect(lines.join("\n")).toContain(
      `repaired the consensus WAL ${path}: dropped ${bytes.length - at} bytes, 1 readable records among them, from offset ${at} on (record at offset ${at} fails its checksum); the file as it was is kept in ${path}.CORRUPTED`,
    );
    const again = reopened.searchForEndHeight(1);
    expect(again.corruption).toBeUndefined();
    expect(again.messages.map((m) => m.msg)).toEqual([
      { kind: "roundState", height: 2, round: 0, step: ROUND_STEP.propose },
    ]);
    // Appending goes on at the cut.
    await reopened.writeSync({ kind: "endHeight", height: 2 }, 2n);
    expect(reopened.searchForEndHeight(2).found).toBe(true);
    await reopened.close();
  });

  test("behavior: the head rotates past the size limit and search spans files", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger(), maxFileBytes: 200 });
    for (let h = 1; h <= 10; h++) {
      wal.write({ kind: "msgInfo", peerId: "p", msg: { kind: "vote", vote: { ...vote, height: h } } }, 1n);
      await wal.writeSync({ kind: "endHeight", height: h }, 1n);
    }
    wal.write({ kind: "roundState", height: 11, round: 0, step: ROUND_STEP.propose }, 1n);
    expect(existsSync(`${path}.000`)).toBe(true);
    const res = wal.searchForEndHeight(3);
    expect(res.found).toBe(true);
    expect(
      res.messages.filter((m) => m.msg.kind === "endHeight").map((m) => (m.msg as { height: number }).height),
    ).toEqual([4, 5, 6, 7, 8, 9, 10]);
    await wal.close();
  });

  test("behavior: reset drops every record, rotated files included, and later records follow its EndHeight", async () => {
    const path = walPath();
    const wal = await Wal.open(path, { log: silentLogger(), maxFileBytes: 200 });
    for (let h = 1; h <= 10; h++) {
      wal.write({ kind: "msgInfo", peerId: "p", msg: { kind: "vote", vote: { ...vote, height: h } } }, 1n);
      await wal.writeSync({ kind: "endHeight", height: h }, 1n);
    }
    expect(existsSync(`${path}.000`)).toBe(true);
    await wal.reset(4, 2n);
    expect(existsSync(`${path}.000`)).toBe(false);
    wal.write({ kind: "roundState", height: 5, round: 0, step: ROUND_STEP.propose }, 3n);
    await wal.reset(2, 4n);
    wal.write({ kind: "roundState", height: 3, round: 0, step: ROUND_STEP.propose }, 5n);
    await wal.close();
    const reopened = await Wal.open(path, { log: silentLogger() });
    expect(reopened.readAll().map((m) => m.msg)).toEqual([
      { kind: "endHeight", height: 2 },
      { kind: "roundState", height: 3, round: 0, step: ROUND_STEP.propose },
    ]);
    expect(reopened.searchForEndHeight(4).found).toBe(false);
    await reopened.close();
  });
});
