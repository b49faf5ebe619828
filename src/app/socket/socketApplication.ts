import { COMETBFT_VERSION, type ListenAddress } from "../../config/index.js";
import {
  type ApplySnapshotChunkRequest,
  type ApplySnapshotChunkResponse,
  BLOCK_PROTOCOL,
  type CheckTxRequest,
  type CheckTxResponse,
  type CommitResponse,
  type ConsensusParams,
  type FinalizeBlockRequest,
  type FinalizeBlockResponse,
  type InfoResponse,
  type InitChainRequest,
  type InitChainResponse,
  type LoadSnapshotChunkRequest,
  type OfferSnapshotRequest,
  type OfferSnapshotResult,
  type PrepareProposalRequest,
  type ProcessProposalRequest,
  type QueryRequest,
  type QueryResponse,
  type Snapshot,
} from "../../types/index.js";
import type { Logger } from "../../util/logger.js";
import type { Application } from "../application.js";
import { type AbciConnection, type AbciConnectionName, AbciSocketConnection, formatAbciAddress } from "./connection.js";
import type { AbciConnectionError } from "./errors.js";
import { AbciGrpcConnection } from "./grpcConnection.js";
import {
  applySnapshotChunkResultFromProto,
  checkTxResponseFromProto,
  finalizeBlockRequestToProto,
  finalizeBlockResponseFromProto,
  infoResponseFromProto,
  initChainRequestToProto,
  initChainResponseFromProto,
  offerSnapshotResultFromProto,
  prepareProposalRequestToProto,
  processProposalRequestToProto,
  processProposalStatusFromProto,
  queryResponseFromProto,
  snapshotFromProto,
  snapshotToProto,
} from "./messages.js";

/** version.ABCIVersion and version.P2PProtocol of CometBFT v0.38, sent in RequestInfo. */
const ABCI_VERSION = "2.0.0";
const P2P_PROTOCOL = 8n;

export interface SocketAppOptions {
  /** Where the application listens (`proxy_app`). */
  readonly address: ListenAddress;
  /** `abci`: CometBFT's socket protocol (the default) or gRPC. */
  readonly transport?: "socket" | "grpc";
  readonly log: Logger;
  /**
   * Called once when a connection to the application is lost or broken (the application crashed,
   * closed it, or answered against the protocol); the node stops, as CometBFT does.
   */
  readonly onLost: (err: AbciConnectionError) => void;
  /**
   * The consensus params in force at a height, to complete a partial consensus_param_updates in
   * FinalizeBlock (cometh's FinalizeBlockResponse holds the whole params).
   */
  readonly consensusParamsAt: (height: number) => ConsensusParams;
  /** Wait between dial attempts while the application is not up (default 3 s). */
  readonly retryIntervalMs?: number;
  /** Ends the dial attempts. */
  readonly signal?: AbortSignal;
}

/**
 * An external ABCI 2.0 application behind CometBFT's socket protocol (or gRPC), as the Application consensus,
 * the mempool and the RPC call. Like CometBFT (proxy/multi_app_conn.go) it opens four connections,
 * in this order: query (Info, Query), snapshot (unused: cometh has no state sync), mempool (CheckTx)
 * and consensus (InitChain, PrepareProposal, ProcessProposal, FinalizeBlock, Commit). Each has its
 * own socket, so a long FinalizeBlock does not hold up a CheckTx on the client side; the application
 * decides what runs concurrently.
 */
export class SocketApplication implements Application {
  readonly address: string;
  readonly #conns: Record<AbciConnectionName, AbciConnection>;
  readonly #consensusParamsAt: (height: number) => ConsensusParams;

  private constructor(
    address: string,
    conns: Record<AbciConnectionName, AbciConnection>,
    consensusParamsAt: (height: number) => ConsensusParams,
  ) {
    this.address = address;
    this.#conns = conns;
    this.#consensusParamsAt = consensusParamsAt;
  }

  /** Opens the four connections (waiting for the application to listen, as CometBFT does). */
  static async connect(opts: SocketAppOptions): Promise<SocketApplication> {
    let lost = false;
    const opened: AbciConnection[] = [];
    const Connection = opts.transport === "grpc" ? AbciGrpcConnection : AbciSocketConnection;
    const onError = (err: AbciConnectionError) => {
      if (lost) return;
      lost = true;
      // The node stops: close the other connections now, as CometBFT stops all its clients, so that
      // their sockets closing too is not reported as more errors.
      for (const c of opened) if (c.name !== err.connection) c.close();
      opts.onLost(err);
    };
    const open = async (name: AbciConnectionName) => {
      const conn = await Connection.connect({
        name,
        address: opts.address,
        log: opts.log,
        onError,
        ...(opts.retryIntervalMs === undefined ? {} : { retryIntervalMs: opts.retryIntervalMs }),
        ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      });
      opened.push(conn);
      return conn;
    };
    try {
      const query = await open("query");
      const snapshot = await open("snapshot");
      const mempool = await open("mempool");
      const consensus = await open("consensus");
      return new SocketApplication(
        formatAbciAddress(opts.address),
        { query, snapshot, mempool, consensus },
        opts.consensusParamsAt,
      );
    } catch (err) {
      for (const c of opened) c.close();
      throw err;
    }
  }

  /** One of the four connections (tests: echo, flush). */
  connection(name: AbciConnectionName): AbciConnection {
    return this.#conns[name];
  }

  async info(): Promise<InfoResponse> {
    const res = await this.#conns.query.request("info", {
      version: COMETBFT_VERSION,
      blockVersion: BLOCK_PROTOCOL,
      p2pVersion: P2P_PROTOCOL,
      abciVersion: ABCI_VERSION,
    });
    return infoResponseFromProto(res);
  }

  async initChain(req: InitChainRequest): Promise<InitChainResponse> {
    const res = await this.#conns.consensus.request("initChain", initChainRequestToProto(req));
    return initChainResponseFromProto(res, req);
  }

  async checkTx(req: CheckTxRequest): Promise<CheckTxResponse> {
    return checkTxResponseFromProto(await this.#conns.mempool.request("checkTx", { tx: req.tx, type: req.type }));
  }

  async prepareProposal(req: PrepareProposalRequest): Promise<{ txs: Uint8Array[] }> {
    const res = await this.#conns.consensus.request("prepareProposal", prepareProposalRequestToProto(req));
    return { txs: res.txs };
  }

  async processProposal(req: ProcessProposalRequest): Promise<"accept" | "reject"> {
    const res = await this.#conns.consensus.request("processProposal", processProposalRequestToProto(req));
    return processProposalStatusFromProto(res.status);
  }

  async finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse> {
    const res = await this.#conns.consensus.request("finalizeBlock", finalizeBlockRequestToProto(req));
    return finalizeBlockResponseFromProto(res, () => this.#consensusParamsAt(req.height));
  }

  async commit(): Promise<CommitResponse> {
    const res = await this.#conns.consensus.request("commit", {});
    const retainHeight = res.retainHeight;
    // A negative retain height means no pruning, as a zero one does (state/execution.go prunes only above 0).
    return {
      retainHeight: retainHeight > 0n && retainHeight <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(retainHeight) : 0,
    };
  }

  async query(req: QueryRequest): Promise<QueryResponse> {
    const res = await this.#conns.query.request("query", {
      data: req.data,
      path: req.path,
      height: BigInt(req.height),
      prove: req.prove,
    });
    return queryResponseFromProto(res);
  }

  // State sync goes over the snapshot connection, as CometBFT's proxy.AppConnSnapshot.

  async listSnapshots(): Promise<Snapshot[]> {
    const res = await this.#conns.snapshot.request("listSnapshots", {});
    return res.snapshots.map(snapshotFromProto);
  }

  async loadSnapshotChunk(req: LoadSnapshotChunkRequest): Promise<Uint8Array> {
    const res = await this.#conns.snapshot.request("loadSnapshotChunk", {
      height: BigInt(req.height),
      format: req.format,
      chunk: req.chunk,
    });
    return res.chunk;
  }

  async offerSnapshot(req: OfferSnapshotRequest): Promise<OfferSnapshotResult> {
    const res = await this.#conns.snapshot.request("offerSnapshot", {
      snapshot: snapshotToProto(req.snapshot),
      appHash: req.appHash,
    });
    return offerSnapshotResultFromProto(res.result);
  }

  async applySnapshotChunk(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse> {
    const res = await this.#conns.snapshot.request("applySnapshotChunk", {
      index: req.index,
      chunk: req.chunk,
      sender: req.sender,
    });
    return {
      result: applySnapshotChunkResultFromProto(res.result),
      refetchChunks: [...res.refetchChunks],
      rejectSenders: [...res.rejectSenders],
    };
  }

  /** Closes the four connections (the node is stopping); the application keeps running. */
  async close(): Promise<void> {
    for (const c of Object.values(this.#conns)) c.close();
  }
}
