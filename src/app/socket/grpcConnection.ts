import { type ClientHttp2Session, type ClientHttp2Stream, connect as http2Connect } from "node:http2";
import { createConnection } from "node:net";
import * as pb from "cosmjs-types/tendermint/abci/types";
import type { Logger } from "../../util/logger.js";
import {
  type AbciConnection,
  type AbciConnectionOptions,
  type AbciRequestKind,
  type AbciResponseOf,
  connectWithRetry,
  formatAbciAddress,
} from "./connection.js";
import { AbciConnectionError } from "./errors.js";

/**
 * One connection of the ABCI gRPC protocol (`abci = "grpc"`), the client side (what CometBFT v0.38's
 * abci/client/grpc_client.go does; docs/abci-socket.md §7): the service `tendermint.abci.ABCI`, one
 * unary call per request over HTTP/2 without TLS, each `Request<Kind>` message answered by
 * `Response<Kind>`. There is no Flush discipline (calls are answered one by one). A failed call, a
 * malformed answer or the connection closing stops the connection for good, as on the socket
 * protocol, and `onError` is told.
 */

interface MessageCodec {
  encode(message: never): { finish(): Uint8Array };
  decode(input: Uint8Array): unknown;
}

/** Each request kind: its RPC method and the Request/Response message codecs. */
const METHODS: Record<AbciRequestKind, readonly [string, MessageCodec, MessageCodec]> = {
  echo: ["Echo", pb.RequestEcho, pb.ResponseEcho],
  flush: ["Flush", pb.RequestFlush, pb.ResponseFlush],
  info: ["Info", pb.RequestInfo, pb.ResponseInfo],
  initChain: ["InitChain", pb.RequestInitChain, pb.ResponseInitChain],
  query: ["Query", pb.RequestQuery, pb.ResponseQuery],
  checkTx: ["CheckTx", pb.RequestCheckTx, pb.ResponseCheckTx],
  commit: ["Commit", pb.RequestCommit, pb.ResponseCommit],
  listSnapshots: ["ListSnapshots", pb.RequestListSnapshots, pb.ResponseListSnapshots],
  offerSnapshot: ["OfferSnapshot", pb.RequestOfferSnapshot, pb.ResponseOfferSnapshot],
  loadSnapshotChunk: ["LoadSnapshotChunk", pb.RequestLoadSnapshotChunk, pb.ResponseLoadSnapshotChunk],
  applySnapshotChunk: ["ApplySnapshotChunk", pb.RequestApplySnapshotChunk, pb.ResponseApplySnapshotChunk],
  prepareProposal: ["PrepareProposal", pb.RequestPrepareProposal, pb.ResponsePrepareProposal],
  processProposal: ["ProcessProposal", pb.RequestProcessProposal, pb.ResponseProcessProposal],
  extendVote: ["ExtendVote", pb.RequestExtendVote, pb.ResponseExtendVote],
  verifyVoteExtension: ["VerifyVoteExtension", pb.RequestVerifyVoteExtension, pb.ResponseVerifyVoteExtension],
  finalizeBlock: ["FinalizeBlock", pb.RequestFinalizeBlock, pb.ResponseFinalizeBlock],
};

const SERVICE = "/tendermint.abci.ABCI/";
/** grpc-go's default limit on a received message (4 MiB) is the server's; this bounds what we accept. */
const MAX_GRPC_MESSAGE_BYTES = 2 ** 31 - 1;

/** A gRPC length-prefixed message: flag 0 (not compressed), 4-byte big-endian length, the bytes. */
export function encodeGrpcMessage(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

/** The one message of a unary answer's body, or a problem text. */
export function decodeGrpcMessage(body: Uint8Array): Uint8Array | string {
  if (body.length < 5) return `the answer has ${body.length} bytes, less than a gRPC message header`;
  if (body[0] !== 0) return "the answer is compressed (flag 1); the client asked for none";
  const length = new DataView(body.buffer, body.byteOffset, body.length).getUint32(1);
  if (length > MAX_GRPC_MESSAGE_BYTES) return `message length ${length} is too large`;
  if (body.length !== 5 + length) {
    return `the answer is ${body.length - 5} bytes after its header but declares ${length} (one message expected)`;
  }
  return body.subarray(5);
}

function openSession(opts: AbciConnectionOptions): Promise<ClientHttp2Session> {
  const a = opts.address;
  const authority =
    a.protocol === "unix" ? "http://localhost" : `http://${formatAbciAddress(a).slice("tcp://".length)}`;
  return new Promise((resolve, reject) => {
    const session = http2Connect(authority, {
      createConnection: () =>
        a.protocol === "unix"
          ? createConnection({ path: a.path })
          : // No Nagle delay between a call's HEADERS and DATA frames (Go's side sets TCP_NODELAY too).
            createConnection({ host: a.host === "" ? "127.0.0.1" : a.host, port: a.port, noDelay: true }),
    });
    const onError = (err: Error) => {
      session.destroy();
      reject(err);
    };
    session.once("error", onError);
    session.once("connect", () => {
      session.off("error", onError);
      resolve(session);
    });
  });
}

/** One unary call; resolves with the answer's message bytes, rejects with a problem text. */
function unaryCall(session: ClientHttp2Session, method: string, body: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({
        ":method": "POST",
        ":path": `${SERVICE}${method}`,
        "content-type": "application/grpc",
        te: "trailers",
      });
    } catch (err) {
      reject(err);
      return;
    }
    const chunks: Buffer[] = [];
    let httpStatus = 0;
    let grpcStatus: string | undefined;
    let grpcMessage = "";
    const readStatus = (h: Record<string, unknown>) => {
      if (h["grpc-status"] !== undefined) grpcStatus = String(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) grpcMessage = decodeURIComponent(String(h["grpc-message"]));
    };
    stream.on("response", (headers) => {
      httpStatus = Number(headers[":status"]);
      readStatus(headers);
    });
    stream.on("trailers", (trailers) => readStatus(trailers));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", (err) => reject(err));
    stream.on("close", () => {
      if (httpStatus !== 200) {
        reject(new Error(`${method}: HTTP status ${httpStatus || "none"} (stream closed with code ${stream.rstCode})`));
        return;
      }
      if (grpcStatus !== "0") {
        reject(new Error(`${method}: gRPC status ${grpcStatus ?? "missing"}${grpcMessage ? `: ${grpcMessage}` : ""}`));
        return;
      }
      const message = decodeGrpcMessage(new Uint8Array(Buffer.concat(chunks)));
      if (typeof message === "string") reject(new Error(`${method}: ${message}`));
      else resolve(message);
    });
    stream.end(encodeGrpcMessage(body));
  });
}

export class AbciGrpcConnection implements AbciConnection {
  readonly name: AbciConnection["name"];
  readonly #session: ClientHttp2Session;
  readonly #log: Logger;
  readonly #onError: (err: AbciConnectionError) => void;
  #inFlight = 0;
  #error: AbciConnectionError | undefined;
  #closed = false;

  /**
   * Dials the application and checks it answers an Echo("hello") (as grpc_client.go does before it
   * reports started); while it does not, retries every `retryIntervalMs` and logs each failure.
   */
  static async connect(opts: AbciConnectionOptions): Promise<AbciGrpcConnection> {
    const open = async (): Promise<ClientHttp2Session> => {
      const session = await openSession(opts);
      try {
        const echo = await unaryCall(session, "Echo", pb.RequestEcho.encode({ message: "hello" }).finish());
        if (pb.ResponseEcho.decode(echo).message !== "hello") throw new Error("Echo answered another message");
        return session;
      } catch (err) {
        session.destroy();
        throw err;
      }
    };
    const session = await connectWithRetry(opts, "grpcClient", open, (s) => s.destroy());
    opts.log.info(
      { connection: opts.name, address: formatAbciAddress(opts.address) },
      "ABCI gRPC connection established",
    );
    return new AbciGrpcConnection(session, opts);
  }

  private constructor(session: ClientHttp2Session, opts: AbciConnectionOptions) {
    this.name = opts.name;
    this.#session = session;
    this.#log = opts.log;
    this.#onError = opts.onError;
    session.on("error", (err) => this.#fail(`connection error: ${err.message}`, err));
    session.on("goaway", () => this.#fail("the application sent GOAWAY (it is shutting down)"));
    session.on("close", () => this.#fail("the application closed the connection"));
  }

  get error(): AbciConnectionError | undefined {
    return this.#error;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  async request<K extends AbciRequestKind>(kind: K, value: NonNullable<pb.Request[K]>): Promise<AbciResponseOf<K>> {
    if (this.#error !== undefined) throw this.#error;
    if (this.#closed) throw new AbciConnectionError(this.name, "the connection is closed");
    const [method, reqCodec, resCodec] = METHODS[kind];
    const body = reqCodec.encode(value as never).finish();
    this.#inFlight++;
    let answer: Uint8Array;
    try {
      answer = await unaryCall(this.#session, method, body);
    } catch (err) {
      if (this.#closed) throw new AbciConnectionError(this.name, "the connection was closed while a request waited");
      this.#fail((err as Error).message, err);
      throw this.#error ?? err;
    } finally {
      this.#inFlight--;
    }
    try {
      return resCodec.decode(answer) as AbciResponseOf<K>;
    } catch (err) {
      this.#fail(`${method}: the answer is not a tendermint.abci.Response${method} (${(err as Error).message})`, err);
      throw this.#error ?? err;
    }
  }

  async echo(message: string): Promise<string> {
    return (await this.request("echo", { message })).message;
  }

  async flush(): Promise<void> {
    await this.request("flush", {});
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#session.destroy();
  }

  #fail(message: string, cause?: unknown): void {
    if (this.#error !== undefined || this.#closed) return;
    this.#error = new AbciConnectionError(this.name, message, cause === undefined ? undefined : { cause });
    this.#session.destroy();
    this.#log.error({ connection: this.name, err: message }, `Stopping abci.grpcClient for error: ${message}`);
    this.#onError(this.#error);
  }
}
