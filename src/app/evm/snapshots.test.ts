import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import type { Snapshot } from "../../types/index.js";
import type { EvmApplication } from "./evmApplication.js";
import {
  deployErc20,
  erc20BalanceSlot,
  erc20Interface,
  hexBytes,
  runBlock,
  signTestTx,
  TestChains,
} from "./testing.js";

const chains = new TestChains();
afterEach(() => chains.closeAll());

const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/** Small chunks, so a snapshot of the test chain has several. */
const SNAPSHOTS = { interval: 3, keepRecent: 2, chunkBytes: 2048 };

async function chunksOf(app: EvmApplication, s: Snapshot): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (let i = 0; i < s.chunks; i++)
    out.push(await app.loadSnapshotChunk({ height: s.height, format: s.format, chunk: i }));
  return out;
}

describe("EVM app snapshots", () => {
  test("behavior: a snapshot taken at the interval restores into an empty app that then runs the chain on", async () => {
    const wallet = new Wallet(KEY);
    const source = await chains.open({ snapshots: SNAPSHOTS });
    const token = await deployErc20(source, wallet, 0);
    const to = hexBytes("a1".padStart(40, "0"));
    const transfer = erc20Interface.encodeFunctionData("transfer", [`0x${"a1".padStart(40, "0")}`, 7n]);
    await runBlock(source, [await signTestTx(wallet, { nonce: 1, to: token, data: transfer, gasLimit: 100_000n })]);
    await runBlock(source, [await signTestTx(wallet, { nonce: 2, to, value: 5n, gasLimit: 21_000n })]);
    expect(source.height).toBe(3);
    const [snapshot] = await source.app.listSnapshots();
    if (snapshot === undefined) throw new Error("no snapshot at height 3");
    expect(snapshot).toMatchObject({ height: 3, format: 1 });
    expect(snapshot.chunks).toBeGreaterThan(1);
    const appHash = (await source.app.info()).lastBlockAppHash;

    const target = await chains.open({ snapshots: SNAPSHOTS });
    expect(await target.app.offerSnapshot({ snapshot, appHash })).toBe("accept");
    const chunks = await chunksOf(source.app, snapshot);
    for (const [index, chunk] of chunks.entries()) {
      expect(await target.app.applySnapshotChunk({ index, chunk, sender: "peer" })).toEqual({
        result: "accept",
        refetchChunks: [],
        rejectSenders: [],
      });
    }
    const info = await target.app.info();
    expect(info.lastBlockHeight).toBe(3);
    expect(info.lastBlockAppHash).toEqual(appHash);
    expect(target.app.reader.balance(to)).toBe(5n);
    expect(target.app.reader.storageAt(token, erc20BalanceSlot(to), 3)).toEqual(
      source.app.reader.storageAt(token, erc20BalanceSlot(to), 3),
    );
    expect(target.app.reader.nonce(hexBytes(wallet.address))).toBe(3n);

    // Both run block 4 and agree on its app hash.
    target.height = 3;
    target.timeNs = source.timeNs;
    const next = await signTestTx(wallet, { nonce: 3, to: token, data: transfer, gasLimit: 100_000n });
    const a = await runBlock(source, [next]);
    const b = await runBlock(target, [next]);
    expect(b.response.appHash).toEqual(a.response.appHash);
    expect(target.app.reader.storageAt(token, erc20BalanceSlot(to), 3)).toEqual(
      source.app.reader.storageAt(token, erc20BalanceSlot(to), 3),
    );
  });

  test("error: a damaged chunk is fetched again and its sender rejected; a wrong app hash is refused", async () => {
    const wallet = new Wallet(KEY);
    const source = await chains.open({ snapshots: SNAPSHOTS });
    await deployErc20(source, wallet, 0);
    await runBlock(source, []);
    await runBlock(source, []);
    const [snapshot] = await source.app.listSnapshots();
    if (snapshot === undefined) throw new Error("no snapshot at height 3");
    const appHash = (await source.app.info()).lastBlockAppHash;
    const target = await chains.open({ snapshots: SNAPSHOTS });
    expect(await target.app.offerSnapshot({ snapshot, appHash: new Uint8Array(32) })).toBe("reject");
    expect(await target.app.offerSnapshot({ snapshot: { ...snapshot, format: 2 }, appHash })).toBe("rejectFormat");
    expect(await target.app.offerSnapshot({ snapshot, appHash })).toBe("accept");
    const [first, ...rest] = await chunksOf(source.app, snapshot);
    const bad = Uint8Array.from(first as Uint8Array);
    bad[0] = (bad[0] as number) ^ 1;
    expect(await target.app.applySnapshotChunk({ index: 0, chunk: bad, sender: "liar" })).toEqual({
      result: "retry",
      refetchChunks: [0],
      rejectSenders: ["liar"],
    });
    for (const [index, chunk] of [first as Uint8Array, ...rest].entries()) {
      expect((await target.app.applySnapshotChunk({ index, chunk, sender: "honest" })).result).toBe("accept");
    }
    expect((await target.app.info()).lastBlockAppHash).toEqual(appHash);
  });
});
