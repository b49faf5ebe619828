import type {
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  CheckTxRequest,
  CheckTxResponse,
  CommitResponse,
  FinalizeBlockRequest,
  FinalizeBlockResponse,
  InfoResponse,
  InitChainRequest,
  InitChainResponse,
  LoadSnapshotChunkRequest,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  PrepareProposalRequest,
  ProcessProposalRequest,
  QueryRequest,
  QueryResponse,
  Snapshot,
} from "../types/abci.js";

/**
 * The application behind consensus, shaped like ABCI 2.0 but in process. Consensus calls
 * info/initChain at start, prepare/process while deciding, finalize+commit once decided;
 * the mempool calls checkTx; the RPC calls query and info.
 */
export interface Application {
  info(): Promise<InfoResponse>;
  initChain(req: InitChainRequest): Promise<InitChainResponse>;
  checkTx(req: CheckTxRequest): Promise<CheckTxResponse>;
  prepareProposal(req: PrepareProposalRequest): Promise<{ txs: Uint8Array[] }>;
  processProposal(req: ProcessProposalRequest): Promise<"accept" | "reject">;
  finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse>;
  /** Persists what finalizeBlock computed; durable when the promise resolves. */
  commit(): Promise<CommitResponse>;
  query(req: QueryRequest): Promise<QueryResponse>;
  close(): Promise<void>;
  /**
   * State sync (docs/state-sync.md), ABCI's snapshot connection. An app without these methods
   * offers no snapshots and cannot be restored from one, as CometBFT's BaseApplication.
   */
  listSnapshots?(): Promise<Snapshot[]>;
  /** The chunk's bytes, or an empty array when the app does not have it. */
  loadSnapshotChunk?(req: LoadSnapshotChunkRequest): Promise<Uint8Array>;
  offerSnapshot?(req: OfferSnapshotRequest): Promise<OfferSnapshotResult>;
  applySnapshotChunk?(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse>;
}
