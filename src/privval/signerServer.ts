import { connect, type Socket } from "node:net";
import { generateEd25519PrivKey, type Proposal, type PubKey, type Vote } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { SignerConnectionError } from "./errors.js";
import { formatSignerAddress, parseSignerAddress, type SignerAddress, SignerConnection } from "./signerConnection.js";
import type { SignerMessage } from "./signerMessages.js";

/** What the signer process signs with: FilePV (the key and the double-sign guard). */
export interface SigningKey {
  pubKey(): PubKey;
  signVote(chainId: string, vote: Vote): Promise<Vote>;
  signProposal(chainId: string, proposal: Proposal): Promise<Proposal>;
}

export interface SignerServerOptions {
  /** The node's priv_validator_laddr: `tcp://host:port` or `unix:///path`. */
  readonly address: string;
  /** Requests for another chain are refused. */
  readonly chainId: string;
  readonly key: SigningKey;
  readonly log: Logger;
  /** Deadline of each read and write; no request (nor ping) for this long drops the connection (CometBFT: 5 s). */
  readonly timeoutReadWriteMs?: number;
  /** First pause between dials; it doubles up to `maxRetryDelayMs` while the node is unreachable. */
  readonly retryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  /** Called with each connection's state change (tests wait on it). */
  readonly onState?: (state: "connected" | "disconnected") => void;
}

/**
 * The signer process's end (privval SignerServer over SignerDialerEndpoint): it dials the node,
 * answers its requests one at a time with `key`, and dials again whenever the connection drops,
 * for as long as it runs (CometBFT's reference dialer gives up after 10 tries; a signer that
 * outlives node restarts is what operators run).
 */
export class SignerServer {
  readonly address: SignerAddress;
  readonly #opts: SignerServerOptions;
  readonly #timeoutMs: number;
  #conn: SignerConnection | undefined;
  #socket: Socket | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  readonly #done: Promise<void>;

  constructor(opts: SignerServerOptions) {
    this.address = parseSignerAddress(opts.address);
    this.#opts = opts;
    this.#timeoutMs = opts.timeoutReadWriteMs ?? 5000;
    this.#done = this.#run();
  }

  /** Closes the connection and stops dialing; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#conn?.close();
    this.#socket?.destroy();
    this.#wake?.();
    await this.#done;
  }

  async #run(): Promise<void> {
    const { log } = this.#opts;
    const minDelay = this.#opts.retryDelayMs ?? 100;
    const maxDelay = this.#opts.maxRetryDelayMs ?? 2000;
    let delay = minDelay;
    let failures = 0;
    while (!this.#stopped) {
      let conn: SignerConnection;
      try {
        conn = await this.#dial();
      } catch (err) {
        failures++;
        // The first failure and then one in ten: a node that is down is not news every 100 ms.
        if (failures === 1 || failures % 10 === 0) {
          log.info(
            { addr: formatSignerAddress(this.address), err: (err as Error).message, failures },
            "cannot reach the node; dialing again",
          );
        }
        await this.#sleep(delay);
        delay = Math.min(delay * 2, maxDelay);
        continue;
      }
      failures = 0;
      delay = minDelay;
      this.#conn = conn;
      log.info({ addr: formatSignerAddress(this.address) }, "connected to the node");
      this.#opts.onState?.("connected");
      await this.#serve(conn);
      this.#conn = undefined;
      this.#opts.onState?.("disconnected");
      if (!this.#stopped) await this.#sleep(minDelay);
    }
  }

  async #dial(): Promise<SignerConnection> {
    const a = this.address;
    const socket = a.kind === "unix" ? connect(a.path) : connect(a.port, a.host);
    this.#socket = socket;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new SignerConnectionError(`dial timed out after ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    if (this.#stopped) {
      socket.destroy();
      throw new SignerConnectionError("stopped");
    }
    // A fresh secret-connection key per dial, as CometBFT's signer tests use (the node does not pin it).
    const key = a.kind === "tcp" ? generateEd25519PrivKey().bytes : undefined;
    return SignerConnection.open(socket, key, this.#timeoutMs);
  }

  /** Answers requests until the connection fails, times out idle or the server stops. */
  async #serve(conn: SignerConnection): Promise<void> {
    const { log } = this.#opts;
    while (!this.#stopped) {
      let req: SignerMessage;
      try {
        req = await conn.read(this.#timeoutMs);
      } catch (err) {
        if (!this.#stopped) log.info({ err: (err as Error).message }, "connection to the node lost");
        conn.close();
        return;
      }
      const answer = await handleSignerRequest(this.#opts.key, this.#opts.chainId, req, log);
      try {
        await conn.write(answer, this.#timeoutMs);
      } catch (err) {
        if (!this.#stopped) log.info({ err: (err as Error).message }, "connection to the node lost while answering");
        conn.close();
        return;
      }
    }
    conn.close();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.#wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}

/**
 * One request's answer (privval/signer_requestHandler.go DefaultValidationRequestHandler): a
 * request for another chain and a refusal of the key's guard become a RemoteSignerError with code
 * 0; a message that is not a request gets an empty Message.
 */
export async function handleSignerRequest(
  key: SigningKey,
  chainId: string,
  req: SignerMessage,
  log: Logger,
): Promise<SignerMessage> {
  switch (req.kind) {
    case "pingRequest":
      return { kind: "pingResponse" };
    case "pubKeyRequest":
      if (req.chainId !== chainId) {
        log.error({ want: chainId, got: req.chainId }, "pubkey request for another chain refused");
        return { kind: "pubKeyResponse", error: { code: 0, description: "unable to provide pubkey" } };
      }
      return { kind: "pubKeyResponse", pubKey: key.pubKey() };
    case "signVoteRequest": {
      if (req.chainId !== chainId) {
        log.error({ want: chainId, got: req.chainId }, "vote for another chain refused");
        return { kind: "signedVoteResponse", error: { code: 0, description: "unable to sign vote" } };
      }
      if (req.vote === undefined) {
        return { kind: "signedVoteResponse", error: { code: 0, description: "the request has no vote" } };
      }
      try {
        return { kind: "signedVoteResponse", vote: await key.signVote(chainId, req.vote) };
      } catch (err) {
        log.error({ height: req.vote.height, round: req.vote.round, err: (err as Error).message }, "vote refused");
        return { kind: "signedVoteResponse", error: { code: 0, description: (err as Error).message } };
      }
    }
    case "signProposalRequest": {
      if (req.chainId !== chainId) {
        log.error({ want: chainId, got: req.chainId }, "proposal for another chain refused");
        return { kind: "signedProposalResponse", error: { code: 0, description: "unable to sign proposal" } };
      }
      if (req.proposal === undefined) {
        return { kind: "signedProposalResponse", error: { code: 0, description: "the request has no proposal" } };
      }
      try {
        return { kind: "signedProposalResponse", proposal: await key.signProposal(chainId, req.proposal) };
      } catch (err) {
        const { height, round } = req.proposal;
        log.error({ height, round, err: (err as Error).message }, "proposal refused");
        return { kind: "signedProposalResponse", error: { code: 0, description: (err as Error).message } };
      }
    }
    default:
      log.error({ kind: req.kind }, "unexpected message from the node");
      return { kind: "empty" };
  }
}
