import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type AbciConnectionError,
  type Application,
  createEvmApp,
  createKvStoreApp,
  type DevAccount,
  EvmApplication,
  EvmReadPool,
  type ForkSource,
} from "../app/index.js";
import { BlocksyncReactor } from "../blocksync/index.js";
import {
  ConfigError,
  loadGenesis,
  loadOrGenerateNodeKey,
  type NodeConfig,
  type NodeKey,
  parseProxyApp,
} from "../config/index.js";
import {
  BlockExecutor,
  type Consensus,
  type ConsensusApp,
  type ConsensusOptions,
  createConsensus,
  handshake,
  MiningPolicy,
  makeGenesisState,
} from "../consensus/index.js";
import { CANCEL_REASONS, ChainEpoch, EventBus, RewindRegistry, TxInclusion } from "../events/index.js";
import { EvidencePool, EvidenceReactor } from "../evidence/index.js";
import { createKvIndexer, createNullIndexer, createPsqlIndexer, type Indexer, writeBehind } from "../indexer/index.js";
import { Mempool } from "../mempool/index.js";
import { AddrBook, mconnConfigFromP2P, PexReactor, Switch, splitAddressList } from "../p2p/index.js";
import { FilePV, SignerClient } from "../privval/index.js";
import { ConsensusReactor, MempoolReactor } from "../reactors/index.js";
import {
  type CometRpcConfig,
  type RunningCometRpc,
  type StartCometRpcOptions,
  startCometRpc,
} from "../rpc/comet/index.js";
import { DEFAULT_BODY_LIMIT, type RunningEvmRpc, startEvmRpc } from "../rpc/evm/index.js";
import { LightClientStateProvider, NoSnapshotsError, StatesyncReactor } from "../statesync/index.js";
import { BlockStore, type KvStore, openKvBackend, StateStore } from "../store/index.js";
import { type ChainState, type GenesisDoc, ValidatorSet } from "../types/index.js";
import { bytesEqual, hexToBytes } from "../util/bytes.js";
import { systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { startupMark } from "../util/startupTrace.js";
import { lockDataDir } from "./dataDirLock.js";
import { DevChain, DevTime } from "./devChain.js";
import { NodeServiceError } from "./errors.js";
import { ReadProcesses } from "./evm/readProcesses.js";
import { buildEvmServices, EvmFeed } from "./evmServices.js";
import { IndexingPublisher } from "./indexingPublisher.js";
import type { MetricsSources, NodeMetrics } from "./metrics.js";
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
  /** How many times the chain reused heights (a dev chain's rollbacks), with a listener per rewind. */
  readonly epoch: ChainEpoch;
  /** The one "tx included" wait, fed with each block once it is indexed and readable. */
  readonly txInclusion: TxInclusion;
  /** The application (EvmApplication when proxy_app = "evm"). */
  readonly app: Application;
  /** Dev accounts the EVM app funded at genesis (empty for other apps or funded genesis files). */
  readonly devAccounts: readonly DevAccount[];
  /** A dev chain's controls (`cometh dev`), undefined on other chains. */
  readonly dev: DevChain | undefined;
  /** The read workers (`[json-rpc] read-workers` > 0 on a chain that is not a dev chain). */
  readonly readPool: EvmReadPool | undefined;
  /** The read processes (`[json-rpc] read-processes` > 0 on a chain that is not a dev chain). */
  readonly readProcesses: ReadProcesses | undefined;
  /** Stops everything in the reverse order of start; safe to call twice. */
  stop(): Promise<void>;
  /**
   * Resolves (after the node has stopped itself) when it met an error it cannot run past: the
   * connection to an external ABCI application was lost, as CometBFT stops then. Never resolves otherwise.
   */
  readonly failed: Promise<Error>;
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
  /** A forked chain's source (`--fork-url`), resolved by the CLI; the app owns and closes it. */
  fork?: ForkSource;
  /** Told of the new source after anvil_reset moved the chain to another fork (the CLI records it). */
  onForkReset?: (fork: ForkSource) => void;
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

/**
 * The phases, in order (each pushes what it starts onto `stack`): keys and stores, the app, metrics,
 * mempool, event delivery (bus, indexer, publisher), consensus and its reactor, block sync, p2p,
 * then consensus itself (unless block sync goes first), a dev chain's controls, the Ethereum
 * JSON-RPC, the node RPC and the metrics server.
 */
async function build(
  config: NodeConfig,
  log: Logger,
  stack: ShutdownStack,
  opts: StartNodeOptions,
): Promise<RunningNode> {
  startupMark("node: build");
  const base = await openKeysAndStores(config, log, stack, opts);
  startupMark("node: keys and stores open");
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= stack.unwind();
    return stopped;
  };
  const fatal = new FatalStop(log, stop);
  const app = await createApp(base, fatal, base.devChain ? (opts.dev ?? {}) : undefined);
  stack.push("application", () => app.close());
  startupMark("node: app created");

  // What the metrics read at scrape time; set as the subsystems are built (metrics exist before them).
  const live: LiveParts = {};
  const metrics = await createMetrics(base, app, live);
  /** The app as consensus and block sync call it (timed when metrics are on). */
  const consensusApp = metrics === undefined ? app : metrics.cometbft.consensusApp(app);
  const mempool = createMempool(config, log, app, metrics);
  live.mempool = mempool;
  startupMark("node: metrics, mempool");
  const delivery = await createEventDelivery(base, metrics, live);
  startupMark("node: event delivery");
  const withEvents = { ...base, app, live, metrics, mempool, ...delivery };
  const stateSync = wantsStateSync(base);
  const core: Core = { ...withEvents, ...(await createConsensusAndReactor(withEvents, consensusApp, !stateSync)) };

  startupMark("node: consensus created (handshake done)");
  const sync = createBlockSync(core, consensusApp, stateSync);
  stack.push("consensus", () => core.consensus.stop());
  const statesync = new StatesyncReactor(app, log.child({ module: "statesync" }));
  live.statesync = statesync;
  const sw = await startP2P(core, sync.blocksync, statesync);
  startupMark("node: p2p started");
  if (stateSync) void runStateSync(core, consensusApp, statesync, sync, fatal);
  else if (!sync.syncFirst) await sync.startConsensus();

  startupMark("node: consensus started");
  // The Ethereum JSON-RPC first: what a dev chain's clients wait for (docs/dev-chain.md "Start-up").
  const devControl = await createDevControl(core);
  startupMark("node: dev controls");
  const { evmRpc, readPool, readProcesses } = await startEthereumRpc(core, sw, devControl);
  startupMark("node: Ethereum JSON-RPC listening");
  const rpc = await startNodeRpc(core, sw, sync.blocksync);
  startupMark("node: node RPC listening");
  const metricsAddress = await startMetricsServer(core);

  startupMark("node: metrics server");
  fatal.arm();
  return {
    config,
    genesis: core.genesis,
    nodeKey: core.nodeKey,
    rpcAddresses: rpc?.addresses ?? [],
    evmRpc: evmRpc === undefined ? undefined : { http: evmRpc.httpAddress, ws: evmRpc.wsAddress },
    metricsAddress,
    consensus: core.consensus,
    p2p: sw,
    mempool,
    blockStore: core.blockStore,
    epoch: core.epoch,
    txInclusion: core.txInclusion,
    app,
    devAccounts: app instanceof EvmApplication ? app.devAccounts() : [],
    dev: devControl,
    readPool,
    readProcesses,
    stop,
    failed: fatal.failed,
  };
}

/**
 * Stops the node for an error it cannot run past (an external application lost). While the node is
 * still starting, the error only is logged: the request that met it fails, and startNode with it.
 */
class FatalStop {
  readonly failed: Promise<Error>;
  readonly #log: Logger;
  readonly #stop: () => Promise<void>;
  #report: (err: Error) => void = () => {};
  #armed = false;
  #error: Error | undefined;

  constructor(log: Logger, stop: () => Promise<void>) {
    this.#log = log;
    this.#stop = stop;
    this.failed = new Promise<Error>((resolve) => {
      this.#report = resolve;
    });
  }

  /** An external application's connection was lost (proxy/multi_app_conn.go killTMOnClientError). */
  appLost(err: AbciConnectionError): void {
    this.#log.error(
      { err: err.message, connection: err.connection },
      `${err.connection} connection terminated. Did the application crash? Please restart cometh`,
    );
    this.#fail(err);
  }

  /** State sync failed for a reason other than finding no snapshot (CometBFT only logs it and waits forever). */
  stateSyncFailed(err: Error): void {
    this.#log.error(
      { err: err.message },
      "State sync failed. Check [statesync] rpc_servers, trust_height and trust_hash, remove the data directory and start again",
    );
    this.#fail(err);
  }

  /** The node has started: from now on a fatal error stops it (one met while starting does now). */
  arm(): void {
    this.#armed = true;
    if (this.#error !== undefined) this.#stopFor(this.#error);
  }

  #fail(err: Error): void {
    if (this.#error !== undefined) return;
    this.#error = err;
    if (this.#armed) this.#stopFor(err);
  }

  #stopFor(err: Error): void {
    this.#log.error({ err: err.message }, "stopping the node");
    void this.#stop().then(() => this.#report(err));
  }
}

/** What every phase of build() reads: the settings, what to stop, the keys and the node's stores. */
interface Base {
  readonly config: NodeConfig;
  readonly log: Logger;
  readonly stack: ShutdownStack;
  readonly opts: StartNodeOptions;
  readonly genesis: GenesisDoc;
  readonly dbDir: string;
  /** `cometh dev`'s chain (an EVM genesis marked dev_chain). */
  readonly devChain: boolean;
  readonly devTime: DevTime | undefined;
  /** No fsyncs (a dev chain). */
  readonly noSync: boolean;
  readonly nodeKey: NodeKey;
  /** The key file, or with priv_validator_laddr the external signer (docs/remote-signer.md). */
  readonly signer: FilePV | SignerClient;
  readonly db: KvStore;
  readonly blockStore: BlockStore;
  readonly stateStore: StateStore;
  /** The one "heights were reused" signal (a dev chain's rollbacks) both RPC servers follow. */
  readonly epoch: ChainEpoch;
}

/** What is built before the network and the servers start. */
interface Core extends Base {
  readonly app: Application;
  readonly live: LiveParts;
  readonly metrics: NodeMetrics | undefined;
  readonly mempool: Mempool;
  readonly bus: EventBus;
  readonly indexer: Indexer;
  readonly evmFeed: EvmFeed;
  /** The one "tx included" wait (broadcast_tx_commit, automined sends, eth_sendRawTransactionSync, cheats). */
  readonly txInclusion: TxInclusion;
  readonly publisher: IndexingPublisher;
  readonly evidencePool: EvidencePool;
  readonly consensusReactor: ConsensusReactor;
  readonly consensus: Consensus;
  /** A dev chain's block production (automine, interval, mine requests); undefined on other chains. */
  readonly mining: MiningPolicy | undefined;
}

/** Genesis, node key, validator key and the node database (block and state stores). */
async function openKeysAndStores(
  config: NodeConfig,
  log: Logger,
  stack: ShutdownStack,
  opts: StartNodeOptions,
): Promise<Base> {
  const dbDir = config.base.dbDir;
  await mkdir(dbDir, { recursive: true });
  // One node per data directory (dataDirLock.ts): released last, after every store has closed.
  stack.push("data directory lock", await lockDataDir(dbDir));
  const genesis = loadGenesis(config.base.genesisFile);
  const devChain = config.base.proxyApp === "evm" && isDevChainGenesis(genesis);
  const devTime = devChain ? new DevTime(systemClock) : undefined;
  checkMemoryBackend(config, devChain);
  const nodeKey = await loadOrGenerateNodeKey(config.base.nodeKeyFile);
  const signer = await openSigner(config, genesis, devChain, stack, log);
  // A dev chain trades durability against power loss for speed (docs/dev-chain.md): no fsyncs.
  const noSync = devChain;

  const db = await openKvBackend(config.base.dbBackend, join(dbDir, DB_FILES.node), { noSync });
  stack.push("node database", () => db.close());
  const blockStore = new BlockStore(db);
  const stateStore = new StateStore(db, { keepHistory: devChain });
  return {
    config,
    log,
    stack,
    opts,
    genesis,
    dbDir,
    devChain,
    devTime,
    noSync,
    nodeKey,
    signer,
    db,
    blockStore,
    stateStore,
    epoch: new ChainEpoch(),
  };
}

/**
 * `db_backend = "memdb"` (docs/dev-chain.md "Memory stores"): every store starts empty, so the chain
 * starts from its genesis at each start, with no WAL; a dev chain's only (its one validator cannot
 * double sign, and nothing else may lose its blocks at a restart). A home whose earlier run left a
 * WAL or a signed height was run with LMDB: starting it from genesis in memory would sign its heights
 * again, so it is refused.
 */
function checkMemoryBackend(config: NodeConfig, devChain: boolean): void {
  if (config.base.dbBackend !== "memdb") return;
  if (!devChain) {
    throw new ConfigError(
      config.files.config,
      "db_backend",
      '"memdb" keeps no block, state or WAL across restarts: it is for dev chains only (`cometh dev`); use "lmdb"',
    );
  }
  if (existsSync(config.consensus.walPath))
    throw memdbOnRunHome(config, `${config.consensus.walPath} holds an earlier run's WAL`);
}

/** memdb on a home an LMDB run left a trace of (`found`): refused, as checkMemoryBackend says. */
function memdbOnRunHome(config: NodeConfig, found: string): ConfigError {
  return new ConfigError(
    config.files.config,
    "db_backend",
    `"memdb" starts the chain from its genesis, but ${found}: run \`cometh unsafe-reset-all\` on this home first, or keep "lmdb"`,
  );
}

/**
 * The validator's signer: the key file, or with priv_validator_laddr an external signer that must
 * connect and give its key before the node goes on (node/setup.go createAndStartPrivValidatorSocketClient).
 */
async function openSigner(
  config: NodeConfig,
  genesis: GenesisDoc,
  devChain: boolean,
  stack: ShutdownStack,
  log: Logger,
): Promise<FilePV | SignerClient> {
  const laddr = config.base.privValidatorLaddr;
  if (laddr !== "") {
    if (devChain) {
      throw new ConfigError(
        config.files.config,
        "priv_validator_laddr",
        "must be empty on a dev chain: its rollbacks rewrite the key file's sign state, which a remote signer keeps",
      );
    }
    const client = await SignerClient.start(laddr, genesis.chainId, log.child({ module: "privval" }));
    stack.push("remote signer", () => client.close());
    return client;
  }
  const pv = await FilePV.loadOrGenerate(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
  const signed = pv.lastSignState().height;
  if (config.base.dbBackend === "memdb" && signed > 0) {
    throw memdbOnRunHome(config, `${config.base.privValidatorStateFile} has signed height ${signed}`);
  }
  if (devChain) {
    pv.setDurable(false);
    // With memdb the chain is gone at stop: the file keeps height 0 for the next start from genesis.
    if (config.base.dbBackend !== "memdb") stack.push("validator state", () => pv.flushState());
  }
  return pv;
}

/** The metrics, when `[instrumentation] prometheus` is on; they read `live` at scrape time. */
async function createMetrics(base: Base, app: Application, live: LiveParts): Promise<NodeMetrics | undefined> {
  const { config, genesis, stateStore, blockStore, signer } = base;
  if (!config.instrumentation.prometheus) return undefined;
  // prom-client (with @opentelemetry/api, ~85 modules) is loaded only when metrics are on (default off).
  const { NodeMetrics } = await import("./metrics.js");
  const metrics = new NodeMetrics(
    config.instrumentation.namespace,
    genesis.chainId,
    metricsSources(live, app, stateStore, blockStore, signer.address()),
  );
  metrics.cometbft.instrumentBlockStore(blockStore);
  return metrics;
}

function createMempool(config: NodeConfig, log: Logger, app: Application, metrics: NodeMetrics | undefined): Mempool {
  return new Mempool(
    {
      size: config.mempool.size,
      maxTxsBytes: config.mempool.maxTxsBytes,
      maxTxBytes: config.mempool.maxTxBytes,
      cacheSize: config.mempool.cacheSize,
      keepInvalidTxsInCache: config.mempool.keepInvalidTxsInCache,
      recheck: config.mempool.recheck,
    },
    {
      app: metrics === undefined ? app : metrics.cometbft.mempoolApp(app),
      log: log.child({ module: "mempool" }),
      ...(metrics === undefined ? {} : { metrics: metrics.mempool }),
    },
  );
}

/** The event bus, the indexer, and the publisher that indexes each block before its events go out. */
async function createEventDelivery(
  base: Base,
  metrics: NodeMetrics | undefined,
  live: LiveParts,
): Promise<Pick<Core, "bus" | "indexer" | "evmFeed" | "txInclusion" | "publisher">> {
  const { config, log, stack, genesis, dbDir, noSync, blockStore } = base;
  const bus = new EventBus({ log: log.child({ module: "events" }) });
  stack.push("event bus", () => bus.close());
  // Fed below with each block once it is indexed and readable; rejected at each rewind of the epoch.
  const txInclusion = new TxInclusion({ epoch: base.epoch });
  stack.push("tx inclusion waits", () => txInclusion.stop(CANCEL_REASONS.exited));
  const indexer = await createIndexer(config, genesis, dbDir, noSync, log.child({ module: "txindex" }));
  stack.push("indexer", () => indexer.close());
  live.bus = bus;
  live.txInclusion = txInclusion;
  const evmFeed = new EvmFeed(txInclusion, base.epoch);
  const publisher = new IndexingPublisher(
    bus,
    indexer,
    log.child({ module: "txindex" }),
    ({ block, resultFinalizeBlock }) => {
      const height = block.header.height;
      evmFeed.newBlock(height);
      txInclusion.blockCommitted(height, block.data.txs, resultFinalizeBlock.txResults);
      metrics?.onBlock(block, blockStore.loadBlockMeta(height)?.blockSize ?? 0, live.blocksync?.isSyncing() ?? false);
    },
    () => blockStore.base(),
  );
  stack.push("event delivery", () => publisher.flush());
  return { bus, indexer, evmFeed, txInclusion, publisher };
}

/**
 * The evidence pool, the consensus reactor and consensus (handshake and WAL replay; not started),
 * then the indexer catches up with blocks committed while it was behind.
 */
async function createConsensusAndReactor(
  parts: Omit<Core, "evidencePool" | "consensusReactor" | "consensus" | "mining">,
  consensusApp: ConsensusApp,
  runHandshake: boolean,
): Promise<Pick<Core, "evidencePool" | "consensusReactor" | "consensus" | "mining">> {
  const { config, log, db, stateStore, blockStore, devTime, mempool, publisher, genesis, signer, metrics } = parts;
  const evidencePool = new EvidencePool({ db, stateStore, blockStore, log: log.child({ module: "evidence" }) });
  const consensusLog = log.child({ module: "consensus" });
  const consensusReactor = new ConsensusReactor(consensusLog);
  const dev = parts.opts.dev ?? {};
  const mining =
    devTime === undefined
      ? undefined
      : new MiningPolicy(
          mempool,
          { automine: dev.automine ?? true, intervalMs: Math.round((dev.blockTimeSec ?? 0) * 1000) },
          devTime.proposerTime,
        );
  const consensusOpts: ConsensusOptions =
    mining === undefined
      ? consensusOptions(config)
      : {
          ...consensusOptions(config),
          production: mining,
          // Time travel moves block times away from the wall clock on purpose.
          blockTimeToleranceMs: 0,
        };
  const consensus = await createConsensus(
    consensusOpts,
    {
      app: consensusApp,
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
      ...(metrics === undefined ? {} : { metrics: metrics.cometbft }),
    },
    { handshake: runHandshake },
  );
  parts.live.consensus = consensus;
  consensusReactor.setConsensus(consensus);
  // A remote signer that dials back gets the vote it missed (consensus would otherwise wait for peers).
  if (signer instanceof SignerClient) signer.onConnected(() => consensus.retrySigning());
  // Blocks committed while the indexer was behind (a crash between commit and index write).
  await catchUpIndexer(parts.indexer, blockStore, stateStore, log);
  return { evidencePool, consensusReactor, consensus, mining };
}

/**
 * Block sync, which goes first unless this node alone can make blocks (node/node.go
 * onlyValidatorIsUs); `startConsensus` starts consensus once (when block sync has caught up, or
 * right after p2p when it does not run).
 */
function createBlockSync(core: Core, consensusApp: ConsensusApp, afterStateSync: boolean): BlockSyncPhase {
  const { config, log, blockStore, stateStore, mempool, evidencePool, publisher, consensus, consensusReactor } = core;
  const syncFirst = config.base.blockSyncMode && !onlyValidatorIsUs(consensus.chainState(), core.signer.address());
  if (syncFirst || afterStateSync) consensusReactor.waitForSync();
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
          app: consensusApp,
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
    // After state sync, block sync starts from the restored state (switchToBlockSync).
    { enabled: syncFirst && !afterStateSync, localAddress: core.signer.address() },
  );
  core.live.blocksync = blocksync;
  return { syncFirst, startConsensus, blocksync };
}

interface BlockSyncPhase {
  syncFirst: boolean;
  startConsensus: () => Promise<void>;
  blocksync: BlocksyncReactor;
}

/**
 * State sync runs when enabled on a node without state, unless this node alone can make blocks
 * (CometBFT: "Found local state with non-zero height, skipping state sync"). Never on a dev chain.
 */
function wantsStateSync(base: Base): boolean {
  const { config, stateStore, genesis, signer, log, devChain } = base;
  if (!config.stateSync.enable || devChain) return false;
  if ((stateStore.load()?.lastBlockHeight ?? 0) > 0) {
    log.info("Found local state with non-zero height, skipping state sync");
    return false;
  }
  return !onlyValidatorIsUs(makeGenesisState(genesis), signer.address());
}

/**
 * startStateSync (node/node.go): the light client checks the trust options, the reactor restores a
 * snapshot, the state and the commit at its height are stored (the block store starts at the next
 * height), then block sync (or consensus) goes on from there. With no snapshot to be found the node
 * runs the handshake and block syncs from genesis instead (docs/state-sync.md).
 */
async function runStateSync(
  core: Core,
  consensusApp: ConsensusApp,
  reactor: StatesyncReactor,
  next: BlockSyncPhase,
  fatal: FatalStop,
): Promise<void> {
  const { config, genesis, stateStore, blockStore, publisher } = core;
  const ss = config.stateSync;
  const log = core.log.child({ module: "statesync" });
  const startedMs = Date.now();
  log.info({ rpcServers: ss.rpcServers, trustHeight: ss.trustHeight }, "Starting state sync");
  const resume = async (state: ChainState) => {
    if (next.syncFirst) next.blocksync.switchToBlockSync(state);
    else await next.startConsensus();
  };
  try {
    const provider = new LightClientStateProvider({
      chainId: genesis.chainId,
      initialHeight: genesis.initialHeight,
      servers: splitAddressList(ss.rpcServers),
      trust: {
        height: ss.trustHeight,
        hash: hexToBytes(ss.trustHash) ?? new Uint8Array(0),
        periodMs: ss.trustPeriodMs,
      },
      log: core.log.child({ module: "light" }),
    });
    await provider.initialize();
    const { state, commit } = await reactor.sync(provider, ss.discoveryTimeMs, {
      tempDir: ss.tempDir,
      chunkFetchers: ss.chunkFetchers,
      chunkRequestTimeoutMs: ss.chunkRequestTimeoutMs,
    });
    await stateStore.bootstrap(state);
    await blockStore.saveSeenCommit(state.lastBlockHeight, commit);
    log.info(
      { height: state.lastBlockHeight, elapsedMs: Date.now() - startedMs },
      "State sync complete: the block store starts at the next height",
    );
    await resume(state);
  } catch (err) {
    if (err instanceof NoSnapshotsError) {
      log.error(
        { err: err.message },
        "State sync found no snapshot: falling back to block sync from genesis (set [state-sync] snapshot-interval on some peers' app.toml to serve snapshots)",
      );
      try {
        const { state } = await handshake(
          { app: consensusApp, blockStore, stateStore, genesis, events: publisher, clock: systemClock, log },
          stateStore.load() ?? makeGenesisState(genesis),
        );
        await resume(state);
      } catch (fallbackErr) {
        fatal.stateSyncFailed(fallbackErr as Error);
      }
      return;
    }
    fatal.stateSyncFailed(err instanceof Error ? err : new NoSnapshotsError(String(err)));
  }
}

/** The address book, the switch with every reactor, started; persistent peers are dialled. */
async function startP2P(core: Core, blocksync: BlocksyncReactor, statesync: StatesyncReactor): Promise<Switch> {
  const { config, log, stack, genesis, nodeKey, consensus, consensusReactor, mempool, evidencePool, metrics } = core;
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
    ...(metrics === undefined ? {} : { traffic: metrics.cometbft }),
  });
  core.live.p2p = sw;
  // CometBFT's order, which is also the order of NodeInfo.channels: blocksync, consensus, mempool, evidence, statesync, pex.
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
  sw.addReactor(statesync);
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
  return sw;
}

/** The CometBFT node RPC on `[rpc] laddr` (none when empty), with the dashboard when `[rpc] dashboard`. */
async function startNodeRpc(core: Core, sw: Switch, blocksync: BlocksyncReactor): Promise<RunningCometRpc | undefined> {
  const { config, log, stack, genesis, nodeKey, signer, blockStore, stateStore, app, mempool, bus, consensus } = core;
  const { indexer, evidencePool, metrics } = core;
  if (config.rpc.laddr === "") return undefined;
  // The dashboard page loads only when on; its bundle is read (or, from the sources, built) on the
  // first visit, so testnets nobody looks at pay nothing for it.
  let pages: StartCometRpcOptions["pages"];
  if (config.rpc.dashboard) {
    const { dashboardPages } = await import("../dashboard/index.js");
    pages = dashboardPages();
  }
  const rpc = await startCometRpc(
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
      txWaits: core.txInclusion,
      consensus,
      indexer,
      p2p: p2pAccess(sw),
      p2pNodeInfo: () => sw.nodeInfo(),
      evidence: evidencePool,
      isCatchingUp: () => blocksync.isSyncing() || (core.live.statesync?.isSyncing() ?? false),
      epoch: core.epoch,
    }),
    log.child({ module: "rpc-server" }),
    {
      ...(metrics === undefined ? {} : { observer: metrics.cometh.nodeRpc }),
      ...(pages === undefined ? {} : { pages }),
    },
  );
  if (pages !== undefined) {
    for (const a of rpc.addresses) {
      if (a.startsWith("tcp://")) log.info({ url: `http://${a.slice(6)}/dashboard` }, "dashboard listening");
    }
  }
  stack.push("node RPC", () => rpc.close());
  return rpc;
}

/** A dev chain's controls (`cometh dev`; mining, cheats, rollbacks), with its `--load-state` loaded. */
async function createDevControl(core: Core): Promise<DevChain | undefined> {
  const { devTime, mining, app, consensus, mempool, blockStore, stateStore, indexer, signer, evidencePool, log } = core;
  // openSigner refuses priv_validator_laddr on a dev chain, so its signer is the key file.
  if (
    devTime === undefined ||
    mining === undefined ||
    !(app instanceof EvmApplication) ||
    !(signer instanceof FilePV)
  ) {
    return undefined;
  }
  const dev = core.opts.dev ?? {};
  // What a rollback takes back, each store once, in the order they go back (docs/dev-chain.md,
  // "Snapshots, revert and reset"). The app goes before the stores of blocks: a crash in between
  // leaves the app behind them, and the start-up handshake replays the stored blocks into it.
  const rewind = new RewindRegistry();
  rewind.register({ name: "mempool", rewindTo: () => mempool.flush() });
  rewind.register({ name: "EVM app", rewindTo: (height) => app.rollbackTo(height) });
  rewind.register({
    name: "tx indexer",
    cannotRewind: () =>
      indexer.rollbackTo === undefined
        ? 'the tx indexer cannot forget blocks ([tx_index] indexer = "psql"); a dev chain reverts with "kv" or "null"'
        : undefined,
    rewindTo: (height) => indexer.rollbackTo?.(height),
  });
  rewind.register({ name: "state store", rewindTo: async (height) => void (await stateStore.rollbackTo(height)) });
  rewind.register({ name: "block store", rewindTo: (height) => blockStore.rollbackTo(height) });
  rewind.register({ name: "validator signer", rewindTo: (height) => signer.rollbackTo(height) });
  rewind.register({ name: "evidence pool", rewindTo: () => evidencePool.rollbackTo(restoredState(stateStore)) });
  rewind.register({ name: "block times", rewindTo: () => devTime.forgetPinned() });
  const devControl = new DevChain({
    consensus,
    mining,
    mempool,
    app,
    rewind,
    restoredState: () => restoredState(stateStore),
    feed: core.evmFeed,
    inclusion: core.txInclusion,
    epoch: core.epoch,
    time: devTime,
    log: log.child({ module: "dev" }),
    ...(dev.print === undefined ? {} : { print: dev.print }),
    ...(dev.silent === undefined ? {} : { silent: dev.silent }),
    ...(dev.onForkReset === undefined ? {} : { onForkReset: dev.onForkReset }),
  });
  // Clients see the loaded state from their first request, as with anvil --load-state.
  if (dev.loadState !== undefined) await devControl.loadState(dev.loadState);
  return devControl;
}

/** The chain state a rollback left as the latest (the state store's rollbackTo made it so). */
function restoredState(stateStore: StateStore): ChainState {
  const state = stateStore.load();
  if (state === undefined) throw new NodeServiceError("the state store holds no chain state after the rollback");
  return state;
}

/** The Ethereum JSON-RPC (`[json-rpc] enable` on the EVM app), with its read workers and read processes. */
async function startEthereumRpc(
  core: Core,
  sw: Switch,
  devControl: DevChain | undefined,
): Promise<{
  evmRpc: RunningEvmRpc | undefined;
  readPool: EvmReadPool | undefined;
  readProcesses: ReadProcesses | undefined;
}> {
  const { config, log, stack, genesis, nodeKey, app, mempool, blockStore, devChain, metrics } = core;
  if (!config.jsonRpc.enable || !(app instanceof EvmApplication)) {
    return { evmRpc: undefined, readPool: undefined, readProcesses: undefined };
  }
  let readPool: EvmReadPool | undefined;
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
  const observer = metrics === undefined ? undefined : metrics.cometh.evmRpc;
  let readProcesses: ReadProcesses | undefined;
  // Child processes serving whole HTTP connections (readProcesses.ts). Not on dev chains: console.log
  // lines, rollbacks that reuse heights, dev methods that change state between blocks.
  if (config.jsonRpc.readProcesses > 0 && !devChain) {
    const ws = app.readWorkerSetup();
    const rpc = config.jsonRpc as typeof config.jsonRpc & { maxBodyBytes?: number };
    const procs = new ReadProcesses({
      size: config.jsonRpc.readProcesses,
      setup: {
        dbFile: ws.dbFile,
        noSync: ws.noSync,
        chainId: ws.chainId.toString(),
        allowUnprotectedTxs: ws.allowUnprotectedTxs,
        rpc: {
          gasCap: rpc.gasCap.toString(),
          evmTimeoutMs: rpc.evmTimeoutMs,
          httpTimeoutMs: rpc.httpTimeoutMs,
          httpIdleTimeoutMs: rpc.httpIdleTimeoutMs,
          batchRequestLimit: rpc.batchRequestLimit,
          batchResponseMaxSize: rpc.batchResponseMaxSize,
          maxBodyBytes: rpc.maxBodyBytes ?? DEFAULT_BODY_LIMIT,
          api: rpc.api,
        },
      },
      latestHeight: () => Math.max(0, app.db.latestHeight()),
      onPublished: (fn) => app.db.onPublished(fn),
      hintSender: (key, sender) => app.hintSender(key, sender),
      log: log.child({ module: "read-processes" }),
      ...(observer === undefined ? {} : { observer }),
    });
    readProcesses = procs;
    // The JSON-RPC server's close stops them with its connections; this is for a server that did not start.
    stack.push("read processes", () => procs.close());
    await procs.start();
    log.info({ pids: procs.pids() }, "Read processes started");
  }
  const evmRpc = await startEvmRpc(
    config.jsonRpc,
    buildEvmServices({
      config,
      genesis,
      nodeKey,
      app,
      mempool,
      blockStore,
      feed: core.evmFeed,
      dev: devControl,
      readPool,
      p2p: sw,
      blocksync: core.live.blocksync,
    }),
    log.child({ module: "json-rpc" }),
    {
      ...(observer === undefined ? {} : { observer }),
      ...(readProcesses === undefined ? {} : { readProcesses }),
    },
  );
  core.live.evmRpc = evmRpc;
  stack.push("Ethereum JSON-RPC", () => evmRpc.close());
  return { evmRpc, readPool, readProcesses };
}

/** The Prometheus endpoint on `[instrumentation] prometheus_listen_addr`; returns its bound address. */
async function startMetricsServer(core: Core): Promise<string | undefined> {
  const { config, log, stack, metrics } = core;
  if (metrics === undefined) return undefined;
  const { serveMetrics } = await import("./metrics.js");
  const { host, port } = splitHostPort(config.instrumentation.prometheusListenAddr);
  const served = await serveMetrics(metrics, host, port, config.instrumentation.maxOpenConnections, log);
  log.info({ address: served.address }, "Prometheus metrics listening");
  stack.push("metrics server", () => served.close());
  return served.address;
}

/** True when the validator set is this node alone: nobody else can make blocks to sync from. */
function onlyValidatorIsUs(state: ChainState, address: Uint8Array): boolean {
  const vals = state.validators.validators;
  return vals.length === 1 && bytesEqual(vals[0]?.address ?? new Uint8Array(0), address);
}

async function createApp(base: Base, fatal: FatalStop, dev?: DevStartOptions): Promise<Application> {
  const { config, log } = base;
  const appLog = log.child({ module: "app" });
  const target = parseProxyApp(config.base.proxyApp);
  if (typeof target === "string") throw new ConfigError(config.files.config, "proxy_app", target);
  if (target.kind === "socket") {
    log.info({ address: target.text }, "connecting to the ABCI application");
    // Loaded only for an external app: its ABCI codecs and node:http2 (the gRPC transport) are start-up
    // time every built-in app (and every `cometh dev`) would otherwise pay.
    const { SocketApplication } = await import("../app/socket/index.js");
    return SocketApplication.connect({
      address: target.address,
      transport: config.base.abci,
      log: log.child({ module: "abci-client" }),
      onLost: (err) => fatal.appLost(err),
      consensusParamsAt: (height) =>
        base.stateStore.loadConsensusParams(height) ??
        base.stateStore.load()?.consensusParams ??
        base.genesis.consensusParams,
    });
  }
  switch (target.name) {
    case "kvstore":
      return createKvStoreApp({
        dbDir: join(config.base.dbDir, DB_FILES.kvstoreApp),
        log: appLog,
        retainBlocks: config.appBase.minRetainBlocks,
        snapshots: snapshotOptions(config),
      });
    case "evm":
      return createEvmApp({
        dbDir: join(config.base.dbDir, DB_FILES.evmApp),
        log: appLog,
        chainId: BigInt(config.evm.evmChainId),
        allowUnprotectedTxs: config.jsonRpc.allowUnprotectedTxs,
        pruning: pruningWindow(config),
        minRetainBlocks: config.appBase.minRetainBlocks,
        // Blocks a node restoring the oldest kept snapshot replays (the Cosmos SDK's retention bound).
        snapshotRetainBlocks: config.appStateSync.snapshotInterval * config.appStateSync.snapshotKeepRecent,
        minTip: config.evm.minTip,
        maxTxGasWanted: config.evm.maxTxGasWanted,
        ...(dev === undefined ? { snapshots: snapshotOptions(config) } : {}),
        ...(dev === undefined ? {} : { noSync: true }),
        dbBackend: config.base.dbBackend,
        ...(dev?.mnemonic === undefined ? {} : { mnemonic: dev.mnemonic }),
        ...(dev?.accounts === undefined ? {} : { devAccountCount: dev.accounts }),
        ...(dev?.fork === undefined ? {} : { fork: dev.fork }),
      });
  }
}

/**
 * The `[tx_index]` indexer. On memory stores (memdb: dev chains, nothing kept across a restart) the kv
 * indexer writes behind: a block's rows are written when a read, a prune or 64 waiting blocks need
 * them, and a revert drops the waiting ones unwritten (docs/dev-chain.md "Memory stores").
 */
async function createIndexer(
  config: NodeConfig,
  genesis: GenesisDoc,
  dbDir: string,
  noSync: boolean,
  log: Logger,
): Promise<Indexer> {
  switch (config.txIndex.indexer) {
    case "null":
      return createNullIndexer();
    case "kv": {
      const backend = config.base.dbBackend;
      const kv = createKvIndexer(await openKvBackend(backend, join(dbDir, DB_FILES.txIndex), { noSync }));
      if (backend !== "memdb") return kv;
      return writeBehind(kv, { onError: (err, height) => log.error({ err, height }, "failed to index block") });
    }
    case "psql":
      return createPsqlIndexer({ connectionString: config.txIndex.psqlConn, chainId: genesis.chainId });
  }
}

/**
 * app.toml [state-sync]: a snapshot every snapshot-interval heights, snapshot-keep-recent kept. With
 * interval 0 none is taken, and those already on disk are still served (as the Cosmos SDK does).
 */
function snapshotOptions(config: NodeConfig): { interval: number; keepRecent: number } {
  return { interval: config.appStateSync.snapshotInterval, keepRecent: config.appStateSync.snapshotKeepRecent };
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
    // memdb: the stores a WAL replays into start empty at every start; nothing to replay.
    noWal: config.base.dbBackend === "memdb",
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

/** The subsystems the metrics read when Prometheus scrapes, filled in as the node is built. */
interface LiveParts {
  mempool?: Mempool;
  bus?: EventBus;
  txInclusion?: TxInclusion;
  consensus?: Consensus;
  blocksync?: BlocksyncReactor;
  statesync?: StatesyncReactor;
  p2p?: Switch;
  evmRpc?: RunningEvmRpc;
}

function metricsSources(
  live: LiveParts,
  app: Application,
  stateStore: StateStore,
  blockStore: BlockStore,
  ownAddress: Uint8Array,
): MetricsSources {
  const validators = () => live.consensus?.chainState().validators ?? ValidatorSet.empty();
  return {
    height: () => (live.consensus?.chainState().lastBlockHeight ?? 0) + 1,
    validators,
    mempoolSize: () => live.mempool?.size() ?? 0,
    mempoolSizeBytes: () => live.mempool?.sizeBytes() ?? 0,
    peers: () =>
      (live.p2p?.peers() ?? []).map((p) => ({
        id: p.id,
        pendingSend: () => p.status().channels.reduce((n, ch) => n + ch.sendQueueSize, 0),
      })),
    blockSyncing: () => live.blocksync?.isSyncing() ?? false,
    stateSyncing: () => live.statesync?.isSyncing() ?? false,
    validatorsAt: (height) => stateStore.loadValidators(height),
    ownAddress: () => ownAddress,
    blockTime: (height) => blockStore.loadBlockMeta(height)?.header.time,
    initialHeight: () => live.consensus?.chainState().initialHeight ?? 1,
    ...(app instanceof EvmApplication
      ? { baseFee: () => app.reader.baseFee(app.reader.latestHeight()) ?? app.reader.nextBaseFee() }
      : {}),
    // broadcast_tx_commit waits are subscriptions in CometBFT's count.
    nodeSubscriptions: () => (live.bus?.numSubscriptions() ?? 0) + (live.txInclusion?.ownedWaits() ?? 0),
    evmSubscriptions: () => {
      const rt = live.evmRpc?.runtime;
      if (rt === undefined) return undefined;
      const filters = rt.filters.size();
      // The filter manager holds two feed listeners (blocks, pending txs) while it has filters.
      return { subscriptions: Math.max(0, rt.feed.listenerCount() - (filters > 0 ? 2 : 0)), filters };
    },
  };
}
