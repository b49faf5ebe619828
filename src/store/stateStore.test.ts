import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  addressFromPubKey,
  type ChainState,
  type ConsensusParams,
  defaultConsensusParams,
  type FinalizeBlockResponse,
  generateEd25519PrivKey,
  pubKeyFromPrivKey,
  type Validator,
  ValidatorSet,
  zeroBlockId,
} from "../types/index.js";
import { heightFromKey, STATE_KEY_PREFIX, TABLES } from "./keys.js";
import { type KvStore, openKvStore } from "./kvStore.js";
import { openMemoryKvStore } from "./memoryKvStore.js";
import { StateStore, VALIDATOR_SET_CHECKPOINT_INTERVAL } from "./stateStore.js";
import { makeTestChain } from "./testing/blockFixtures.js";

const dirs: string[] = [];
const stores: KvStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function openStore(dir?: string) {
  const d = dir ?? (await mkdtemp(join(tmpdir(), "cometh-statestore-")));
  if (dir === undefined) dirs.push(d);
  const kv = await openKvStore(d);
  stores.push(kv);
  return { kv, store: new StateStore(kv), dir: d };
}

function validator(seed: number, power: bigint): Validator {
  const pubKey = pubKeyFromPrivKey(generateEd25519PrivKey(new Uint8Array(32).fill(seed)));
  return { address: addressFromPubKey(pubKey), pubKey, votingPower: power, proposerPriority: 0n };
}

/** Plain view of a set: what must survive storage exactly. */
function view(vs: ValidatorSet | undefined) {
  if (vs === undefined) return undefined;
  return {
    validators: vs.validators.map((v) => ({
      address: Buffer.from(v.address).toString("hex"),
      power: v.votingPower,
      priority: v.proposerPriority,
    })),
    proposer: Buffer.from(vs.getProposer()?.address ?? []).toString("hex"),
  };
}

function genesisState(initialHeight = 1): ChainState {
  const validators = ValidatorSet.create([validator(1, 10n), validator(2, 20n), validator(3, 7n)]);
  return {
    chainId: "test-chain",
    initialHeight,
    lastBlockHeight: 0,
    lastBlockId: zeroBlockId(),
    lastBlockTime: 1_700_000_000_000_000_000n,
    nextValidators: validators.copyIncrementProposerPriority(1),
    validators,
    lastValidators: ValidatorSet.empty(),
    lastHeightValidatorsChanged: initialHeight,
    consensusParams: defaultConsensusParams(),
    lastHeightConsensusParamsChanged: initialHeight,
    lastResultsHash: new Uint8Array(),
    appHash: new Uint8Array([1, 2, 3]),
    appVersion: 1n,
  };
}

const SOME_BLOCK_ID = makeTestChain(1)[0]?.id ?? zeroBlockId();

/** CometBFT updateState, reduced to what the store keeps: the state after block `height`. */
function nextState(
  s: ChainState,
  height: number,
  changes: { pubKey: Validator["pubKey"]; power: bigint }[] = [],
  params?: ConsensusParams,
): ChainState {
  const nextValidators = s.nextValidators.copy();
  let lastHeightValidatorsChanged = s.lastHeightValidatorsChanged;
  if (changes.length > 0) {
    nextValidators.updateWithChangeSet(changes);
    lastHeightValidatorsChanged = height + 2;
  }
  nextValidators.incrementProposerPriority(1);
  return {
    ...s,
    lastBlockHeight: height,
    lastBlockId: SOME_BLOCK_ID,
    lastBlockTime: s.lastBlockTime + 1_000_000_000n,
    lastValidators: s.validators.copy(),
    validators: s.nextValidators.copy(),
    nextValidators,
    lastHeightValidatorsChanged,
    consensusParams: params ?? s.consensusParams,
    lastHeightConsensusParamsChanged: params === undefined ? s.lastHeightConsensusParamsChanged : height + 1,
    appHash: new Uint8Array([height % 256]),
  };
}

function expectSameState(a: ChainState | undefined, b: ChainState): void {
  expect(a).toBeDefined();
  if (a === undefined) return;
  const { validators, nextValidators, lastValidators, ...rest } = a;
  const { validators: v2, nextValidators: n2, lastValidators: l2, ...rest2 } = b;
  expect(rest).toEqual(rest2);
  expect(view(validators)).toEqual(view(v2));
  expect(view(nextValidators)).toEqual(view(n2));
  expect(view(lastValidators)).toEqual(view(l2));
}

describe("StateStore", () => {
  test("default: empty store", async () => {
    const { store } = await openStore();
    expect(store.load()).toBeUndefined();
    expect(store.loadValidators(1)).toBeUndefined();
    expect(store.loadConsensusParams(1)).toBeUndefined();
    expect(store.loadFinalizeBlockResponse(1)).toBeUndefined();
  });

  test("behavior: state round trip keeps exact proposer priorities, across reopen", async () => {
    const { kv, store, dir } = await openStore();
    let s = genesisState();
    await store.save(s);
    expectSameState(store.load(), s);
    for (let h = 1; h <= 3; h++) s = nextState(s, h);
    await store.save(s);
    const loaded = store.load();
    expectSameState(loaded, s);
    expect(loaded?.validators.validators.some((v) => v.proposerPriority !== 0n)).toBe(true);
    await kv.close();
    stores.splice(stores.indexOf(kv), 1);
    const again = await openStore(dir);
    expectSameState(again.store.load(), s);
    expect(view(again.store.loadValidators(5))).toEqual(view(s.nextValidators));
  });

  test("behavior: validators and params by height follow changes and replay priorities exactly", async () => {
    const { store } = await openStore();
    let s = genesisState();
    await store.save(s);
    const expectedVals = new Map<number, ReturnType<typeof view>>();
    const expectedParams = new Map<number, ConsensusParams>();
    expectedVals.set(1, view(s.validators));
    expectedVals.set(2, view(s.nextValidators));
    expectedParams.set(1, s.consensusParams);
    const newParams: ConsensusParams = {
      ...s.consensusParams,
      block: { maxBytes: 1_000_000n, maxGas: 5_000_000n },
    };
    for (let h = 1; h <= 30; h++) {
      const changes =
        h === 5
          ? [{ pubKey: validator(4, 0n).pubKey, power: 15n }]
          : h === 12
            ? [{ pubKey: validator(2, 0n).pubKey, power: 0n }]
            : [];
      s = nextState(s, h, changes, h === 8 ? newParams : undefined);
      await store.save(s);
      // After block h the state holds the sets of h+1 and h+2 and the params of h+1.
      expectedVals.set(h + 1, view(s.validators));
      expectedVals.set(h + 2, view(s.nextValidators));
      expectedParams.set(h + 1, s.consensusParams);
    }
    for (const [h, vals] of expectedVals) expect(view(store.loadValidators(h)), `validators ${h}`).toEqual(vals);
    for (const [h, p] of expectedParams) expect(store.loadConsensusParams(h), `params ${h}`).toEqual(p);
    expect(store.loadValidators(7)?.size()).toBe(4);
    expect(store.loadValidators(14)?.size()).toBe(3);
    expect(store.loadConsensusParams(9)?.block.maxGas).toBe(5_000_000n);
    expect(store.loadConsensusParams(8)?.block.maxGas).toBe(-1n);
    // Nothing beyond what the state knows.
    expect(store.loadValidators(33)).toBeUndefined();
    expect(store.loadConsensusParams(32)).toBeUndefined();
    expect(store.loadValidators(0)).toBeUndefined();
  });

  test("behavior: pruneStates keeps what retained heights and evidence still read", async () => {
    const kv = openMemoryKvStore();
    const store = new StateStore(kv);
    let s = genesisState();
    await store.save(s);
    const vals = new Map<number, ReturnType<typeof view>>();
    const newParams: ConsensusParams = { ...s.consensusParams, block: { maxBytes: 1_000_000n, maxGas: 5_000_000n } };
    const bare: FinalizeBlockResponse = { events: [], txResults: [], validatorUpdates: [], appHash: new Uint8Array() };
    for (let h = 1; h <= 40; h++) {
      const changes =
        h === 5
          ? [{ pubKey: validator(4, 0n).pubKey, power: 15n }]
          : h === 22
            ? [{ pubKey: validator(5, 0n).pubKey, power: 3n }]
            : [];
      s = nextState(s, h, changes, h === 8 ? newParams : undefined);
      await store.save(s);
      await store.saveFinalizeBlockResponse(h, bare);
      vals.set(h + 1, view(s.validators));
    }
    const heights = (prefix: number) =>
      [...kv.table(TABLES.state).range({ prefix: Uint8Array.of(prefix) })].map((e) => heightFromKey(e.key));
    expect(heights(STATE_KEY_PREFIX.validators)).toEqual([1, 7, 24]);
    expect(heights(STATE_KEY_PREFIX.consensusParams)).toEqual([1, 9]);
    // Blocks below 30 pruned; evidence may still come from height 10 on.
    await store.pruneStates(30, 10);
    expect(heights(STATE_KEY_PREFIX.validators)).toEqual([7, 24]);
    expect(heights(STATE_KEY_PREFIX.consensusParams)).toEqual([9]);
    expect(heights(STATE_KEY_PREFIX.finalizeBlock)).toEqual([30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40]);
    for (let h = 10; h <= 41; h++) expect(view(store.loadValidators(h)), `validators ${h}`).toEqual(vals.get(h));
    expect(store.loadConsensusParams(30)?.block.maxGas).toBe(5_000_000n);
    expect(store.loadFinalizeBlockResponse(29)).toBeUndefined();
    expect(store.loadFinalizeBlockResponse(30)).toEqual(bare);
    // Once the evidence age passes the change at 24, the entry at 7 goes too.
    await store.pruneStates(35, 35);
    expect(heights(STATE_KEY_PREFIX.validators)).toEqual([24]);
    expect(view(store.loadValidators(35))).toEqual(vals.get(35));
    expect(store.loadValidators(20)).toBeUndefined();
  });

  test("behavior: checkpoints bound the replay and give the same sets", async () => {
    const kv = openMemoryKvStore();
    const store = new StateStore(kv);
    let s = genesisState();
    await store.save(s);
    const n = VALIDATOR_SET_CHECKPOINT_INTERVAL + 5;
    const snapshots = new Map<number, ReturnType<typeof view>>();
    for (let h = 1; h <= n; h++) {
      s = nextState(s, h);
      await store.save(s);
      if (h % 250 === 0 || h > n - 3) snapshots.set(h + 2, view(s.nextValidators));
    }
    for (const [h, vals] of snapshots) expect(view(store.loadValidators(h)), `validators ${h}`).toEqual(vals);
    const stored = [...kv.table(TABLES.state).range({ prefix: Uint8Array.of(STATE_KEY_PREFIX.validators) })];
    expect(stored.map((e) => heightFromKey(e.key))).toEqual([1, VALIDATOR_SET_CHECKPOINT_INTERVAL]);
  });

  test("behavior: bootstrap stores last, current and next sets of a state-synced height", async () => {
    const { store } = await openStore();
    let s = genesisState();
    for (let h = 1; h <= 49; h++) s = nextState(s, h, h === 20 ? [{ pubKey: validator(5, 0n).pubKey, power: 3n }] : []);
    await store.bootstrap(s);
    expectSameState(store.load(), s);
    expect(view(store.loadValidators(49))).toEqual(view(s.lastValidators));
    expect(view(store.loadValidators(50))).toEqual(view(s.validators));
    expect(view(store.loadValidators(51))).toEqual(view(s.nextValidators));
    expect(store.loadValidators(48)).toBeUndefined();
    expect(store.loadConsensusParams(50)).toEqual(s.consensusParams);
    const s2 = nextState(s, 50);
    await store.save(s2);
    expect(view(store.loadValidators(52))).toEqual(view(s2.nextValidators));
  });

  test("behavior: genesis at an initial height above 1", async () => {
    const { store } = await openStore();
    const s = genesisState(100);
    await store.bootstrap(s);
    expect(view(store.loadValidators(100))).toEqual(view(s.validators));
    expect(view(store.loadValidators(101))).toEqual(view(s.nextValidators));
    expect(store.loadValidators(99)).toBeUndefined();
    const s1 = nextState(s, 100);
    await store.save(s1);
    expect(view(store.loadValidators(102))).toEqual(view(s1.nextValidators));
  });

  test("behavior: params and validator entries stay right across saves, a rollback and saves again", async () => {
    const d = await mkdtemp(join(tmpdir(), "cometh-statestore-"));
    dirs.push(d);
    const kv = await openKvStore(d);
    stores.push(kv);
    const store = new StateStore(kv, { keepHistory: true });
    const paramsHeights = () =>
      [...kv.table(TABLES.state).range({ prefix: Uint8Array.of(STATE_KEY_PREFIX.consensusParams) })].map((e) =>
        heightFromKey(e.key),
      );
    let s = genesisState();
    await store.save(s);
    const other: ConsensusParams = { ...s.consensusParams, block: { maxBytes: 1_000_000n, maxGas: 5_000_000n } };
    const states: ChainState[] = [s];
    for (let h = 1; h <= 10; h++) {
      // The same params again as a new object (equal bytes): no new entry.
      const params = h === 8 ? other : h === 3 ? { ...s.consensusParams } : undefined;
      s = nextState(s, h, [], params);
      await store.save(s);
      states.push(s);
    }
    expect(paramsHeights()).toEqual([1, 9]);
    expect(store.loadConsensusParams(11)?.block.maxGas).toBe(5_000_000n);
    // Back to height 5: the params entry of 9 goes; saving a changed params at 7 writes it at 7.
    await store.rollbackTo(5);
    expect(paramsHeights()).toEqual([1]);
    s = states[5] as ChainState;
    s = nextState(s, 6);
    await store.save(s);
    s = nextState(s, 7, [{ pubKey: validator(4, 0n).pubKey, power: 15n }], other);
    await store.save(s);
    for (let h = 8; h <= 9; h++) {
      s = nextState(s, h);
      await store.save(s);
    }
    expect(paramsHeights()).toEqual([1, 8]);
    expect(store.loadConsensusParams(7)?.block.maxGas).toBe(-1n);
    expect(store.loadConsensusParams(8)?.block.maxGas).toBe(5_000_000n);
    expect(store.loadConsensusParams(10)?.block.maxGas).toBe(5_000_000n);
    expect(store.loadValidators(8)?.size()).toBe(3);
    expect(store.loadValidators(9)?.size()).toBe(4);
    expect(view(store.loadValidators(11))).toEqual(view(s.nextValidators));
  });

  test("behavior: FinalizeBlock responses by height", async () => {
    const { store } = await openStore();
    const res: FinalizeBlockResponse = {
      events: [{ type: "block", attributes: [{ key: "k", value: "v", index: true }] }],
      txResults: [
        {
          code: 0,
          data: new Uint8Array([1]),
          log: "ok",
          info: "",
          gasWanted: 10n,
          gasUsed: 7n,
          events: [{ type: "tx", attributes: [{ key: "é", value: "", index: false }] }],
          codespace: "",
        },
        {
          code: 5,
          data: new Uint8Array(),
          log: "bad",
          info: "i",
          gasWanted: 0n,
          gasUsed: 0n,
          events: [],
          codespace: "sdk",
        },
      ],
      validatorUpdates: [{ pubKey: validator(9, 0n).pubKey, power: 0n }],
      consensusParamUpdates: defaultConsensusParams(),
      appHash: new Uint8Array(32).fill(7),
    };
    await store.saveFinalizeBlockResponse(7, res);
    expect(store.loadFinalizeBlockResponse(7)).toEqual(res);
    const bare: FinalizeBlockResponse = { events: [], txResults: [], validatorUpdates: [], appHash: new Uint8Array() };
    await store.saveFinalizeBlockResponse(8, bare);
    expect(store.loadFinalizeBlockResponse(8)).toEqual(bare);
    expect(store.loadFinalizeBlockResponse(9)).toBeUndefined();
  });
});
