import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  type BlockId,
  type Proposal,
  proposalSignBytes,
  SIGNED_MSG_TYPE,
  type Vote,
  verifySignature,
  voteExtensionSignBytes,
  voteSignBytes,
} from "../types/index.js";
import { bytesToHexUpper, EMPTY_BYTES } from "../util/bytes.js";
import { DoubleSignError, InvalidSignRequestError, PrivValidatorFileError } from "./errors.js";
import { FilePV } from "./filePV.js";

const CHAIN = "test-chain";
const T0 = 1_700_000_000_123_456_789n;

let dir: string;
let keyPath: string;
let statePath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cometh-privval-"));
  mkdirSync(join(dir, "config"));
  mkdirSync(join(dir, "data"));
  keyPath = join(dir, "config", "priv_validator_key.json");
  statePath = join(dir, "data", "priv_validator_state.json");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function blockId(fill: number): BlockId {
  return { hash: new Uint8Array(32).fill(fill), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(fill + 1) } };
}

const NIL: BlockId = { hash: EMPTY_BYTES, partSetHeader: { total: 0, hash: EMPTY_BYTES } };

function vote(pv: FilePV, o: Partial<Vote> = {}): Vote {
  return {
    type: SIGNED_MSG_TYPE.prevote,
    height: 1,
    round: 0,
    blockId: blockId(1),
    timestamp: T0,
    validatorAddress: pv.address(),
    validatorIndex: 0,
    signature: EMPTY_BYTES,
    extension: EMPTY_BYTES,
    extensionSignature: EMPTY_BYTES,
    ...o,
  };
}

function proposal(o: Partial<Proposal> = {}): Proposal {
  return {
    type: 32,
    height: 1,
    round: 0,
    polRound: -1,
    blockId: blockId(1),
    timestamp: T0,
    signature: EMPTY_BYTES,
    ...o,
  };
}

function stateOnDisk(): Record<string, unknown> {
  return JSON.parse(readFileSync(statePath, "utf8")) as Record<string, unknown>;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

describe("files", () => {
  test("default: loadOrGenerate writes the key and an empty state, mode 0600", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const key = JSON.parse(readFileSync(keyPath, "utf8")) as Record<string, { type: string; value: string }>;
    expect(Object.keys(key)).toEqual(["address", "pub_key", "priv_key"]);
    expect(key.address).toBe(bytesToHexUpper(pv.address()));
    expect(key.pub_key?.type).toBe("tendermint/PubKeyEd25519");
    expect(Buffer.from(key.pub_key?.value ?? "", "base64")).toEqual(Buffer.from(pv.pubKey().bytes));
    expect(key.priv_key?.type).toBe("tendermint/PrivKeyEd25519");
    expect(Buffer.from(key.priv_key?.value ?? "", "base64").length).toBe(64);
    expect(readFileSync(statePath, "utf8")).toBe('{\n  "height": "0",\n  "round": 0,\n  "step": 0\n}\n');
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(statSync(statePath).mode & 0o777).toBe(0o600);
    expect(pv.lastSignState()).toEqual({ height: 0, round: 0, step: 0 });
  });

  test("behavior: loadOrGenerate keeps an existing key", async () => {
    const a = await FilePV.loadOrGenerate(keyPath, statePath);
    const b = await FilePV.loadOrGenerate(keyPath, statePath);
    expect(b.pubKey()).toEqual(a.pubKey());
    expect(b.address()).toEqual(a.address());
  });

  test("error: key present but state file missing", async () => {
    await FilePV.loadOrGenerate(keyPath, statePath);
    rmSync(statePath);
    const err = await rejection(FilePV.loadOrGenerate(keyPath, statePath));
    expect(err).toBeInstanceOf(PrivValidatorFileError);
    expect(err.message.replace(dir, "<dir>")).toMatchInlineSnapshot(
      `"<dir>/data/priv_validator_state.json: private validator state file does not exist. Restore it from a backup, or run "cometh unsafe-reset-all" to start signing from height 0"`,
    );
  });

  test("error: malformed state and key files", async () => {
    await FilePV.loadOrGenerate(keyPath, statePath);
    writeFileSync(statePath, '{"height":"x","round":0,"step":0}');
    expect((await rejection(FilePV.load(keyPath, statePath))).message.replace(dir, "<dir>")).toMatchInlineSnapshot(
      `"<dir>/data/priv_validator_state.json: height must be a non-negative integer string such as "0", got "x""`,
    );
    writeFileSync(statePath, '{"height":"1","round":0,"step":7}');
    expect((await rejection(FilePV.load(keyPath, statePath))).message.replace(dir, "<dir>")).toMatchInlineSnapshot(
      `"<dir>/data/priv_validator_state.json: step must be 0, 1 (propose), 2 (prevote) or 3 (precommit), got 7"`,
    );
    writeFileSync(keyPath, '{"priv_key":{"type":"tendermint/PrivKeySecp256k1","value":"AA=="}}');
    expect((await rejection(FilePV.load(keyPath, statePath))).message.replace(dir, "<dir>")).toMatchInlineSnapshot(
      `"<dir>/config/priv_validator_key.json: priv_key: unsupported private key type "tendermint/PrivKeySecp256k1"; valid type: "tendermint/PrivKeyEd25519""`,
    );
  });

  test("error: a key whose public half does not match its seed", async () => {
    await FilePV.loadOrGenerate(keyPath, statePath);
    const key = JSON.parse(readFileSync(keyPath, "utf8")) as { priv_key: { value: string } };
    const bytes = Buffer.from(key.priv_key.value, "base64");
    bytes[63] = (bytes[63] ?? 0) ^ 1;
    key.priv_key.value = bytes.toString("base64");
    writeFileSync(keyPath, JSON.stringify(key));
    const err = await rejection(FilePV.load(keyPath, statePath));
    expect(err).toBeInstanceOf(PrivValidatorFileError);
    expect(err.message).toMatch(/corrupt key/);
  });

  test("behavior: resetState forgets the sign state and keeps the key", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv, { height: 9 }));
    const reset = await FilePV.resetState(keyPath, statePath);
    expect(reset.pubKey()).toEqual(pv.pubKey());
    expect(reset.lastSignState()).toEqual({ height: 0, round: 0, step: 0 });
    expect(stateOnDisk()).toEqual({ height: "0", round: 0, step: 0 });
  });
});

describe("signing", () => {
  test("default: signs a prevote and persists height/round/step, signature and sign bytes", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const v = vote(pv);
    const signed = await pv.signVote(CHAIN, v);
    const bytes = voteSignBytes(CHAIN, v);
    expect(verifySignature(pv.pubKey(), bytes, signed.signature)).toBe(true);
    expect(signed.extensionSignature).toEqual(EMPTY_BYTES);
    expect(v.signature).toEqual(EMPTY_BYTES); // the input is not mutated
    expect(pv.lastSignState()).toEqual({ height: 1, round: 0, step: 2 });
    expect(stateOnDisk()).toEqual({
      height: "1",
      round: 0,
      step: 2,
      signature: Buffer.from(signed.signature).toString("base64"),
      signbytes: bytesToHexUpper(bytes),
    });
  });

  test("default: signs a proposal (step 1), then prevote and precommit at the same height/round", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const p = await pv.signProposal(CHAIN, proposal());
    expect(verifySignature(pv.pubKey(), proposalSignBytes(CHAIN, proposal()), p.signature)).toBe(true);
    expect(pv.lastSignState()).toEqual({ height: 1, round: 0, step: 1 });
    await pv.signVote(CHAIN, vote(pv));
    expect(pv.lastSignState()).toEqual({ height: 1, round: 0, step: 2 });
    await pv.signVote(CHAIN, vote(pv, { type: SIGNED_MSG_TYPE.precommit }));
    expect(pv.lastSignState()).toEqual({ height: 1, round: 0, step: 3 });
  });

  test("behavior: non-nil precommits get an extension signature; nil precommits do not", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const v = vote(pv, { type: SIGNED_MSG_TYPE.precommit, extension: new Uint8Array([1, 2, 3]) });
    const signed = await pv.signVote(CHAIN, v);
    expect(verifySignature(pv.pubKey(), voteExtensionSignBytes(CHAIN, v), signed.extensionSignature)).toBe(true);
    const nil = await pv.signVote(CHAIN, vote(pv, { type: SIGNED_MSG_TYPE.precommit, height: 2, blockId: NIL }));
    expect(nil.extensionSignature).toEqual(EMPTY_BYTES);
  });

  test("args: signExtension false makes no extension signature; the vote's own signature is made", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const v = vote(pv, { type: SIGNED_MSG_TYPE.precommit });
    const signed = await pv.signVote(CHAIN, v, false);
    expect(signed.extensionSignature).toEqual(EMPTY_BYTES);
    expect(verifySignature(pv.pubKey(), voteSignBytes(CHAIN, v), signed.signature)).toBe(true);
  });

  test("behavior: a dev chain's rollback (not durable) writes the rolled-back state when the file is ahead of it", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    pv.setDurable(false);
    await pv.signVote(CHAIN, vote(pv, { height: 5 }));
    await pv.flushState();
    expect((await FilePV.loadOrGenerate(keyPath, statePath)).lastSignState().height).toBe(5);
    await pv.rollbackTo(2);
    expect(pv.lastSignState()).toEqual({ height: 2, round: 0, step: 3 });
    const reloaded = await FilePV.loadOrGenerate(keyPath, statePath);
    expect(reloaded.lastSignState()).toEqual({ height: 2, round: 0, step: 3 });
  });

  test("behavior: a dev chain's rollback (not durable) leaves a file at or below the rolled-back height as it is", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    pv.setDurable(false);
    await pv.signVote(CHAIN, vote(pv, { height: 5 }));
    const before = readFileSync(statePath, "utf8");
    await pv.rollbackTo(2);
    expect(pv.lastSignState()).toEqual({ height: 2, round: 0, step: 3 });
    expect(readFileSync(statePath, "utf8")).toBe(before);
    // The file (height 0) lets the rolled-back chain sign height 3 again after a restart.
    const reloaded = await FilePV.loadOrGenerate(keyPath, statePath);
    expect(reloaded.lastSignState().height).toBe(0);
    await reloaded.signVote(CHAIN, vote(reloaded, { height: 3 }));
  });

  test("error: an extension on a prevote is refused", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const err = await rejection(pv.signVote(CHAIN, vote(pv, { extension: new Uint8Array([1]) })));
    expect(err).toBeInstanceOf(InvalidSignRequestError);
    expect(err.message).toMatchInlineSnapshot(
      `"unexpected vote extension - extensions are only allowed in non-nil precommits"`,
    );
    expect(pv.lastSignState()).toEqual({ height: 0, round: 0, step: 0 });
  });

  test("behavior: the same vote again returns the saved signature", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const a = await pv.signVote(CHAIN, vote(pv));
    const b = await pv.signVote(CHAIN, vote(pv));
    expect(b.signature).toEqual(a.signature);
  });

  test("behavior: a vote differing only in timestamp gets the saved signature and timestamp", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const a = await pv.signVote(CHAIN, vote(pv));
    const b = await pv.signVote(CHAIN, vote(pv, { timestamp: T0 + 5_000_000_000n }));
    expect(b.signature).toEqual(a.signature);
    expect(b.timestamp).toBe(T0);
    expect(verifySignature(pv.pubKey(), voteSignBytes(CHAIN, b), b.signature)).toBe(true);
  });

  test("behavior: a proposal differing only in timestamp gets the saved signature and timestamp", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const a = await pv.signProposal(CHAIN, proposal());
    const b = await pv.signProposal(CHAIN, proposal({ timestamp: T0 + 1n }));
    expect(b.signature).toEqual(a.signature);
    expect(b.timestamp).toBe(T0);
  });

  test("error: conflicting data at the same height/round/step", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv));
    const err = await rejection(pv.signVote(CHAIN, vote(pv, { blockId: blockId(7) })));
    expect(err).toBeInstanceOf(DoubleSignError);
    expect(err.message).toMatchInlineSnapshot(`"conflicting data"`);
    await pv.signProposal(CHAIN, proposal({ height: 2 }));
    const perr = await rejection(pv.signProposal(CHAIN, proposal({ height: 2, polRound: 0 })));
    expect(perr).toBeInstanceOf(DoubleSignError);
    expect(perr.message).toBe("conflicting data");
  });

  test("error: height regression", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv, { height: 5 }));
    const err = await rejection(pv.signVote(CHAIN, vote(pv, { height: 4 })));
    expect(err).toBeInstanceOf(DoubleSignError);
    expect(err.message).toMatchInlineSnapshot(`"height regression. Got 4, last height 5"`);
  });

  test("error: round regression", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv, { height: 5, round: 2 }));
    const err = await rejection(pv.signProposal(CHAIN, proposal({ height: 5, round: 1 })));
    expect(err).toBeInstanceOf(DoubleSignError);
    expect(err.message).toMatchInlineSnapshot(`"round regression at height 5. Got 1, last round 2"`);
  });

  test("error: step regression", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv, { height: 5, type: SIGNED_MSG_TYPE.precommit }));
    const err = await rejection(pv.signVote(CHAIN, vote(pv, { height: 5 })));
    expect(err).toBeInstanceOf(DoubleSignError);
    expect(err.message).toMatchInlineSnapshot(`"step regression at height 5 round 0. Got 2, last step 3"`);
    const perr = await rejection(pv.signProposal(CHAIN, proposal({ height: 5 })));
    expect(perr.message).toBe("step regression at height 5 round 0. Got 1, last step 3");
  });

  test("behavior: concurrent conflicting requests are serialised; exactly one is signed", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    const results = await Promise.allSettled([
      pv.signVote(CHAIN, vote(pv, { blockId: blockId(1) })),
      pv.signVote(CHAIN, vote(pv, { blockId: blockId(2) })),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe("conflicting data");
  });
});

describe("crash safety", () => {
  test("behavior: the state is on disk before the signature is returned; a restarted signer re-signs consistently", async () => {
    const a = await FilePV.loadOrGenerate(keyPath, statePath);
    const signed = await a.signVote(CHAIN, vote(a, { height: 3, type: SIGNED_MSG_TYPE.precommit }));
    // "Crash" right after the signature left: nothing else runs on `a`; a new process loads the files.
    expect(stateOnDisk()).toMatchObject({ height: "3", round: 0, step: 3 });
    const b = await FilePV.load(keyPath, statePath);
    expect(b.lastSignState()).toEqual({ height: 3, round: 0, step: 3 });
    const again = await b.signVote(
      CHAIN,
      vote(b, { height: 3, type: SIGNED_MSG_TYPE.precommit, timestamp: T0 + 999_000_000n }),
    );
    expect(again.signature).toEqual(signed.signature);
    expect(again.timestamp).toBe(T0);
    const err = await rejection(
      b.signVote(CHAIN, vote(b, { height: 3, type: SIGNED_MSG_TYPE.precommit, blockId: NIL })),
    );
    expect(err.message).toBe("conflicting data");
    expect((await rejection(b.signVote(CHAIN, vote(b, { height: 2 })))).message).toBe(
      "height regression. Got 2, last height 3",
    );
  });

  test("behavior: when the state cannot be persisted no signature is returned and nothing changes", async () => {
    const pv = await FilePV.loadOrGenerate(keyPath, statePath);
    await pv.signVote(CHAIN, vote(pv, { height: 1 }));
    rmSync(join(dir, "data"), { recursive: true });
    const err = await rejection(pv.signVote(CHAIN, vote(pv, { height: 2 })));
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(pv.lastSignState()).toEqual({ height: 1, round: 0, step: 2 });
    // Once the disk is back, signing proceeds from the last persisted state.
    mkdirSync(join(dir, "data"));
    const signed = await pv.signVote(CHAIN, vote(pv, { height: 2 }));
    expect(signed.signature.length).toBe(64);
    expect(stateOnDisk()).toMatchObject({ height: "2", step: 2 });
  });
});
