import { afterEach, describe, expect, test } from "vitest";
import { CHECK_TX_TYPE } from "../../types/index.js";
import { type DevEntry, decodeDevEntry, encodeDevEntry, isDevEntry } from "./devEntries.js";
import { CHECK_TX_CODES } from "./errors.js";
import { fakeBlockHash, hexBytes, runBlock, TestChains } from "./testing.js";

/** Dev entries: the codec, and how a dev chain and any other chain treat them in each ABCI step. */

const chains = new TestChains();
afterEach(() => chains.closeAll());

const DEV_GENESIS = { evm: { dev_chain: true } };
const ADDR = hexBytes("00000000000000000000000000000000000000a1");
const DEV0 = hexBytes("f39fd6e51aad88f6f4ce6ab8827279cfffb92266");

describe("codec", () => {
  test("args: every op round-trips; equal cheats encode to different bytes", () => {
    const entries: DevEntry[] = [
      { op: "setBalance", address: ADDR, value: 10n ** 30n },
      { op: "setNonce", address: ADDR, value: 7n },
      { op: "setCode", address: ADDR, code: hexBytes("6001") },
      { op: "setStorageAt", address: ADDR, slot: new Uint8Array(32).fill(1), value: new Uint8Array(32).fill(2) },
      { op: "setCoinbase", address: ADDR },
      { op: "setNextBaseFee", value: 5n },
      { op: "setMinGasPrice", value: 6n },
      { op: "setBlockGasLimit", value: 30_000_000n },
      {
        op: "loadState",
        accounts: [{ address: ADDR, nonce: 1n, balance: 2n, code: hexBytes("00"), storage: [] }],
      },
      {
        op: "send",
        from: ADDR,
        type: 2,
        nonce: 0n,
        gasLimit: 21000n,
        to: DEV0,
        value: 1n,
        data: new Uint8Array(0),
        maxFeePerGas: 10n,
        maxPriorityFeePerGas: 1n,
        accessList: [],
      },
    ];
    for (const e of entries) {
      const raw = encodeDevEntry(e);
      expect(isDevEntry(raw)).toBe(true);
      expect(decodeDevEntry(raw)).toEqual(e);
    }
    const a = encodeDevEntry({ op: "setBalance", address: ADDR, value: 1n });
    const b = encodeDevEntry({ op: "setBalance", address: ADDR, value: 1n });
    expect(Buffer.compare(a, b)).not.toBe(0);
  });

  test("errors: malformed entries throw InvalidEthTxError (txDecode) naming the problem", () => {
    const enc = (s: string) => new TextEncoder().encode(`cometh-dev:${s}`);
    for (const [body, why] of [
      ["not json", /not JSON/],
      ["[]", /not an object/],
      ['{"op":"nope"}', /unknown op/],
      ['{"op":"setBalance","address":"0x12","value":"0x1"}', /address must be 20 bytes/],
      ['{"op":"setBalance","address":"0x00000000000000000000000000000000000000a1","value":"-1"}', /0x quantity/],
      [
        '{"op":"setNonce","address":"0x00000000000000000000000000000000000000a1","value":"0x10000000000000000"}',
        /too large/,
      ],
    ] as const) {
      expect(() => decodeDevEntry(enc(body))).toThrow(why);
      try {
        decodeDevEntry(enc(body));
      } catch (err) {
        expect((err as { code: number }).code).toBe(CHECK_TX_CODES.txDecode);
      }
    }
    expect(isDevEntry(hexBytes("02f8"))).toBe(false);
  });
});

describe("a chain that is not a dev chain", () => {
  test("errors: CheckTx refuses a dev entry (code 2) and ProcessProposal rejects a block carrying one", async () => {
    const chain = await chains.open();
    const raw = encodeDevEntry({ op: "setBalance", address: ADDR, value: 1n });
    const res = await chain.app.checkTx({ tx: raw, type: CHECK_TX_TYPE.new });
    expect(res.code).toBe(CHECK_TX_CODES.txDecode);
    expect(res.log).toMatch(/only by a dev chain/);
    const send = encodeDevEntry({
      op: "send",
      from: ADDR,
      type: 0,
      nonce: 0n,
      gasLimit: 21000n,
      to: DEV0,
      value: 0n,
      data: new Uint8Array(0),
      gasPrice: 10n ** 10n,
      accessList: [],
    });
    expect((await chain.app.checkTx({ tx: send, type: CHECK_TX_TYPE.new })).code).toBe(CHECK_TX_CODES.txDecode);
    const verdict = await chain.app.processProposal({
      misbehavior: [],
      height: 1,
      time: chain.timeNs,
      nextValidatorsHash: new Uint8Array(32),
      proposerAddress: chain.proposer,
      txs: [raw],
      proposedLastCommit: { round: 0, votes: [] },
      hash: fakeBlockHash(1),
    });
    expect(verdict).toBe("reject");
    // PrepareProposal leaves it out too.
    const p = await chain.app.prepareProposal({
      misbehavior: [],
      height: 1,
      time: chain.timeNs,
      nextValidatorsHash: new Uint8Array(32),
      proposerAddress: chain.proposer,
      maxTxBytes: 1_000_000,
      txs: [raw],
      localLastCommit: { round: 0, votes: [] },
    });
    expect(p.txs).toEqual([]);
  });
});

describe("a dev chain", () => {
  test("behavior: cheats change state in their block; the app hash commits to them; a malformed entry is rejected", async () => {
    const chain = await chains.open({ appState: DEV_GENESIS, pruning: "archive" });
    const before = chain.app.db.meta()?.appHash;
    const cheat = encodeDevEntry({ op: "setBalance", address: ADDR, value: 12345n });
    expect((await chain.app.checkTx({ tx: cheat, type: CHECK_TX_TYPE.new })).code).toBe(0);
    const { response } = await runBlock(chain, [cheat]);
    expect(response.txResults[0]?.code).toBe(0);
    expect(response.txResults[0]?.events[0]?.type).toBe("dev_cheat");
    expect(chain.app.reader.balance(ADDR)).toBe(12345n);
    expect(Buffer.compare(response.appHash, before as Uint8Array)).not.toBe(0);
    const bad = new TextEncoder().encode('cometh-dev:{"op":"setBalance"}');
    expect((await chain.app.checkTx({ tx: bad, type: CHECK_TX_TYPE.new })).code).toBe(CHECK_TX_CODES.txDecode);
    await expect(runBlock(chain, [bad], { prepare: false })).rejects.toThrow(/rejected/);
  });

  test("behavior: each height's dev record holds the settings in force then; rollbackTo brings them back", async () => {
    const chain = await chains.open({ appState: DEV_GENESIS, pruning: "archive" });
    await runBlock(chain, []);
    const start = chain.height;
    const original = chain.app.settings();
    await runBlock(chain, [encodeDevEntry({ op: "setMinGasPrice", value: 6n })]);
    const priced = chain.app.settings();
    await runBlock(chain, []);
    await runBlock(chain, [encodeDevEntry({ op: "setCoinbase", address: ADDR })]);
    await runBlock(chain, []);
    const withCoinbase = chain.app.settings();
    expect(withCoinbase?.coinbase).toEqual(ADDR);
    expect(priced?.feeMarket.minGasPrice).not.toBe(original?.feeMarket.minGasPrice);
    // Back two heights: past the empty block, before the coinbase cheat.
    await chain.app.rollbackTo(start + 2);
    chain.height = start + 2;
    expect(chain.app.settings()).toEqual(priced);
    // A cheat after a rollback is recorded too (the settings object is a new one each time).
    await runBlock(chain, [encodeDevEntry({ op: "setCoinbase", address: ADDR })]);
    await runBlock(chain, []);
    await chain.app.rollbackTo(start + 3);
    chain.height = start + 3;
    expect(chain.app.settings()).toEqual(withCoinbase);
    await chain.app.rollbackTo(start);
    chain.height = start;
    expect(chain.app.settings()).toEqual(original);
  });

  test("behavior: an impersonated send from a contract runs with a receipt; rollbackTo brings the state back", async () => {
    const chain = await chains.open({ appState: DEV_GENESIS, pruning: "archive" });
    const contract = hexBytes("000000000000000000000000000000000000c0de");
    await runBlock(chain, [
      encodeDevEntry({ op: "setCode", address: contract, code: hexBytes("00") }),
      encodeDevEntry({ op: "setBalance", address: contract, value: 10n ** 18n }),
    ]);
    const height = chain.height;
    const send = encodeDevEntry({
      op: "send",
      from: contract,
      type: 2,
      nonce: 0n,
      gasLimit: 21000n,
      to: ADDR,
      value: 99n,
      data: new Uint8Array(0),
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 0n,
      accessList: [],
    });
    expect((await chain.app.checkTx({ tx: send, type: CHECK_TX_TYPE.new })).code).toBe(0);
    const { response } = await runBlock(chain, [send]);
    expect(response.txResults[0]?.code).toBe(0);
    const receipts = chain.app.reader.receipts(chain.height);
    expect(receipts).toHaveLength(1);
    expect(Buffer.from(receipts[0]?.from ?? []).toString("hex")).toBe(Buffer.from(contract).toString("hex"));
    expect(chain.app.reader.balance(ADDR)).toBe(99n);
    const hash = receipts[0]?.txHash as Uint8Array;
    expect(chain.app.reader.transaction(hash)?.from).toEqual(contract);

    await chain.app.rollbackTo(height);
    chain.height = height;
    expect(chain.app.reader.balance(ADDR)).toBe(0n);
    expect(chain.app.reader.nonce(contract)).toBe(0n);
    expect(chain.app.reader.receiptByHash(hash)).toBeUndefined();
    expect(chain.app.reader.block(height + 1)).toBeUndefined();
    // The same entry runs again at the reused height.
    await runBlock(chain, [send]);
    expect(chain.app.reader.balance(ADDR)).toBe(99n);
    expect(chain.app.reader.txLocation(hash)?.height).toBe(height + 1);
  });
});
