import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResponseFinalizeBlock } from "cosmjs-types/tendermint/abci/types";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { COMETBFT_VERSION } from "../../config/index.js";
import { type ConsensusParams, defaultConsensusParams, KEY_TYPES } from "../../types/index.js";
import { silentLogger } from "../../util/logger.js";
import type { AbciConnectionError } from "./errors.js";
import { AbciResponseError } from "./errors.js";
import { SocketApplication } from "./socketApplication.js";
import { FakeAbciServer } from "./testing.js";

const KEY = new Uint8Array(32).fill(7);
const CONN = { query: 0, snapshot: 1, mempool: 2, consensus: 3 } as const;

let dir: string;
let fake: FakeAbciServer;
let app: SocketApplication;
let lost: AbciConnectionError[];
const current: ConsensusParams = { ...defaultConsensusParams(), version: { app: 1n } };

const emptyCommit = { round: 0, votes: [] };
const blockFields = {
  txs: [Uint8Array.of(1, 2)],
  misbehavior: [
    {
      type: "duplicateVote" as const,
      validatorAddress: new Uint8Array(20).fill(1),
      validatorPower: 10n,
      height: 3,
      time: 1_700_000_000_000_000_000n,
      totalVotingPower: 30n,
    },
  ],
  hash: new Uint8Array(32).fill(2),
  height: 7,
  time: 1_700_000_001_500_000_000n,
  nextValidatorsHash: new Uint8Array(32).fill(3),
  proposerAddress: new Uint8Array(20).fill(4),
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cometh-abci-app-"));
  fake = new FakeAbciServer();
  const path = join(dir, "app.sock");
  await fake.listen(path);
  lost = [];
  app = await SocketApplication.connect({
    address: { protocol: "unix", path },
    log: silentLogger(),
    onLost: (err) => lost.push(err),
    consensusParamsAt: () => current,
  });
});

afterEach(async () => {
  await app.close();
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe("SocketApplication", () => {
  test("default: four connections, opened as CometBFT opens them, each carrying its own requests", async () => {
    fake.answer = (_req, kind) => {
      if (kind === "info") {
        return {
          info: {
            data: "fake",
            version: "1.2",
            appVersion: 3n,
            lastBlockHeight: 5n,
            lastBlockAppHash: Uint8Array.of(9),
          },
        };
      }
      if (kind === "query") {
        return {
          query: {
            code: 0,
            log: "exists",
            info: "",
            index: 0n,
            key: Uint8Array.of(1),
            value: Uint8Array.of(2),
            proofOps: { ops: [{ type: "t", key: Uint8Array.of(3), data: Uint8Array.of(4) }] },
            height: 5n,
            codespace: "",
          },
        };
      }
      if (kind === "commit") return { commit: { retainHeight: 2n } };
      return undefined;
    };
    expect(await app.info()).toEqual({
      data: "fake",
      version: "1.2",
      appVersion: 3n,
      lastBlockHeight: 5,
      lastBlockAppHash: Uint8Array.of(9),
    });
    const q = await app.query({ data: Uint8Array.of(1), path: "/store", height: 4, prove: true });
    expect(q).toMatchObject({ log: "exists", height: 5, proofOps: [{ type: "t" }] });
    expect((await app.checkTx({ tx: Uint8Array.of(5), type: 1 })).code).toBe(5);
    expect(await app.commit()).toEqual({ retainHeight: 2 });

    expect(fake.received[CONN.query]).toEqual(["info", "flush", "query", "flush"]);
    expect(fake.received[CONN.snapshot]).toEqual([]);
    expect(fake.received[CONN.mempool]).toEqual(["checkTx", "flush"]);
    expect(fake.received[CONN.consensus]).toEqual(["commit", "flush"]);
    // What Info and Query carried.
    expect(fake.requests[CONN.query]?.[0]?.info).toEqual({
      version: COMETBFT_VERSION,
      blockVersion: 11n,
      p2pVersion: 8n,
      abciVersion: "2.0.0",
    });
    expect(fake.requests[CONN.query]?.[2]?.query).toEqual({
      data: Uint8Array.of(1),
      path: "/store",
      height: 4n,
      prove: true,
    });
    expect(fake.requests[CONN.mempool]?.[0]?.checkTx?.type).toBe(1);
  });

  test("behavior: InitChain's params apply over the genesis params; its validators are decoded", async () => {
    fake.answer = (_req, kind) =>
      kind === "initChain"
        ? {
            initChain: {
              consensusParams: { block: { maxBytes: 1000n, maxGas: 50n } },
              validators: [{ pubKey: { ed25519: KEY }, power: 10n }],
              appHash: Uint8Array.of(1),
            },
          }
        : undefined;
    const genesis = defaultConsensusParams();
    const res = await app.initChain({
      time: 1_700_000_000_000_000_000n,
      chainId: "c",
      consensusParams: genesis,
      validators: [{ pubKey: { type: KEY_TYPES.ed25519, bytes: KEY }, power: 5n }],
      appStateBytes: Uint8Array.of(123),
      initialHeight: 1,
    });
    expect(res.consensusParams).toEqual({ ...genesis, block: { maxBytes: 1000n, maxGas: 50n } });
    expect(res.validators).toEqual([{ pubKey: { type: KEY_TYPES.ed25519, bytes: KEY }, power: 10n }]);
    const sent = fake.requests[CONN.consensus]?.[0]?.initChain;
    expect(sent).toMatchObject({
      chainId: "c",
      time: { seconds: 1_700_000_000n, nanos: 0 },
      initialHeight: 1n,
      validators: [{ pubKey: { ed25519: KEY }, power: 5n }],
      appStateBytes: Uint8Array.of(123),
      consensusParams: { block: { maxBytes: 22020096n, maxGas: -1n }, abci: { voteExtensionsEnableHeight: 0n } },
    });
  });

  test("behavior: PrepareProposal, ProcessProposal and FinalizeBlock carry the block; FinalizeBlock's answer is decoded", async () => {
    const finalize: ResponseFinalizeBlock = {
      events: [{ type: "block", attributes: [{ key: "k", value: "v", index: true }] }],
      txResults: [
        {
          code: 0,
          data: Uint8Array.of(8),
          log: "ok",
          info: "",
          gasWanted: 2n,
          gasUsed: 1n,
          events: [],
          codespace: "",
        },
      ],
      validatorUpdates: [{ pubKey: { ed25519: KEY }, power: 0n }],
      consensusParamUpdates: { version: { app: 2n } },
      appHash: Uint8Array.of(4, 2),
    };
    fake.answer = (_req, kind) => {
      if (kind === "prepareProposal") return { prepareProposal: { txs: [Uint8Array.of(9)] } };
      if (kind === "processProposal") return { processProposal: { status: 2 } };
      if (kind === "finalizeBlock") return { finalizeBlock: finalize };
      return undefined;
    };
    const commit = {
      round: 1,
      votes: [{ validatorAddress: new Uint8Array(20).fill(5), power: 10n, blockIdFlag: 2 as const }],
    };
    const { hash: _hash, ...prepareFields } = blockFields;
    expect(await app.prepareProposal({ ...prepareFields, maxTxBytes: 1000, localLastCommit: commit })).toEqual({
      txs: [Uint8Array.of(9)],
    });
    expect(await app.processProposal({ ...blockFields, proposedLastCommit: commit })).toBe("reject");
    const res = await app.finalizeBlock({
      ...blockFields,
      decidedLastCommit: commit,
      block: undefined as never,
    });
    expect(res).toEqual({
      events: [{ type: "block", attributes: [{ key: "k", value: "v", index: true }] }],
      txResults: [
        { code: 0, data: Uint8Array.of(8), log: "ok", info: "", gasWanted: 2n, gasUsed: 1n, events: [], codespace: "" },
      ],
      validatorUpdates: [{ pubKey: { type: KEY_TYPES.ed25519, bytes: KEY }, power: 0n }],
      // The app's partial update, completed with the params in force.
      consensusParamUpdates: { ...current, version: { app: 2n } },
      appHash: Uint8Array.of(4, 2),
    });
    const reqs = fake.requests[CONN.consensus] ?? [];
    expect(reqs[0]?.prepareProposal).toMatchObject({
      maxTxBytes: 1000n,
      height: 7n,
      localLastCommit: {
        round: 1,
        votes: [{ validator: { power: 10n }, blockIdFlag: 2, voteExtension: new Uint8Array(0) }],
      },
      misbehavior: [{ type: 1, height: 3n, totalVotingPower: 30n, validator: { power: 10n } }],
    });
    expect(reqs[2]?.processProposal).toMatchObject({ hash: blockFields.hash, height: 7n });
    expect(reqs[4]?.finalizeBlock).toMatchObject({
      txs: [Uint8Array.of(1, 2)],
      height: 7n,
      time: { seconds: 1_700_000_001n, nanos: 500_000_000 },
      decidedLastCommit: { round: 1, votes: [{ validator: { power: 10n }, blockIdFlag: 2 }] },
    });
  });

  test("error: ProcessProposal status UNKNOWN is refused", async () => {
    fake.answer = (_req, kind) => (kind === "processProposal" ? { processProposal: { status: 0 } } : undefined);
    await expect(app.processProposal({ ...blockFields, proposedLastCommit: emptyCommit })).rejects.toThrow(
      AbciResponseError,
    );
    // An answer the protocol allows: the connection stays up.
    expect(lost).toEqual([]);
  });

  test("error: losing any connection is reported once, naming it", async () => {
    fake.sockets[CONN.mempool]?.destroy();
    await expect(app.checkTx({ tx: Uint8Array.of(1), type: 0 })).rejects.toThrow(/ABCI mempool connection/);
    // The others are closed at once (the node stops), quietly: no second report.
    await expect(app.info()).rejects.toThrow(/ABCI query connection: the connection is closed/);
    expect(lost.map((e) => e.connection)).toEqual(["mempool"]);
    expect(app.connection("consensus").error).toBeUndefined();
  });
});
