import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Application, createEvmApp, createKvStoreApp, type DevAccount, EvmApplication } from "../app/index.js";
import { loadGenesis, loadOrGenerateNodeKey, type NodeConfig, type NodeKey } from "../config/index.js";
import { type Consensus, type ConsensusOptions, createConsensus } from "../consensus/index.js";
import { EventBus } from "../events/index.js";
import { createKvIndexer, createNullIndexer, createPsqlIndexer, type Indexer } from "../indexer/index.js";
import { Mempool } from "../mempool/index.js";
import { FilePV } from "../privval/index.js";
import { type CometRpcConfig, type RunningCometRpc, startCometRpc } from "../rpc/comet/index.js";
import { type RunningEvmRpc, startEvmRpc } from "../rpc/evm/index.js";
import { BlockStore, openKvStore, StateStore } from "../store/index.js";
import type { GenesisDoc } from "../types/index.js";
import { systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { buildEvmServices, EvmFeed } from "./evmServices.js";
import { IndexingPublisher } from "./indexingPublisher.js";
import { NodeMetrics, serveMetrics } from "./metrics.js";
import { buildCometServices } from "./services.js";
import { ShutdownStack } from "./shutdownStack.js";

/** A running node, as the CLI and tests hold it. */
export interface RunningNode {
  readonly config: NodeConfig;
  readonly genesis: GenesisDoc;
  readonly nodeKey: NodeKey;
  /** Bound node RPC addresses, e.g. `tcp://127.0.0.1:26657` (real ports when 0 was asked for). */
  readonly rpcAddresses: readonly string[];
  /** Bound Ethereum JSON-RPC addresses (`host:port`), when `[json-rpc] enable` and the app is the EVM. */
  readonly evmRpc: { readonly http: string; readonly ws: string } | undefined;
  /** Bound Prometheus address (`host:port`) when `[instrumentation] prometheus = true`. */
  readonly metricsAddress: string | undefined;
  readonly consensus: Consensus;
  readonly mempool: Mempool;
  readonly blockStore: BlockStore;
  /** The application (EvmApplication when proxy_app = "evm"). */
  readonly app: Application;
  /** Dev accounts the EVM app funded at genesis (empty for other apps or funded genesis files). */
  readonly devAccounts: readonly DevAccount[];
  /** Stops everything in the reverse order of start; safe to call twice. */
  stop(): Promise<void>;
}

/** Where each store lives under `[base] db_dir` (LMDB: a path with an extension is a single file). */
export const DB_FILES = {
  node: "node.lmdb",
  txIndex: "tx_index.lmdb",
  kvstoreApp: "kvstore.db",
  evmApp: "evm.db",
} as const;

/**
 * Builds and starts the node in dependency order: stores → app → mempool → events/indexer →
 * consensus (handshake + WAL replay) → RPC. Anything that fails part-way stops what was started.
 */
export async function startNode(config: NodeConfig, log: Logger): Promise<RunningNode> {
  const stack = new ShutdownStack(log);
  try {
    return await build(config, log, stack);
  } catch (err) {
    await stack.unwind();
    throw err;
  }
}

async function build(config: NodeConfig, log: Logger, stack: ShutdownStack): Promise<RunningNode> {
  const dbDir = config.base.dbDir;
  await mkdir(dbDir, { recursive: true });
  const genesis = loadGenesis(config.base.genesisFile);
  const nodeKey = await loadOrGenerateNodeKey(config.base.nodeKeyFile);
  const signer = await FilePV.loadOrGenerate(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);

  const db = await openKvStore(join(dbDir, DB_FILES.node));
  stack.push("node database", () => db.close());
  const blockStore = new BlockStore(db);
  const stateStore = new StateStore(db);

  const app = await createApp(config, log);
  stack.push("application", () => app.close());

  const mempool = new Mempool(
    {
      size: config.mempool.size,
      maxTxsBytes: config.mempool.maxTxsBytes,
      maxTxBytes: config.mempool.maxTxBytes,
      cacheSize: config.mempool.cacheSize,
      keepInvalidTxsInCache: config.mempool.keepInvalidTxsInCache,
      recheck: config.mempool.recheck,
    },
    { app, log: log.child({ module: "mempool" }) },
  );

  const bus = new EventBus({ log: log.child({ module: "events" }) });
  stack.push("event bus", () => bus.close());
  const indexer = await createIndexer(config, genesis, dbDir);
  stack.push("indexer", () => indexer.close());
  const evmFeed = new EvmFeed();
  let metrics: NodeMetrics | undefined;
  let metricsAddress: string | undefined;
  const publisher = new IndexingPublisher(bus, indexer, log.child({ module: "txindex" }), ({ block }) => {
    const height = block.header.height;
    evmFeed.newBlock(height);
    metrics?.onBlock(
      height,
      block.header.time,
      block.data.txs.length,
      blockStore.loadBlockMeta(height)?.blockSize ?? 0,
    );
  });
  stack.push("event delivery", () => publisher.flush());

  const consensus = await createConsensus(consensusOptions(config), {
    app,
    blockStore,
    stateStore,
    mempool,
    events: publisher,
    genesis,
    signer,
    clock: systemClock,
    log: log.child({ module: "consensus" }),
  });
  // Blocks committed while the indexer was behind (a crash between commit and index write).
  await catchUpIndexer(indexer, blockStore, stateStore, log);

  await consensus.start();
  stack.push("consensus", () => consensus.stop());

  let rpc: RunningCometRpc | undefined;
  if (config.rpc.laddr !== "") {
    rpc = await startCometRpc(
      cometRpcConfig(config),
      buildCometServices({
        config,
        genesis,
        nodeKey,
        signer,
        blockStore,
        stateStore,
        app,
        mempool,
        bus,
        consensus,
        indexer,
      }),
      log.child({ module: "rpc-server" }),
    );
    stack.push("node RPC", () => (rpc as RunningCometRpc).close());
  }

  let evmRpc: RunningEvmRpc | undefined;
  if (config.jsonRpc.enable && app instanceof EvmApplication) {
    evmRpc = await startEvmRpc(
      config.jsonRpc,
      buildEvmServices({ config, genesis, nodeKey, app, mempool, blockStore, feed: evmFeed }),
      log.child({ module: "json-rpc" }),
    );
    stack.push("Ethereum JSON-RPC", () => (evmRpc as RunningEvmRpc).close());
  }

  if (config.instrumentation.prometheus) {
    const m = new NodeMetrics(config.instrumentation.namespace, genesis.chainId, {
      chainState: () => consensus.chainState(),
      mempoolSize: () => mempool.size(),
      mempoolSizeBytes: () => mempool.sizeBytes(),
      round: () => consensus.roundStateView().round,
    });
    metrics = m;
    const { host, port } = splitHostPort(config.instrumentation.prometheusListenAddr);
    const served = await serveMetrics(m, host, port, config.instrumentation.maxOpenConnections, log);
    metricsAddress = served.address;
    log.info({ address: served.address }, "Prometheus metrics listening");
    stack.push("metrics server", () => served.close());
  }

  let stopped: Promise<void> | undefined;
  return {
    config,
    genesis,
    nodeKey,
    rpcAddresses: rpc?.addresses ?? [],
    evmRpc: evmRpc === undefined ? undefined : { http: evmRpc.httpAddress, ws: evmRpc.wsAddress },
    metricsAddress,
    consensus,
    mempool,
    blockStore,
    app,
    devAccounts: app instanceof EvmApplication ? app.devAccounts() : [],
    stop: () => {
      stopped ??= stack.unwind();
      return stopped;
    },
  };
}

async function createApp(config: NodeConfig, log: Logger): Promise<Application> {
  const appLog = log.child({ module: "app" });
  switch (config.base.proxyApp) {
    case "kvstore":
      return createKvStoreApp({ dbDir: join(config.base.dbDir, DB_FILES.kvstoreApp), log: appLog });
    case "evm":
      return createEvmApp({
        dbDir: join(config.base.dbDir, DB_FILES.evmApp),
        log: appLog,
        chainId: BigInt(config.evm.evmChainId),
        allowUnprotectedTxs: config.jsonRpc.allowUnprotectedTxs,
        pruning: pruningWindow(config),
      });
  }
}

async function createIndexer(config: NodeConfig, genesis: GenesisDoc, dbDir: string): Promise<Indexer> {
  switch (config.txIndex.indexer) {
    case "null":
      return createNullIndexer();
    case "kv":
      return createKvIndexer(await openKvStore(join(dbDir, DB_FILES.txIndex)));
    case "psql":
      return createPsqlIndexer({ connectionString: config.txIndex.psqlConn, chainId: genesis.chainId });
  }
}

/** Cosmos SDK's pruning strategies as a number of kept heights ("nothing" keeps everything). */
function pruningWindow(config: NodeConfig): number | "archive" {
  switch (config.appBase.pruning) {
    case "nothing":
      return "archive";
    case "everything":
      return 2;
    case "custom":
      return config.appBase.pruningKeepRecent;
    case "default":
      return 362_880;
  }
}

function consensusOptions(config: NodeConfig): ConsensusOptions {
  const c = config.consensus;
  return {
    walPath: c.walPath,
    timeoutProposeMs: c.timeoutProposeMs,
    timeoutProposeDeltaMs: c.timeoutProposeDeltaMs,
    timeoutPrevoteMs: c.timeoutPrevoteMs,
    timeoutPrevoteDeltaMs: c.timeoutPrevoteDeltaMs,
    timeoutPrecommitMs: c.timeoutPrecommitMs,
    timeoutPrecommitDeltaMs: c.timeoutPrecommitDeltaMs,
    timeoutCommitMs: c.timeoutCommitMs,
    skipTimeoutCommit: c.skipTimeoutCommit,
    createEmptyBlocks: c.createEmptyBlocks,
    createEmptyBlocksIntervalMs: c.createEmptyBlocksIntervalMs,
    doubleSignCheckHeight: c.doubleSignCheckHeight,
    blockTimeToleranceMs: c.blockTimeToleranceMs,
    peerGossipSleepDurationMs: c.peerGossipSleepDurationMs,
  };
}

function cometRpcConfig(config: NodeConfig): CometRpcConfig {
  const r = config.rpc;
  return {
    laddr: r.laddr,
    corsAllowedOrigins: r.corsAllowedOrigins,
    corsAllowedMethods: r.corsAllowedMethods,
    corsAllowedHeaders: r.corsAllowedHeaders,
    unsafe: r.unsafe,
    maxOpenConnections: r.maxOpenConnections,
    maxSubscriptionClients: r.maxSubscriptionClients,
    maxSubscriptionsPerClient: r.maxSubscriptionsPerClient,
    experimentalSubscriptionBufferSize: r.experimentalSubscriptionBufferSize,
    experimentalWebsocketWriteBufferSize: r.experimentalWebsocketWriteBufferSize,
    experimentalCloseOnSlowClient: r.experimentalCloseOnSlowClient,
    timeoutBroadcastTxCommitMs: r.timeoutBroadcastTxCommitMs,
    maxRequestBatchSize: r.maxRequestBatchSize,
    maxBodyBytes: r.maxBodyBytes,
    maxHeaderBytes: r.maxHeaderBytes,
    ...(r.tlsCertFile === "" ? {} : { tlsCertFile: resolveIn(config, r.tlsCertFile) }),
    ...(r.tlsKeyFile === "" ? {} : { tlsKeyFile: resolveIn(config, r.tlsKeyFile) }),
    grpcLaddr: r.grpcLaddr,
    grpcMaxOpenConnections: r.grpcMaxOpenConnections,
    pprofLaddr: r.pprofLaddr,
  };
}

/** CometBFT resolves relative TLS paths against the config directory. */
function resolveIn(config: NodeConfig, file: string): string {
  return file.startsWith("/") ? file : join(config.home, "config", file);
}

/** ":26660", "127.0.0.1:26660", "tcp://0.0.0.0:26660" → host and port. */
function splitHostPort(addr: string): { host: string; port: number } {
  const text = addr.replace(/^tcp:\/\//, "");
  const i = text.lastIndexOf(":");
  return { host: text.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(text.slice(i + 1)) };
}

async function catchUpIndexer(
  indexer: Indexer,
  blockStore: BlockStore,
  stateStore: StateStore,
  log: Logger,
): Promise<void> {
  if (!indexer.txIndexEnabled && !indexer.blockIndexEnabled) return;
  const top = blockStore.height();
  const from = Math.max((await indexer.lastIndexedHeight()) + 1, blockStore.base());
  if (top === 0 || from > top) return;
  log.info({ from, to: top }, "indexing blocks committed while the indexer was behind");
  for (let h = from; h <= top; h++) {
    const block = blockStore.loadBlock(h);
    const resp = stateStore.loadFinalizeBlockResponse(h);
    if (block === undefined || resp === undefined) continue;
    try {
      await indexer.indexBlock({
        height: h,
        finalizeBlockEvents: resp.events,
        txs: block.data.txs,
        txResults: resp.txResults,
      });
    } catch (err) {
      // Same policy as live indexing: a block the indexer refuses is logged, never fatal.
      log.error({ err, height: h }, "failed to index block");
    }
  }
}
