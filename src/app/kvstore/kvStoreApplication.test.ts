import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { openMemoryKvStore } from "../../store/index.js";
import {
  addressFromPubKey,
  defaultConsensusParams,
  type FinalizeBlockRequest,
  type InitChainRequest,
  type ValidatorUpdate,
} from "../../types/index.js";
import { bytesToBase64, bytesToUtf8, utf8ToBytes } from "../../util/bytes.js";
import { silentLogger } from "../../util/logger.js";
import { createKvStoreApp, KvStoreApplication, kvStoreAppHash } from "./kvStoreApplication.js";
import { decodeValidatorRecord, encodeValidatorRecord } from "./validatorRecord.js";

const log = silentLogger();
const tx = (s: string) => utf8ToBytes(s);

function pubKey(seed: number): ValidatorUpdate["pubKey"] {
  return { type: "ed25519", bytes: new Uint8Array(32).fill(seed) };
}

function valTx(seed: number, power: bigint): Uint8Array {
  return tx(`val=ed25519!${bytesToBase64(pubKey(seed).bytes)}!${power}`);
}

function initChainRequest(validators: ValidatorUpdate[]): InitChainRequest {
  return {
    time: 0n,
    chainId: "test-chain",
    consensusParams: defaultConsensusParams(),
    validators,
    appStateBytes: new Uint8Array(),
    initialHeight: 1,
  };
}

function finalizeRequest(height: number, txs: Uint8Array[], misbehavior: FinalizeBlockRequest["misbehavior"] = []) {
  return {
    txs,
    decidedLastCommit: { round: 0, votes: [] },
    misbehavior,
    hash: new Uint8Array(32),
    height,
    time: 0n,
    nextValidatorsHash: new Uint8Array(32),
    proposerAddress: new Uint8Array(20),
    block: {} as FinalizeBlockRequest["block"],
  } satisfies FinalizeBlockRequest;
}

async function memoryApp(validators: ValidatorUpdate[] = [{ pubKey: pubKey(1), power: 10n }]) {
  const app = KvStoreApplication.open(openMemoryKvStore(), { log });
  await app.initChain(initChainRequest(validators));
  return app;
}

async function getValue(app: KvStoreApplication, key: string, path = "/key") {
  const res = await app.query({ path, data: tx(key), height: 0, prove: false });
  return { log: res.log, value: bytesToUtf8(res.value), code: res.code, height: res.height };
}

describe("checkTx", () => {
  const CASES: [string, number][] = [
    ["name=satoshi", 0],
    ["name:satoshi", 0],
    // v0.38 refuses a key alone and the `val:` prefix (a key:value tx with a padded base64 "=" in it).
    ["abcd", 2],
    [`val=ed25519!${bytesToBase64(new Uint8Array(32).fill(7))}!10`, 0],
    [`val:ed25519!${bytesToBase64(new Uint8Array(32).fill(7))}!0`, 2],
    [`val=!${bytesToBase64(new Uint8Array(32).fill(7))}!+5`, 0],
    ["", 2],
    ["=value", 2],
    ["key=", 2],
    [":value", 2],
    ["a=b=c", 2],
    ["a=b:c", 2],
    ["a:b:c", 2],
    ["val=ed25519!AAAA", 2],
    ["val=ed25519!not base64!10", 2],
    [`val=ed25519!${bytesToBase64(new Uint8Array(31))}!10`, 2],
    [`val=sr25519!${bytesToBase64(new Uint8Array(32))}!10`, 2],
    [`val=ed25519!${bytesToBase64(new Uint8Array(32))}!-1`, 2],
    [`val=ed25519!${bytesToBase64(new Uint8Array(32))}!1.5`, 2],
    [`val=ed25519!${bytesToBase64(new Uint8Array(32))}!9223372036854775808`, 2],
    [`${"k".repeat(1969)}=v`, 2],
  ];
  test.each(CASES)("behavior: %s → code %i", async (text, code) => {
    const app = await memoryApp();
    const res = await app.checkTx({ tx: tx(text), type: 0 });
    expect(res.code).toBe(code);
    expect(res.gasWanted).toBe(code === 0 ? 1n : 0n);
    // As v0.38's kvstore: a refusal is the code alone, with no log.
    expect(res.log).toBe("");
  });

  test("error: the reason for a refusal goes to the node's debug log, not the CheckTx answer", async () => {
    const lines: { msg: string; reason: string }[] = [];
    const debugLog = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = KvStoreApplication.open(openMemoryKvStore(), { log: debugLog });
    const res = await app.checkTx({ tx: tx("a=b=c"), type: 0 });
    expect([res.code, res.log]).toEqual([2, ""]);
    expect(lines.map((l) => [l.msg, l.reason])).toMatchInlineSnapshot(`
      [
        [
          "CheckTx refused a tx",
          "invalid tx format: expected key=value or key:value (one '=' or ':', neither first nor last byte)",
        ],
      ]
    `);
  });
});

describe("proposals", () => {
  test("default: prepareProposal drops malformed txs and keeps to maxTxBytes (proto size)", async () => {
    const app = await memoryApp();
    const txs = [tx("a=1"), tx("bad=tx=x"), tx("b=2"), tx("c=3")];
    // Each 3-byte tx takes 5 bytes in the block's Data (tag, length, bytes).
    expect(
      (
        await app.prepareProposal({
          ...finalizeRequest(1, txs),
          maxTxBytes: 10,
          localLastCommit: { round: 0, votes: [] },
        })
      ).txs.map(bytesToUtf8),
    ).toEqual(["a=1", "b=2"]);
    expect(
      (
        await app.prepareProposal({
          ...finalizeRequest(1, txs),
          maxTxBytes: 9,
          localLastCommit: { round: 0, votes: [] },
        })
      ).txs.map(bytesToUtf8),
    ).toEqual(["a=1"]);
  });

  test("default: processProposal rejects a block with a malformed tx", async () => {
    const app = await memoryApp();
    const req = (txs: Uint8Array[]) => ({ ...finalizeRequest(1, txs), proposedLastCommit: { round: 0, votes: [] } });
    expect(await app.processProposal(req([tx("a=1"), tx("b:2")]))).toBe("accept");
    expect(await app.processProposal(req([tx("a=1"), tx("=b")]))).toBe("reject");
    expect(await app.processProposal(req([tx("a=1"), tx("b")]))).toBe("reject");
  });

  test("behavior: prepareProposal rewrites the first ':' of a tx into '=', as upstream's formatTxs", async () => {
    const app = await memoryApp();
    const colon = tx("b:2");
    const out = await app.prepareProposal({
      ...finalizeRequest(1, [tx("a=1"), colon, valTx(4, 3n)]),
      maxTxBytes: 1000,
      localLastCommit: { round: 0, votes: [] },
    });
    expect(out.txs.map(bytesToUtf8)).toEqual(["a=1", "b=2", bytesToUtf8(valTx(4, 3n))]);
    // The mempool's bytes are not written to.
    expect(bytesToUtf8(colon)).toBe("b:2");
  });
});

describe("finalizeBlock", () => {
  test("default: results and events like upstream", async () => {
    const app = await memoryApp();
    const res = await app.finalizeBlock(finalizeRequest(1, [tx("name=satoshi")]));
    expect(res.txResults).toHaveLength(1);
    const result = res.txResults[0];
    expect(result?.code).toBe(0);
    expect(result?.gasWanted).toBe(0n);
    expect(result?.events).toEqual([
      {
        type: "app",
        attributes: [
          { key: "creator", value: "Cosmoshi Netowoko", index: true },
          { key: "key", value: "name", index: true },
          { key: "index_key", value: "index is working", index: true },
          { key: "noindex_key", value: "index is working", index: false },
        ],
      },
      {
        type: "app",
        attributes: [
          { key: "creator", value: "Cosmoshi", index: true },
          { key: "key", value: "satoshi", index: true },
          { key: "index_key", value: "index is working", index: true },
          { key: "noindex_key", value: "index is working", index: false },
        ],
      },
    ]);
    expect(res.events).toEqual([]);
    expect(res.validatorUpdates).toEqual([]);
    expect(res.appHash).toEqual(kvStoreAppHash(1));
  });

  test("default: tx forms store key/value", async () => {
    const app = await memoryApp();
    await app.finalizeBlock(finalizeRequest(1, [tx("a=1"), tx("b:2"), tx("c=c"), tx("a=3")]));
    // Not visible before commit.
    expect((await getValue(app, "a")).log).toBe("does not exist");
    await app.commit();
    expect(await getValue(app, "a")).toEqual({ log: "exists", value: "3", code: 0, height: 1 });
    expect((await getValue(app, "b")).value).toBe("2");
    expect((await getValue(app, "c")).value).toBe("c");
  });

  test("behavior: malformed txs fail with code 2 and change nothing", async () => {
    const app = await memoryApp();
    const res = await app.finalizeBlock(finalizeRequest(1, [tx("a=b=c"), tx("x=1")]));
    expect(res.txResults.map((r) => r.code)).toEqual([2, 0]);
    expect(res.txResults[0]?.events).toEqual([]);
    expect(res.appHash).toEqual(kvStoreAppHash(1));
  });

  test("default: validator updates are returned and applied on commit; power 0 removes", async () => {
    const app = await memoryApp();
    const res = await app.finalizeBlock(finalizeRequest(1, [valTx(2, 5n), valTx(3, 7n)]));
    expect(res.txResults.map((r) => r.code)).toEqual([0, 0]);
    expect(res.validatorUpdates).toEqual([
      { pubKey: pubKey(2), power: 5n },
      { pubKey: pubKey(3), power: 7n },
    ]);
    // Upstream splits the tx on "=": a padded base64 key gives more than two parts, so key = value = tx.
    const text = bytesToUtf8(valTx(2, 5n));
    expect(res.txResults[0]?.events[0]?.attributes[1]).toEqual({ key: "key", value: text, index: true });
    await app.commit();
    const stored = await app.query({ path: "/val", data: pubKey(2).bytes, height: 0, prove: false });
    expect(decodeValidatorRecord(stored.value)).toEqual({ pubKey: pubKey(2), power: 5n });

    const removal = await app.finalizeBlock(finalizeRequest(2, [valTx(2, 0n)]));
    expect(removal.validatorUpdates).toEqual([{ pubKey: pubKey(2), power: 0n }]);
    await app.commit();
    expect((await app.query({ path: "/val", data: pubKey(2).bytes, height: 0, prove: false })).value).toHaveLength(0);
  });

  test("error: updates CometBFT would refuse fail their tx instead of halting the chain", async () => {
    const app = await memoryApp();
    const res = await app.finalizeBlock(
      finalizeRequest(1, [
        valTx(9, 0n),
        valTx(1, 0n),
        valTx(4, 3n),
        valTx(4, 5n),
        tx(`val=secp256k1!${bytesToBase64(new Uint8Array(33).fill(2))}!1`),
      ]),
    );
    expect(res.txResults.map((r) => [r.code, r.log])).toEqual([
      [2, "cannot remove a validator that is not in the set"],
      [2, "cannot remove the last validator"],
      [0, ""],
      [2, "validator already updated in this block; send the next update in a later block"],
      [2, "validator pubkey type secp256k1 is not allowed by the consensus params (ed25519)"],
    ]);
    expect(res.validatorUpdates).toEqual([{ pubKey: pubKey(4), power: 3n }]);
  });

  test("default: duplicate-vote misbehavior lowers the validator's power by one", async () => {
    const app = await memoryApp([
      { pubKey: pubKey(1), power: 10n },
      { pubKey: pubKey(2), power: 10n },
    ]);
    const res = await app.finalizeBlock(
      finalizeRequest(
        1,
        [],
        [
          {
            type: "duplicateVote",
            validatorAddress: addressFromPubKey(pubKey(2)),
            validatorPower: 10n,
            height: 1,
            time: 0n,
            totalVotingPower: 20n,
          },
        ],
      ),
    );
    expect(res.validatorUpdates).toEqual([{ pubKey: pubKey(2), power: 9n }]);
  });
});

describe("app hash", () => {
  test("default: upstream's zigzag varint of the tx count in 8 bytes", () => {
    expect(kvStoreAppHash(0)).toEqual(new Uint8Array(8));
    expect(kvStoreAppHash(1)).toEqual(new Uint8Array([2, 0, 0, 0, 0, 0, 0, 0]));
    expect(kvStoreAppHash(64)).toEqual(new Uint8Array([0x80, 0x01, 0, 0, 0, 0, 0, 0]));
    expect(kvStoreAppHash(300)).toEqual(new Uint8Array([0xd8, 0x04, 0, 0, 0, 0, 0, 0]));
  });

  test("behavior: deterministic across instances for the same blocks", async () => {
    const blocks = [[tx("a=1"), tx("b=2")], [tx("c:3"), valTx(5, 1n)], []];
    const hashes: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const app = await memoryApp();
      const seen: string[] = [];
      for (const [i, txs] of blocks.entries()) {
        seen.push(Buffer.from((await app.finalizeBlock(finalizeRequest(i + 1, txs))).appHash).toString("hex"));
        await app.commit();
      }
      hashes.push(seen);
    }
    expect(hashes[0]).toEqual(hashes[1]);
    expect(hashes[0]).toEqual(["0400000000000000", "0800000000000000", "0800000000000000"]);
  });
});

describe("query", () => {
  test("default: /key, /store and any other path read a key; /val reads a validator", async () => {
    const app = await memoryApp();
    await app.finalizeBlock(finalizeRequest(1, [tx("name=satoshi")]));
    await app.commit();
    for (const path of ["/key", "/store", ""]) expect((await getValue(app, "name", path)).value).toBe("satoshi");
    expect(await getValue(app, "nobody")).toEqual({ log: "does not exist", value: "", code: 0, height: 1 });
    const proved = await app.query({ path: "/store", data: tx("name"), height: 0, prove: true });
    expect(proved.index).toBe(-1n);
    expect(bytesToUtf8(proved.key)).toBe("name");
    const val = await app.query({ path: "/val", data: pubKey(1).bytes, height: 0, prove: false });
    expect(val.value).toEqual(encodeValidatorRecord({ pubKey: pubKey(1), power: 10n }));
    // Upstream's WriteMessage framing: length, then ValidatorUpdate{pub_key{ed25519}, power}.
    expect(Buffer.from(val.value).toString("hex")).toBe(`260a220a20${"01".repeat(32)}100a`);
  });

  test("default: info reports the committed height, app hash and size", async () => {
    const app = await memoryApp();
    expect(await app.info()).toEqual({
      data: '{"size":0}',
      version: "2.0.0",
      appVersion: 1n,
      lastBlockHeight: 0,
      lastBlockAppHash: kvStoreAppHash(0),
    });
    await app.finalizeBlock(finalizeRequest(1, [tx("a=1")]));
    expect((await app.info()).lastBlockHeight).toBe(0);
    await app.commit();
    expect(await app.info()).toMatchObject({
      data: '{"size":1}',
      lastBlockHeight: 1,
      lastBlockAppHash: kvStoreAppHash(1),
    });
  });
});

describe("persistence", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kvstore-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("behavior: committed state survives reopening; an uncommitted block does not", async () => {
    const dbDir = join(dir, "data", "kvstore.db");
    const app = await createKvStoreApp({ dbDir, log });
    await app.initChain(initChainRequest([{ pubKey: pubKey(1), power: 10n }]));
    await app.finalizeBlock(finalizeRequest(1, [tx("a=1"), valTx(2, 4n)]));
    await app.commit();
    await app.finalizeBlock(finalizeRequest(2, [tx("b=2")]));
    await app.close(); // "crash" before commit of height 2
    expect((await stat(dbDir)).isDirectory()).toBe(true);

    const reopened = await createKvStoreApp({ dbDir, log });
    expect(await reopened.info()).toMatchObject({
      lastBlockHeight: 1,
      lastBlockAppHash: kvStoreAppHash(2),
      data: '{"size":2}',
    });
    expect((await getValue(reopened, "a")).value).toBe("1");
    expect((await getValue(reopened, "b")).log).toBe("does not exist");
    // The validator set came back: removing the genesis validator is allowed, the last one is not.
    const res = await reopened.finalizeBlock(finalizeRequest(2, [tx("b=2"), valTx(1, 0n), valTx(2, 0n)]));
    expect(res.txResults.map((r) => r.code)).toEqual([0, 0, 2]);
    expect(res.appHash).toEqual(kvStoreAppHash(4));
    const commit = await reopened.commit();
    expect(commit.retainHeight).toBe(0);
    await reopened.close();

    const third = await createKvStoreApp({ dbDir, log, retainBlocks: 2 });
    expect((await third.info()).lastBlockHeight).toBe(2);
    expect((await getValue(third, "b")).value).toBe("2");
    await third.finalizeBlock(finalizeRequest(3, []));
    expect((await third.commit()).retainHeight).toBe(2);
    await third.close();
  });
});
