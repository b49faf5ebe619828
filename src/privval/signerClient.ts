import {
  addressFromPubKey,
  blockIdEquals,
  type Proposal,
  type PubKey,
  pubKeyEquals,
  type Vote,
  verifyProposal,
  verifyVote,
} from "../types/index.js";
import { bytesToBase64 } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import { RemoteSignerError, SignerConnectionError, SignerProtocolError } from "./errors.js";
import { formatSignerAddress, type SignerConnection } from "./signerConnection.js";
import { SignerListener } from "./signerListener.js";
import type { SignerMessage } from "./signerMessages.js";

/** The timings of the node's side (docs/remote-signer.md, "Timeouts"); CometBFT's values by default. */
export interface SignerClientOptions {
  /** Deadline of each read and write (CometBFT's defaultTimeoutReadWriteSeconds: 5 s); pings every 2/3 of it. */
  readonly timeoutReadWriteMs: number;
  /** How long start waits for the first signer to connect and give its key. */
  readonly startWaitMs: number;
  /** How long a request waits for a signer when none is connected, before failing. */
  readonly connectWaitMs: number;
  /** The budget of one sign request across retries on new connections (CometBFT: 50 × 100 ms). */
  readonly requestTimeoutMs: number;
  /** Pause between retries (CometBFT's RetrySignerClient: 100 ms). */
  readonly retryDelayMs: number;
}

export const DEFAULT_SIGNER_CLIENT_OPTIONS: SignerClientOptions = {
  timeoutReadWriteMs: 5000,
  startWaitMs: 10_000,
  connectWaitMs: 1000,
  requestTimeoutMs: 5000,
  retryDelayMs: 100,
};

/**
 * The validator signer of a node with priv_validator_laddr (privval SignerClient with
 * RetrySignerClient): votes and proposals are signed by an external process over the privval
 * socket protocol. It satisfies the same interface as FilePV; the double-sign guard lives in the
 * signer. The key is asked for at start and checked again on every new connection: a signer with
 * another key is refused, so `pubKey()` stays true for the node's whole run.
 *
 * Every answer is checked against its request (same height, round, type and block, and a
 * signature that verifies with the key), so a confused signer cannot make the node gossip a vote
 * it did not ask for.
 */
export class SignerClient {
  readonly #listener: SignerListener;
  readonly #chainId: string;
  readonly #opts: SignerClientOptions;
  readonly #log: Logger;
  #pubKey: PubKey | undefined;
  #address: Uint8Array = new Uint8Array(0);
  readonly #onConnected: (() => void)[] = [];

  private constructor(listener: SignerListener, chainId: string, opts: SignerClientOptions, log: Logger) {
    this.#listener = listener;
    this.#chainId = chainId;
    this.#opts = opts;
    this.#log = log;
  }

  /**
   * Listens on `laddr`, waits for a signer to connect and reads its key (node/setup.go
   * createAndStartPrivValidatorSocketClient). Fails with the reason when no signer gives a key in
   * `startWaitMs`.
   */
  static async start(
    laddr: string,
    chainId: string,
    log: Logger,
    opts: Partial<SignerClientOptions> = {},
  ): Promise<SignerClient> {
    const client = await SignerClient.listen(laddr, chainId, log, opts);
    try {
      await client.waitForSigner();
    } catch (err) {
      await client.close();
      throw err;
    }
    return client;
  }

  /** Listens on `laddr` without waiting for a signer (start = listen + waitForSigner). */
  static async listen(
    laddr: string,
    chainId: string,
    log: Logger,
    opts: Partial<SignerClientOptions> = {},
  ): Promise<SignerClient> {
    const o = { ...DEFAULT_SIGNER_CLIENT_OPTIONS, ...opts };
    let client: SignerClient | undefined;
    const listener = await SignerListener.listen(
      laddr,
      {
        timeoutReadWriteMs: o.timeoutReadWriteMs,
        verify: (conn) => (client as SignerClient).#verify(conn),
        onConnected: () => {
          for (const fn of (client as SignerClient).#onConnected) fn();
        },
      },
      log,
    );
    client = new SignerClient(listener, chainId, o, log);
    return client;
  }

  /** Waits (up to `startWaitMs`) until a signer is connected and its key known. */
  async waitForSigner(): Promise<void> {
    this.#log.info({ laddr: this.laddr }, "waiting for the remote signer to connect");
    await this.#listener.waitForConnection(this.#opts.startWaitMs);
  }

  /** Calls `fn` whenever a signer (with the node's key) connects: consensus then retries a vote that failed. */
  onConnected(fn: () => void): void {
    this.#onConnected.push(fn);
  }

  /** Where the node listens (the bound port when laddr said 0). */
  get laddr(): string {
    return formatSignerAddress(this.#listener.address);
  }

  isConnected(): boolean {
    return this.#listener.isConnected();
  }

  pubKey(): PubKey {
    if (this.#pubKey === undefined) throw new SignerConnectionError("the remote signer has not given its key yet");
    return this.#pubKey;
  }

  address(): Uint8Array {
    return this.#address;
  }

  async signVote(chainId: string, vote: Vote): Promise<Vote> {
    const answer = await this.#withRetries("sign vote", { kind: "signVoteRequest", vote, chainId });
    if (answer.kind !== "signedVoteResponse") throw unexpected("signedVoteResponse", answer);
    if (answer.error !== undefined) throw new RemoteSignerError(answer.error.code, answer.error.description);
    const signed = answer.vote;
    if (
      signed === undefined ||
      signed.type !== vote.type ||
      signed.height !== vote.height ||
      signed.round !== vote.round ||
      signed.validatorIndex !== vote.validatorIndex ||
      !blockIdEquals(signed.blockId, vote.blockId) ||
      !verifyVote(chainId, signed, this.pubKey())
    ) {
      throw new SignerProtocolError(
        `the remote signer answered the vote for ${vote.height}/${vote.round}/${vote.type} with another vote or a signature that does not verify`,
      );
    }
    return signed;
  }

  async signProposal(chainId: string, proposal: Proposal): Promise<Proposal> {
    const answer = await this.#withRetries("sign proposal", { kind: "signProposalRequest", proposal, chainId });
    if (answer.kind !== "signedProposalResponse") throw unexpected("signedProposalResponse", answer);
    if (answer.error !== undefined) throw new RemoteSignerError(answer.error.code, answer.error.description);
    const signed = answer.proposal;
    if (
      signed === undefined ||
      signed.type !== proposal.type ||
      signed.height !== proposal.height ||
      signed.round !== proposal.round ||
      signed.polRound !== proposal.polRound ||
      !blockIdEquals(signed.blockId, proposal.blockId) ||
      !verifyProposal(chainId, signed, this.pubKey())
    ) {
      throw new SignerProtocolError(
        `the remote signer answered the proposal for ${proposal.height}/${proposal.round} with another proposal or a signature that does not verify`,
      );
    }
    return signed;
  }

  /** Stops listening and closes the connection. */
  close(): Promise<void> {
    return this.#listener.close();
  }

  /**
   * Sends a request; on a connection failure (not a refusal) tries again on the next connection,
   * within `requestTimeoutMs` (RetrySignerClient). With no signer connected it waits only
   * `connectWaitMs` and fails: consensus waits for this answer, and a node whose signer is gone
   * keeps following the chain rather than stalling on every vote.
   */
  async #withRetries(what: string, msg: SignerMessage): Promise<SignerMessage> {
    const deadline = Date.now() + this.#opts.requestTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      const wasConnected = this.#listener.isConnected();
      try {
        return await this.#listener.request(msg, Math.min(this.#opts.connectWaitMs, deadline - Date.now()));
      } catch (err) {
        if (!(err instanceof SignerConnectionError)) throw err;
        const left = deadline - Date.now();
        if (!wasConnected || left <= this.#opts.retryDelayMs) {
          throw new SignerConnectionError(`${what}: ${err.message} (attempt ${attempt})`, { cause: err });
        }
        this.#log.debug({ err: err.message, attempt }, `remote signer: ${what} failed; retrying`);
        await new Promise((r) => setTimeout(r, this.#opts.retryDelayMs));
      }
    }
  }

  /** A new connection: the signer's key, the same one as the first signer's. */
  async #verify(conn: SignerConnection): Promise<void> {
    const t = this.#opts.timeoutReadWriteMs;
    await conn.write({ kind: "pubKeyRequest", chainId: this.#chainId }, t);
    const answer = await conn.read(t);
    if (answer.kind !== "pubKeyResponse") throw unexpected("pubKeyResponse", answer);
    if (answer.error !== undefined) throw new RemoteSignerError(answer.error.code, answer.error.description);
    const key = answer.pubKey;
    if (key === undefined) throw new SignerProtocolError("the remote signer sent an empty public key");
    if (this.#pubKey === undefined) {
      this.#pubKey = key;
      this.#address = addressFromPubKey(key);
      this.#log.info({ pubKey: pubKeyToString(key) }, "remote signer key");
    } else if (!pubKeyEquals(this.#pubKey, key)) {
      throw new SignerProtocolError(
        `the signer that connected has key ${pubKeyToString(key)}, not this node's validator key ${pubKeyToString(this.#pubKey)}. Restart the node to change the validator key`,
      );
    }
  }
}

function pubKeyToString(k: PubKey): string {
  return `${k.type}:${bytesToBase64(k.bytes)}`;
}

function unexpected(expected: string, got: SignerMessage): SignerProtocolError {
  return new SignerProtocolError(`the remote signer answered with ${got.kind}, expected ${expected}`);
}
