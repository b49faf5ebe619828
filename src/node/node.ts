import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type Application,
  createEvmApp,
  createKvStoreApp,
  type DevAccount,
  EvmApplication,
  EvmReadPool,
} from "../app/index.js";
import { BlocksyncReactor } from "../blocksync/index.js";
import { loadGenesis, loadOrGenerateNodeKey, type NodeConfig, type NodeKey } from "../config/index.js";
import { BlockExecutor, type Consensus, type ConsensusOptions, createConsensus } from "../consensus/index.js";
import { EventBus } from "../events/index.js";
import { EvidencePool, EvidenceReactor } from "../evidence/index.js";
import { createKvIndexer, createNullIndexer, createPsqlIndexer, type Indexer } from "../indexer/index.js";
import { Mempool } from "../mempool/index.js";
import { AddrBook, mconnConfigFromP2P, PexReactor, Switch, splitAddressList } from "../p2p/index.js";
import { FilePV } from "../privval/index.js";
import { ConsensusReactor, MempoolReactor } from "../reactors/index.js";
import { type CometRpcConfig, type RunningCometRpc, startCometRpc } from "../rpc/comet/index.js";
import { type RunningEvmRpc, startEvmRpc } from "../rpc/evm/index.js";
import { BlockStore, openKvStore, StateStore } from "../store/index.js";
import type { ChainState, GenesisDoc } from "../types/index.js";
import { bytesEqual } from "../util/bytes.js";
import { systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { DevChain, DevTime } from "./devChain.js";
import { buildEvmServices, EvmFeed } from "./evmServices.js";
import { IndexingPublisher } from "./indexingPublisher.js";
import type { NodeMetrics } from "./metrics.js";
import { p2pAccess } from "./p2pServices.js";
import { buildCometServices, nodeInfoFor } from "./services.js";
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
  /** The p2p switch (peers, `id@host:port` of its listener). */
  readonly p2p: Switch;
  readonly mempool: Mempool;
  readonly blockStore: BlockStore;
  /** The application (EvmApplication when proxy_app = "evm"). */
  readonly app: Application;
  /** Dev accounts the EVM app funded at genesis (empty for other apps or funded genesis files). */
  readonly devAccounts: readonly DevAccount[];
  /** A dev chain's controls (`cometh dev`), undefined on other chains. */
  readonly dev: DevChain | undefined;
  /** The read workers (`[json-rpc] read-workers` > 0 on a chain that is not a dev chain). */
  readonly readPool: EvmReadPool | undefined;
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

/** How a dev chain (`cometh dev`, genesis `evm.dev_chain`) starts; ignored on other chains. */
export interface DevStartOptions {
  /** Mine a block as soon as a tx waits (default true). */
  automine?: boolean;
  /** Interval mining: a block every this many seconds (0 = off, the default). */
  blockTimeSec?: number;
  /** Start with the request log off. */
  silent?: boolean;
  /** Where the request log and console.log lines go. */
  print?: (line: string) => void;
  /** A state dump (Anvil's JSON or gzip) loaded before the RPC servers start (`--load-state`). */
  loadState?: Uint8Array;
  /** The dev keyring's mnemonic and size (default Hardhat's, 10). */
  mnemonic?: string;
  accounts?: number;
}

export interface StartNodeOptions {
  dev?: DevStartOptions;
}

/** True when the genesis marks a dev chain (`app_state.evm.dev_chain`). */
export function isDevChainGenesis(genesis: GenesisDoc): boolean {
  let state = genesis.appState;
  if (typeof state === "string") {
    try {
      state = JSON.parse(state) as unknown;
    } catch {
      return false;
    }
  } else if (state instanceof Uint8Array) {
    try {
      state = JSON.parse(Buffer.from(state).toString("utf8")) as unknown;
    } catch {
      return false;
    }
  }
  const evm = (state as { evm?: { dev_chain?: unknown } } | null | undefined)?.evm;
  return evm?.dev_chain === true;
}

/**
 * Builds and starts the node in dependency order: stores → app → mempool → events/indexer →
 * consensus (handshake + WAL replay) → RPC. Anything that fails part-way stops what was started.
 */
export async function startNode(config: NodeConfig, log: Logger, opts: StartNodeOptions = {}): Promise<RunningNode> {
  const stack = new ShutdownStack(log);
  try {
    return await build(config, log, stack, opts);
  } catch (err) {
    await stack.unwind();
    throw err;
  }
}

async function build(
  config: NodeConfig,
  log: Logger,
  stack: ShutdownStack,
  opts: StartNodeOptions,
): Promise<RunningNode> {
  const dbDir = config.base.dbDir;
  await mkdir(dbDir, { recursive: true });
  const genesis = loadGenesis(config.base.genesisFile);
  const devChain = config.base.proxyApp === "evm" && isDevChainGenesis(genesis);
  const devTime = devChain ? new DevTime(systemClock) : undefined;
  const nodeKey = await loadOrGenerateNodeKey(config.base.nodeKeyFile);
  const signer = await FilePV.loadOrGenerate(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
  // A dev chain trades durability against power loss for speed (docs/dev-chain.md): no fsyncs.
  const noSync = devChain;
  if (devChain) {
    signer.setDurable(false);
    stack.push("validator state", () => signer.flushState());
  }

  const db = await openKvStore(join(dbDir, DB_FILES.node), { noSync });
  stack.push("node database", () => db.close());
  const blockStore = new BlockStore(db);
  const stateStore = new StateStore(db, { keepHistory: devChain });

  const app = await createApp(config, log, devChain ? (opts.dev ?? {}) : undefined);
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
  const indexer = await createIndexer(config, genesis, dbDir, noSync);
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

  const evidencePool = new EvidencePool({ db, stateStore, blockStore, log: log.child({ module: "evidence" }) });
  const consensusLog = log.child({ module: "consensus" });
  const consensusReactor = new ConsensusReactor(consensusLog);
  const dev = opts.dev ?? {};
  const consensusOpts: ConsensusOptions =
    devTime === undefined
      ? consensusOptions(config)
      : {
          ...consensusOptions(config),
          dev: { automine: dev.automine ?? true, intervalMs: Math.round((dev.blockTimeSec ?? 0) * 1000) },
          proposerTime: devTime.proposerTime,
          // Time travel moves block times away from the wall clock on purpose.
          blockTimeToleranceMs: 0,
        };
  const consensus = await createConsensus(consensusOpts, {
    app,
    blockStore,
    stateStore,
    mempool,
    events: publisher,
    genesis,
    signer,
    clock: systemClock,
    log: consensusLog,
    gossip: consensusReactor,
    evidence: evidencePool,
    evidencePool,
  });
  consensusReactor.setConsensus(consensus);
  // Blocks committed while the indexer was behind (a crash between commit and index write).
  await catchUpIndexer(indexer, blockStore, stateStore, log);

  // Block sync first unless this node alone can make blocks (node/node.go onlyValidatorIsUs).
  const syncFirst = config.base.blockSyncMode && !onlyValidatorIsUs(consensus.chainState(), signer.address());
  if (syncFirst) consensusReactor.waitForSync();
  const syncLog = log.child({ module: "blocksync" });
  let consensusStarted = false;
  const startConsensus = async () => {
    if (consensusStarted) return;
    consensusStarted = true;
    consensusReactor.switchToConsensus();
    await consensus.start();
  };
  const blocksync = new BlocksyncReactor(
    {
      blockStore,
      blockExec: new BlockExecutor(
        {
          app,
          blockStore,
          stateStore,
          mempool,
          evidence: evidencePool,
          events: publisher,
          clock: systemClock,
          log: syncLog,
        },
        { blockTimeToleranceMs: config.consensus.blockTimeToleranceMs },
      ),
      state: consensus.chainState(),
      clock: systemClock,
      log: syncLog,
      onCaughtUp: async (_state, synced) => {
        syncLog.info({ blocksSynced: synced }, "caught up: switching to consensus");
        await startConsensus();
      },
    },
    { enabled: syncFirst, localAddress: signer.address() },
  );
  stack.push("consensus", () => consensus.stop());

  const p2pLog = log.child({ module: "p2p" });
  const p2p = config.p2p;
  const addrBook = new AddrBook({
    filePath: p2p.addrBookFile,
    routabilityStrict: p2p.addrBookStrict,
    log: p2pLog,
  });
  const sw = new Switch({
    nodeKey: { id: nodeKey.id, privKey: nodeKey.privKey.bytes },
    nodeInfo: nodeInfoFor(config, genesis, nodeKey, consensus),
    laddr: p2p.laddr,
    ...(p2p.externalAddress === "" ? {} : { externalAddress: p2p.externalAddress }),
    maxNumInboundPeers: p2p.maxNumInboundPeers,
    maxNumOutboundPeers: p2p.maxNumOutboundPeers,
    unconditionalPeerIds: splitAddressList(p2p.unconditionalPeerIds),
    privatePeerIds: splitAddressList(p2p.privatePeerIds),
    persistentPeersMaxDialPeriodMs: p2p.persistentPeersMaxDialPeriodMs,
    allowDuplicateIp: p2p.allowDuplicateIp,
    handshakeTimeoutMs: p2p.handshakeTimeoutMs,
    dialTimeoutMs: p2p.dialTimeoutMs,
    mconfig: mconnConfigFromP2P(p2p),
    log: p2pLog,
    addrBook,
  });
  // CometBFT's order, which is also the order of NodeInfo.channels: blocksync, consensus, mempool, evidence, pex.
  sw.addReactor(blocksync);
  sw.addReactor(consensusReactor);
  sw.addReactor(
    new MempoolReactor(
      mempool,
      { broadcast: config.mempool.broadcast, maxTxBytes: config.mempool.maxTxBytes },
      log.child({ module: "mempool" }),
    ),
  );
  sw.addReactor(
    new EvidenceReactor(evidencePool, {
      log: log.child({ module: "evidence" }),
      peerHeight: (peer) =>
        consensus.peerStateViews().find((v) => v.nodeAddress.startsWith(`${peer.id}@`))?.roundState?.height,
    }),
  );
  if (p2p.pex) {
    sw.addReactor(
      new PexReactor({
        book: addrBook,
        log: p2pLog,
        seeds: splitAddressList(p2p.seeds),
        seedMode: p2p.seedMode,
        persistentPeersMaxDialPeriodMs: p2p.persistentPeersMaxDialPeriodMs,
      }),
    );
  }
  await addrBook.start();
  stack.push("address book", () => addrBook.stop());
  await sw.start();
  stack.push("p2p switch", () => sw.stop());
  const persistent = splitAddressList(p2p.persistentPeers);
  if (persistent.length > 0) sw.dialPeersAsync(persistent, { persistent: true });
  if (!syncFirst) await startConsensus();

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
        p2p: p2pAccess(sw),
        p2pNodeInfo: () => sw.nodeInfo(),
        evidence: evidencePool,
        isCatchingUp: () => blocksync.isSyncing(),
      }),
      log.child({ module: "rpc-server" }),
    );
    stack.push("node RPC", () => (rpc as RunningCometRpc).close());
  }

  let devControl: DevChain | undefined;
  if (devTime !== undefined && app instanceof EvmApplication) {
    devControl = new DevChain({
      consensus,
      mempool,
      app,
      blockStore,
      stateStore,
      indexer,
      signer,
      evidence: evidencePool,
      feed: evmFeed,
      time: devTime,
      log: log.child({ module: "dev" }),
      ...(dev.print === undefined ? {} : { print: dev.print }),
      ...(dev.silent === undefined ? {} : { silent: dev.silent }),
    });
    // Clients see the loaded state from their first request, as with anvil --load-state.
    if (dev.loadState !== undefined) await devControl.loadState(dev.loadState);
  }

  let evmRpc: RunningEvmRpc | undefined;
  let readPool: EvmReadPool | undefined;
  if (config.jsonRpc.enable && app instanceof EvmApplication) {
    // eth_call, eth_estimateGas, debug_traceCall and eth_getLogs on worker threads (readPool.ts). A dev
    // chain keeps them on the main thread: console.log lines, rollbacks that reuse heights.
    if (config.jsonRpc.readWorkers > 0 && !devChain) {
      const pool = new EvmReadPool({
        size: config.jsonRpc.readWorkers,
        setup: app.readWorkerSetup(),
        reader: app.reader,
        log: log.child({ module: "read-workers" }),
      });
      readPool = pool;
      // Stopped after the JSON-RPC server (pushed later, so unwound first), before the app closes its database.
      stack.push("read workers", () => pool.close());
    }
    evmRpc = await startEvmRpc(
      config.jsonRpc,
      buildEvmServices({
        config,
        genesis,
        nodeKey,
        app,
        mempool,
        blockStore,
        feed: evmFeed,
        dev: devControl,
        readPool,
      }),
      log.child({ module: "json-rpc" }),
    );
    stack.push("Ethereum JSON-RPC", () => (evmRpc as RunningEvmRpc).close());
  }

  if (config.instrumentation.prometheus) {
    // prom-client (with @opentelemetry/api, ~85 modules) is loaded only when metrics are on (default off).
    const { NodeMetrics, serveMetrics } = await import("./metrics.js");
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
    p2p: sw,
    mempool,
    blockStore,
    app,
    devAccounts: app instanceof EvmApplication ? app.devAccounts() : [],
    dev: devControl,
    readPool,
    stop: () => {
      stopped ??= stack.unwind();
      return stopped;
    },
  };
}

/** True when the validator set is this node alone: nobody else can make blocks to sync from. */
function onlyValidatorIsUs(state: ChainState, address: Uint8Array): boolean {
  const vals = state.validators.validators;
  return vals.length === 1 && bytesEqual(vals[0]?.address ?? new Uint8Array(0), address);
}

async function createApp(config: NodeConfig, log: Logger, dev?: DevStartOptions): Promise<Application> {
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
        ...(dev === undefined ? {} : { noSync: true }),
        ...(dev?.mnemonic === undefined ? {} : { mnemonic: dev.mnemonic }),
        ...(dev?.accounts === undefined ? {} : { devAccountCount: dev.accounts }),
      });
  }
}

async function createIndexer(
  config: NodeConfig,
  genesis: GenesisDoc,
  dbDir: string,
  noSync: boolean,
): Promise<Indexer> {
  switch (config.txIndex.indexer) {
    case "null":
      return createNullIndexer();
    case "kv":
      return createKvIndexer(await openKvStore(join(dbDir, DB_FILES.txIndex), { noSync }));
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
