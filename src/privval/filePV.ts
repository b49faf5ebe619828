import { existsSync, readFileSync } from "node:fs";
import {
  addressFromPubKey,
  generateEd25519PrivKey,
  isZeroBlockId,
  type PrivKey,
  type Proposal,
  type PubKey,
  proposalSignBytes,
  pubKeyFromPrivKey,
  rememberVoteSignBytes,
  SIGNED_MSG_TYPE,
  signBytes,
  type Vote,
  voteExtensionSignBytes,
  voteSignBytes,
} from "../types/index.js";
import { base64ToBytes, bytesEqual, bytesToBase64, bytesToHexUpper, EMPTY_BYTES, hexToBytes } from "../util/bytes.js";
import { writeFileAtomic, writeFileAtomicNoSync } from "./atomicFile.js";
import { DoubleSignError, InvalidSignRequestError, PrivValidatorFileError } from "./errors.js";
import { decodeEd25519PrivKeyJson, encodePrivKeyJson, encodePubKeyJson } from "./keyJson.js";
import { CANONICAL_TIMESTAMP_FIELD, timestampFromSignBytes } from "./signBytesTimestamp.js";

/** Steps of the last-sign state (privval/file.go): 0 = nothing signed yet. */
export const SIGN_STEP = { none: 0, propose: 1, prevote: 2, precommit: 3 } as const;
export type SignStep = (typeof SIGN_STEP)[keyof typeof SIGN_STEP];

/** The mutable part of the validator: what it signed last (priv_validator_state.json). */
export interface LastSignState {
  height: number;
  round: number;
  step: SignStep;
  /** Present once something has been signed. */
  signature?: Uint8Array;
  signBytes?: Uint8Array;
}

/** The immutable part (priv_validator_key.json). */
export interface PrivValidatorKey {
  address: Uint8Array;
  pubKey: PubKey;
  privKey: PrivKey;
}

/**
 * A validator signer whose keys and last-sign state live in files (CometBFT privval.FilePV). It refuses
 * to sign anything that could equivocate, and it persists the new last-sign state durably before a
 * signature leaves, so a crash right after signing cannot lead to a second, different signature.
 */
export class FilePV {
  readonly keyFilePath: string;
  readonly stateFilePath: string;
  readonly #key: PrivValidatorKey;
  #state: LastSignState;
  /**
   * False on a dev chain (setDurable): the last-sign state is kept in memory and written to the file
   * by flushState (at stop and at a rollback). A dev chain has one validator, so nothing can be double
   * signed: after a kill the file is older than the WAL, and the heights after it are simply signed.
   */
  #durable = true;
  /** The height of the last-sign state the file holds (a non-durable signer's file lags its memory). */
  #fileHeight: number;
  /** Serialises signing: the check, the sign and the persist of one request finish before the next starts. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(key: PrivValidatorKey, state: LastSignState, keyFilePath: string, stateFilePath: string) {
    this.#key = key;
    this.#state = state;
    this.#fileHeight = state.height;
    this.keyFilePath = keyFilePath;
    this.stateFilePath = stateFilePath;
  }

  /** Loads both files; generates and saves a new key and an empty state when the key file does not exist. */
  static async loadOrGenerate(keyPath: string, statePath: string): Promise<FilePV> {
    if (existsSync(keyPath)) return FilePV.load(keyPath, statePath);
    return FilePV.generate(keyPath, statePath);
  }

  /** Loads both files; a missing state file is an error (the double-sign history would be lost). */
  static async load(keyPath: string, statePath: string): Promise<FilePV> {
    const key = loadPrivValidatorKey(keyPath);
    const state = loadLastSignState(statePath);
    return new FilePV(key, state, keyPath, statePath);
  }

  /** Writes a new key (random unless privKey is given) and an empty last-sign state. */
  /** `durable: false`: the two files are written without fsyncs (a home deleted at exit). */
  static async generate(
    keyPath: string,
    statePath: string,
    privKey?: PrivKey,
    opts: { durable?: boolean } = {},
  ): Promise<FilePV> {
    const priv = privKey ?? generateEd25519PrivKey();
    const pub = pubKeyFromPrivKey(priv);
    const pv = new FilePV(
      { address: addressFromPubKey(pub), pubKey: pub, privKey: priv },
      emptyState(),
      keyPath,
      statePath,
    );
    if (opts.durable === false) {
      writeFileAtomicNoSync(keyPath, encodePrivValidatorKeyFile(pv.#key), 0o600);
      writeFileAtomicNoSync(statePath, encodeLastSignStateFile(pv.#state), 0o600);
    } else {
      await writeFileAtomic(keyPath, encodePrivValidatorKeyFile(pv.#key), 0o600);
      await writeFileAtomic(statePath, encodeLastSignStateFile(pv.#state), 0o600);
    }
    return pv;
  }

  /**
   * Unsafe: forgets what was signed (height 0) and keeps the key; generates a key when there is none
   * (cometbft unsafe-reset-all / unsafe-reset-priv-validator, resetFilePV).
   */
  static async resetState(keyPath: string, statePath: string): Promise<FilePV> {
    if (!existsSync(keyPath)) return FilePV.generate(keyPath, statePath);
    const key = loadPrivValidatorKey(keyPath);
    const pv = new FilePV(key, emptyState(), keyPath, statePath);
    await writeFileAtomic(statePath, encodeLastSignStateFile(pv.#state), 0o600);
    return pv;
  }

  /**
   * Unsafe, dev chains only (evm_revert, hardhat_reset): forgets what was signed above `height`, so
   * the heights a rollback removed can be signed again. The state becomes "precommitted at
   * `height`" (0: nothing signed), written after any signing in flight: durably; or (not `durable`: a
   * dev chain) kept in memory, and handed to the OS without a flush only when the file holds a later
   * height (written at an earlier stop), so a killed process never finds the file ahead of the
   * rolled-back chain. A rollback per evm_revert thus writes no file in the common case.
   */
  rollbackTo(height: number): Promise<void> {
    return this.#serialised(async () => {
      if (this.#state.height <= height) return;
      const next: LastSignState = height === 0 ? emptyState() : { height, round: 0, step: SIGN_STEP.precommit };
      if (this.#durable) await this.#writeState(next);
      else if (this.#fileHeight > height) this.#writeStateNoSync(next);
      this.#state = next;
    });
  }

  async #writeState(state: LastSignState): Promise<void> {
    await writeFileAtomic(this.stateFilePath, encodeLastSignStateFile(state), 0o600);
    this.#fileHeight = state.height;
  }

  #writeStateNoSync(state: LastSignState): void {
    writeFileAtomicNoSync(this.stateFilePath, encodeLastSignStateFile(state), 0o600);
    this.#fileHeight = state.height;
  }

  pubKey(): PubKey {
    return this.#key.pubKey;
  }

  address(): Uint8Array {
    return this.#key.address;
  }

  lastSignState(): { height: number; round: number; step: number } {
    return { height: this.#state.height, round: this.#state.round, step: this.#state.step };
  }

  /**
   * Signs a prevote or precommit. Re-signing the same height/round/step returns the saved signature
   * (and the saved timestamp when only the timestamp differs); anything else there is refused.
   * Non-nil precommits also get an extension signature, freshly made every time.
   */
  /**
   * `signExtension` false (CometBFT v1's SignVote flag): the caller drops extension signatures
   * (vote extensions are not enabled), so none is made. Absent: v0.38's FilePV, which always signs
   * the extension of a non-nil precommit (what a remote signer's requests get).
   */
  signVote(chainId: string, vote: Vote, signExtension = true): Promise<Vote> {
    return this.#serialised(() => this.#doSignVote(chainId, vote, signExtension));
  }

  signProposal(chainId: string, proposal: Proposal): Promise<Proposal> {
    return this.#serialised(() => this.#doSignProposal(chainId, proposal));
  }

  async #doSignVote(chainId: string, vote: Vote, signExtension: boolean): Promise<Vote> {
    const step = voteStep(vote);
    const sameHrs = this.#checkHrs(vote.height, vote.round, step);
    const bytes = voteSignBytes(chainId, vote);

    // Extensions are not deterministic, so their signature is always made afresh (privval/file.go).
    let extensionSignature = EMPTY_BYTES;
    if (vote.type === SIGNED_MSG_TYPE.precommit && !isZeroBlockId(vote.blockId)) {
      if (signExtension) extensionSignature = signBytes(this.#key.privKey, voteExtensionSignBytes(chainId, vote));
    } else if (vote.extension.length > 0) {
      throw new InvalidSignRequestError(
        "unexpected vote extension - extensions are only allowed in non-nil precommits",
      );
    }

    if (sameHrs) {
      const saved = this.#savedSignature();
      if (bytesEqual(bytes, saved.signBytes)) return { ...vote, signature: saved.signature, extensionSignature };
      const savedTime = timestampFromSignBytes(saved.signBytes, CANONICAL_TIMESTAMP_FIELD.vote);
      if (
        savedTime !== undefined &&
        bytesEqual(voteSignBytes(chainId, { ...vote, timestamp: savedTime }), saved.signBytes)
      ) {
        return { ...vote, timestamp: savedTime, signature: saved.signature, extensionSignature };
      }
      throw new DoubleSignError("conflicting data");
    }

    const signature = signBytes(this.#key.privKey, bytes);
    // Consensus verifies its own vote on arrival and again in the next block's LastCommit.
    rememberVoteSignBytes(chainId, vote, signature, bytes);
    await this.#saveSigned({ height: vote.height, round: vote.round, step, signature, signBytes: bytes });
    return { ...vote, signature, extensionSignature };
  }

  async #doSignProposal(chainId: string, proposal: Proposal): Promise<Proposal> {
    const step = SIGN_STEP.propose;
    const sameHrs = this.#checkHrs(proposal.height, proposal.round, step);
    const bytes = proposalSignBytes(chainId, proposal);

    if (sameHrs) {
      const saved = this.#savedSignature();
      if (bytesEqual(bytes, saved.signBytes)) return { ...proposal, signature: saved.signature };
      const savedTime = timestampFromSignBytes(saved.signBytes, CANONICAL_TIMESTAMP_FIELD.proposal);
      if (
        savedTime !== undefined &&
        bytesEqual(proposalSignBytes(chainId, { ...proposal, timestamp: savedTime }), saved.signBytes)
      ) {
        return { ...proposal, timestamp: savedTime, signature: saved.signature };
      }
      throw new DoubleSignError("conflicting data");
    }

    const signature = signBytes(this.#key.privKey, bytes);
    await this.#saveSigned({ height: proposal.height, round: proposal.round, step, signature, signBytes: bytes });
    return { ...proposal, signature };
  }

  /**
   * privval/file.go CheckHRS: throws on a regression; returns true when this exact height/round/step
   * was signed before (the saved signature is then reused or the request refused).
   */
  #checkHrs(height: number, round: number, step: SignStep): boolean {
    const last = this.#state;
    if (last.height > height) {
      throw new DoubleSignError(`height regression. Got ${height}, last height ${last.height}`);
    }
    if (last.height === height) {
      if (last.round > round) {
        throw new DoubleSignError(`round regression at height ${height}. Got ${round}, last round ${last.round}`);
      }
      if (last.round === round) {
        if (last.step > step) {
          throw new DoubleSignError(
            `step regression at height ${height} round ${round}. Got ${step}, last step ${last.step}`,
          );
        }
        if (last.step === step) {
          if (last.signBytes !== undefined) return true;
          throw new DoubleSignError("no SignBytes found");
        }
      }
    }
    return false;
  }

  #savedSignature(): { signature: Uint8Array; signBytes: Uint8Array } {
    const { signature, signBytes: saved } = this.#state;
    if (saved === undefined || signature === undefined) {
      // CometBFT panics here ("Signature is nil but SignBytes is not!"): the state file is inconsistent.
      throw new PrivValidatorFileError(this.stateFilePath, "has signbytes but no signature; refusing to sign");
    }
    return { signature, signBytes: saved };
  }

  /** The state reaches the disk (fsynced, renamed, directory fsynced) before memory and before the caller. */
  async #saveSigned(next: LastSignState): Promise<void> {
    if (this.#durable) await this.#writeState(next);
    this.#state = next;
  }

  /** Dev chains: the last-sign state stays in memory until flushState (see `durable`). */
  setDurable(durable: boolean): void {
    this.#durable = durable;
  }

  /** Writes the last-sign state kept in memory (a dev chain at stop), after any signing in flight. */
  flushState(): Promise<void> {
    return this.#serialised(async () => {
      if (!this.#durable) this.#writeStateNoSync(this.#state);
    });
  }

  #serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

function voteStep(vote: Vote): SignStep {
  if (vote.type === SIGNED_MSG_TYPE.prevote) return SIGN_STEP.prevote;
  if (vote.type === SIGNED_MSG_TYPE.precommit) return SIGN_STEP.precommit;
  throw new InvalidSignRequestError(`unknown vote type ${String(vote.type)}; valid types: 1 (prevote), 2 (precommit)`);
}

function emptyState(): LastSignState {
  return { height: 0, round: 0, step: SIGN_STEP.none };
}

/** priv_validator_key.json, indented like cmtjson.MarshalIndent. */
export function encodePrivValidatorKeyFile(key: PrivValidatorKey): string {
  return `${JSON.stringify(
    {
      address: bytesToHexUpper(key.address),
      pub_key: encodePubKeyJson(key.pubKey),
      priv_key: encodePrivKeyJson(key.privKey),
    },
    null,
    2,
  )}\n`;
}

/** priv_validator_state.json: height is an int64 string; signature/signbytes only once something was signed. */
export function encodeLastSignStateFile(s: LastSignState): string {
  const out: Record<string, unknown> = { height: String(s.height), round: s.round, step: s.step };
  if (s.signature !== undefined && s.signature.length > 0) out.signature = bytesToBase64(s.signature);
  if (s.signBytes !== undefined && s.signBytes.length > 0) out.signbytes = bytesToHexUpper(s.signBytes);
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** Reads priv_validator_key.json. The public key and address are derived from the private key, as CometBFT does. */
export function loadPrivValidatorKey(path: string): PrivValidatorKey {
  const obj = readJsonObject(path, "private validator key", 'Run "cometh init" to create it');
  const priv = decodeEd25519PrivKeyJson(obj.priv_key);
  if (typeof priv === "string") throw new PrivValidatorFileError(path, `priv_key: ${priv}`);
  const pub = pubKeyFromPrivKey(priv);
  if (!bytesEqual(generateEd25519PrivKey(priv.bytes.slice(0, 32)).bytes, priv.bytes)) {
    throw new PrivValidatorFileError(
      path,
      "priv_key: the last 32 bytes are not the public key of the first 32 (corrupt key)",
    );
  }
  return { address: addressFromPubKey(pub), pubKey: pub, privKey: priv };
}

/** Reads priv_validator_state.json. */
export function loadLastSignState(path: string): LastSignState {
  const obj = readJsonObject(
    path,
    "private validator state",
    'Restore it from a backup, or run "cometh unsafe-reset-all" to start signing from height 0',
  );
  const height = typeof obj.height === "string" && /^\d+$/.test(obj.height) ? Number(obj.height) : obj.height;
  if (typeof height !== "number" || !Number.isSafeInteger(height) || height < 0) {
    throw new PrivValidatorFileError(
      path,
      `height must be a non-negative integer string such as "0", got ${JSON.stringify(obj.height)}`,
    );
  }
  const round = obj.round ?? 0;
  if (typeof round !== "number" || !Number.isSafeInteger(round) || round < 0) {
    throw new PrivValidatorFileError(path, `round must be a non-negative integer, got ${JSON.stringify(obj.round)}`);
  }
  const step = obj.step ?? 0;
  if (step !== 0 && step !== 1 && step !== 2 && step !== 3) {
    throw new PrivValidatorFileError(
      path,
      `step must be 0, 1 (propose), 2 (prevote) or 3 (precommit), got ${JSON.stringify(obj.step)}`,
    );
  }
  const state: LastSignState = { height, round, step };
  if (obj.signature !== undefined && obj.signature !== null && obj.signature !== "") {
    const sig = typeof obj.signature === "string" ? base64ToBytes(obj.signature) : undefined;
    if (sig === undefined) throw new PrivValidatorFileError(path, "signature must be base64");
    state.signature = sig;
  }
  if (obj.signbytes !== undefined && obj.signbytes !== null && obj.signbytes !== "") {
    const sb = typeof obj.signbytes === "string" ? hexToBytes(obj.signbytes) : undefined;
    if (sb === undefined) throw new PrivValidatorFileError(path, "signbytes must be hex");
    state.signBytes = sb;
  }
  return state;
}

function readJsonObject(path: string, what: string, missingHint: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const problem =
      code === "ENOENT"
        ? `${what} file does not exist. ${missingHint}`
        : `cannot read ${what} file: ${(err as Error).message}`;
    throw new PrivValidatorFileError(path, problem, { cause: err });
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new PrivValidatorFileError(path, `${what} file is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new PrivValidatorFileError(path, `${what} file must hold a JSON object`);
  }
  return v as Record<string, unknown>;
}
