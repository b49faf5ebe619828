import { hostname } from "node:os";
import { parseLogLevel } from "./logLevel.js";
import { parseProxyApp } from "./proxyApp.js";
import {
  bool,
  duration,
  float,
  int,
  list,
  listenAddr,
  oneOf,
  path,
  type Setting,
  SettingValueError,
  str,
  uint64,
} from "./setting.js";

/**
 * Every setting cometh reads: one entry per config.toml/app.toml key, with its flag, default, parser
 * and comment. Adding a setting is one entry here; NodeConfig's type, the flags of `cometh start` and
 * the generated files all follow from this table. Keys, defaults and comments follow CometBFT v0.38.25
 * (config/config.go, config/toml.go) and Cosmos EVM v0.5.0 app.toml, except where noted.
 */

export type ConfigFileName = "config.toml" | "app.toml";

export interface SettingsTable {
  readonly file: ConfigFileName;
  /** TOML table name; "" for the top-level keys. */
  readonly name: string;
  /** Banner written above the table. */
  readonly title: string;
  readonly doc?: string;
  readonly settings: Readonly<Record<string, Setting<unknown>>>;
}

function table<const S extends Record<string, Setting<unknown>>>(
  file: ConfigFileName,
  name: string,
  title: string,
  settings: S,
  doc?: string,
): { file: ConfigFileName; name: string; title: string; settings: S; doc?: string } {
  return doc === undefined ? { file, name, title, settings } : { file, name, title, settings, doc };
}

/** EVM JSON-RPC namespaces `[json-rpc] api` can switch on. */
export const EVM_NAMESPACES = ["eth", "web3", "net", "txpool", "debug", "personal", "admin", "miner"] as const;
export type EvmNamespace = (typeof EVM_NAMESPACES)[number];

/** The CometBFT release whose config format, RPC and hashes cometh follows. */
export const COMETBFT_VERSION = "0.38.25";

/**
 * `[json-rpc] read-workers` when unset. Measured on a 2-core machine with the load generator on it
 * (`npm run bench:evm -- --nodes cometh --read-workers N`, README's app.toml paragraph): 1 worker cost
 * ~25-40% of the distinct-balanceOf row and ~60-70 MiB of RSS, for up to ~20% more of the compute-loop
 * row (none while the machine was busy) and a main thread that no long call can hold up; 0 regresses
 * nothing there.
 */
export const DEFAULT_READ_WORKERS = 0;

/**
 * `[json-rpc] read-processes` when unset (docs/evm-engine.md "Read processes"): one child beside the main
 * process, so that eth_call uses a second core (a compute-heavy call +37-70% req/s on 2 cores); a
 * connection that mostly sends transactions goes back to the main process, so mined transfers do not pay
 * for it. Dev chains never start them.
 */
export const DEFAULT_READ_PROCESSES = 1;

const semver = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

function parseNamespaces(raw: unknown): EvmNamespace[] {
  let items: unknown[];
  if (typeof raw === "string") items = raw.split(",").map((s) => s.trim());
  else if (Array.isArray(raw)) items = raw;
  else throw new SettingValueError(`must be a comma-separated string such as "eth,net,web3"; got ${String(raw)}`);
  const out: EvmNamespace[] = [];
  for (const item of items) {
    if (item === "") continue;
    if (typeof item !== "string" || !(EVM_NAMESPACES as readonly string[]).includes(item)) {
      throw new SettingValueError(
        `has unknown namespace ${JSON.stringify(item)}; valid namespaces: ${EVM_NAMESPACES.join(", ")}`,
      );
    }
    if (out.includes(item as EvmNamespace)) {
      throw new SettingValueError(`lists namespace "${item}" twice; valid namespaces: ${EVM_NAMESPACES.join(", ")}`);
    }
    out.push(item as EvmNamespace);
  }
  return out;
}

const base = table("config.toml", "", "Main Base Config Options", {
  version: str("version", COMETBFT_VERSION, {
    doc: "The version of the CometBFT config format this file follows.\nDo not modify this.",
    flag: false,
    check: (s) => (s === "" || semver.test(s) ? undefined : `must be a semantic version such as "${COMETBFT_VERSION}"`),
  }),
  proxyApp: str("proxy_app", "evm", {
    doc:
      "The application: one compiled into cometh and run in process,\n" +
      '"evm" (Ethereum transactions in an EVM, the default) or "kvstore" (CometBFT\'s key=value test app),\n' +
      "or the TCP or UNIX socket address of an external ABCI 2.0 application\n" +
      '(e.g. "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"), driven over the\n' +
      "ABCI socket protocol or gRPC (see abci below).",
    check: (s) => {
      const target = parseProxyApp(s);
      return typeof target === "string" ? target : undefined;
    },
  }),
  moniker: str("moniker", hostname(), { doc: "A custom human readable name for this node" }),
  dbBackend: oneOf("db_backend", "lmdb", ["lmdb", "memdb"] as const, {
    doc: 'Database backend: lmdb | memdb\n* lmdb (embedded, transactional, crash-safe)\n* memdb (in memory, gone when the node stops; dev chains only: `cometh dev`\n  uses it on a temporary home)\nCometBFT\'s "goleveldb", "cleveldb", "boltdb", "rocksdb" and "badgerdb"\nare replaced by LMDB in cometh.',
    hint: "cometh stores everything in LMDB (or in memory with memdb); CometBFT's goleveldb, cleveldb, boltdb, rocksdb and badgerdb are replaced by it",
  }),
  dbDir: path("db_dir", "data", { doc: "Database directory" }),
  logLevel: str("log_level", "info", {
    doc: 'Output level for logging, including package level options\n(e.g. "info" or "consensus:debug,*:error"; levels: debug, info, warn, error, none)',
    check: (s) => {
      const r = parseLogLevel(s);
      return typeof r === "string" ? r : undefined;
    },
  }),
  logFormat: oneOf("log_format", "plain", ["plain", "json"] as const, {
    doc: "Output format: 'plain' (colored text) or 'json'",
  }),
  genesisFile: path("genesis_file", "config/genesis.json", {
    doc: "Path to the JSON file containing the initial validator set and other meta data",
  }),
  privValidatorKeyFile: path("priv_validator_key_file", "config/priv_validator_key.json", {
    doc: "Path to the JSON file containing the private key to use as a validator in the consensus protocol",
  }),
  privValidatorStateFile: path("priv_validator_state_file", "data/priv_validator_state.json", {
    doc: "Path to the JSON file containing the last sign state of a validator",
  }),
  privValidatorLaddr: str("priv_validator_laddr", "", {
    doc: "TCP or UNIX socket address for CometBFT to listen on for\nconnections from an external PrivValidator process",
    check: checkSignerLaddr,
  }),
  nodeKeyFile: path("node_key_file", "config/node_key.json", {
    doc: "Path to the JSON file containing the private key to use for node authentication in the p2p protocol",
  }),
  abci: oneOf("abci", "socket", ["socket", "grpc"] as const, {
    doc: "Mechanism to connect to the ABCI application: socket | grpc\n(ignored for the in-process applications named by proxy_app)",
  }),
  blockSyncMode: bool("block_sync", true, {
    doc: "If this node is many blocks behind the tip of the chain, BlockSync\nallows them to catchup quickly by downloading blocks in parallel\nand verifying their commits\n\nDeprecated: this key will be removed and BlockSync will be enabled unconditionally in the next major release.",
  }),
  filterPeers: bool("filter_peers", false, {
    doc: "If true, query the ABCI app on connecting to a new peer\nso the app can decide if we should keep the connection or not",
  }),
  eventBusBufferCapacity: int("event_bus_buffer_capacity", 0, {
    doc: "Buffer capacity for the internal EventBus. A value of 0 means unbuffered\n(publishers block until subscribers receive). Higher values reduce back-pressure\nat the cost of memory.",
  }),
});

const rpc = table("config.toml", "rpc", "RPC Server Configuration Options", {
  laddr: listenAddr("laddr", "tcp://127.0.0.1:26657", {
    doc: "TCP or UNIX socket address for the RPC server to listen on (empty: no RPC server)",
    optional: true,
  }),
  corsAllowedOrigins: list("cors_allowed_origins", [], {
    doc: "A list of origins a cross-domain request can be executed from\nDefault value '[]' disables cors support\nUse '[\"*\"]' to allow any origin",
  }),
  corsAllowedMethods: list("cors_allowed_methods", ["HEAD", "GET", "POST"], {
    doc: "A list of methods the client is allowed to use with cross-domain requests",
  }),
  corsAllowedHeaders: list(
    "cors_allowed_headers",
    ["Origin", "Accept", "Content-Type", "X-Requested-With", "X-Server-Time"],
    { doc: "A list of non simple headers the client is allowed to use with cross-domain requests" },
  ),
  grpcLaddr: listenAddr("grpc_laddr", "", {
    doc: "TCP or UNIX socket address for the gRPC server to listen on\nNOTE: This server only supports /broadcast_tx_commit",
    optional: true,
  }),
  grpcMaxOpenConnections: int("grpc_max_open_connections", 900, {
    doc:
      "Maximum number of simultaneous connections.\nDoes not include RPC (HTTP&WebSocket) connections. See max_open_connections\n" +
      "If you want to accept a larger number than the default, make sure\nyou increase your OS limits.\n0 - unlimited.",
  }),
  unsafe: bool("unsafe", false, {
    doc: "Activate unsafe RPC commands like /dial_seeds and /unsafe_flush_mempool",
  }),
  maxOpenConnections: int("max_open_connections", 900, {
    doc:
      "Maximum number of simultaneous connections (including WebSocket).\nDoes not include gRPC connections. See grpc_max_open_connections\n" +
      "If you want to accept a larger number than the default, make sure\nyou increase your OS limits.\n0 - unlimited.",
  }),
  maxSubscriptionClients: int("max_subscription_clients", 100, {
    doc: "Maximum number of unique clientIDs that can /subscribe\nIf you're using /broadcast_tx_commit, set to the estimated maximum number\nof broadcast_tx_commit calls per block.",
  }),
  maxSubscriptionsPerClient: int("max_subscriptions_per_client", 5, {
    doc: "Maximum number of unique queries a given client can /subscribe to",
  }),
  experimentalSubscriptionBufferSize: int("experimental_subscription_buffer_size", 200, {
    doc:
      "Experimental parameter to specify the maximum number of events a node will\nbuffer, per subscription, before returning an error and closing the\n" +
      "subscription. Must be set to at least 100, but higher values will accommodate\nhigher event throughput rates (and will use more memory).",
    min: 100,
  }),
  experimentalWebsocketWriteBufferSize: int("experimental_websocket_write_buffer_size", 200, {
    doc:
      "Experimental parameter to specify the maximum number of RPC responses that\ncan be buffered per WebSocket client. If clients cannot read from the\n" +
      "WebSocket endpoint fast enough, they will be disconnected.\n" +
      'Must be at least the same as "experimental_subscription_buffer_size".',
  }),
  experimentalCloseOnSlowClient: bool("experimental_close_on_slow_client", false, {
    doc:
      "If a WebSocket client cannot read fast enough, at present we may\nsilently drop events instead of generating an error or disconnecting the\nclient.\n" +
      "Enabling this experimental parameter will cause the WebSocket connection to\nbe closed instead if it cannot read fast enough.",
  }),
  timeoutBroadcastTxCommitMs: duration("timeout_broadcast_tx_commit", "10s", {
    doc: "How long to wait for a tx to be committed during /broadcast_tx_commit.",
  }),
  maxRequestBatchSize: int("max_request_batch_size", 10, {
    doc: "Maximum number of requests that can be sent in a batch\nIf the value is set to '0' (zero-value), then no maximum batch size will be\nenforced for a JSON-RPC batch request.",
  }),
  maxBodyBytes: int("max_body_bytes", 1000000, { doc: "Maximum size of request body, in bytes" }),
  maxHeaderBytes: int("max_header_bytes", 1048576, { doc: "Maximum size of request header, in bytes" }),
  tlsCertFile: path("tls_cert_file", "", {
    doc:
      "The path to a file containing certificate that is used to create the HTTPS server.\n" +
      "Might be either absolute path or path related to the config directory.\n" +
      "NOTE: both tls_cert_file and tls_key_file must be present to create an HTTPS server.\nOtherwise, HTTP server is run.",
    base: "config",
  }),
  tlsKeyFile: path("tls_key_file", "", {
    doc:
      "The path to a file containing matching private key that is used to create the HTTPS server.\n" +
      "Might be either absolute path or path related to the config directory.",
    base: "config",
  }),
  pprofLaddr: str("pprof_laddr", "", { doc: "pprof listen address (https://golang.org/pkg/net/http/pprof)" }),
  dashboard: bool("dashboard", false, {
    doc:
      "Serve a live dashboard at /dashboard on this RPC address: height, round and step, each\n" +
      "validator's votes, the last blocks, block-interval and tx/s charts, peers, mempool and sync\n" +
      "state, fed by this server's own routes and WebSocket events. cometh-only key; the homes\n" +
      "written by `cometh testnet` and `cometh dev` turn it on.",
  }),
});

const p2p = table("config.toml", "p2p", "P2P Configuration Options", {
  laddr: listenAddr("laddr", "tcp://0.0.0.0:26656", { doc: "Address to listen for incoming connections" }),
  externalAddress: str("external_address", "", {
    doc: "Address to advertise to peers for them to dial. If empty, will use the same\nport as the laddr, and will introspect on the listener to figure out the\naddress. IP and port are required. Example: 159.89.10.97:26656",
  }),
  seeds: str("seeds", "", { doc: "Comma separated list of seed nodes to connect to" }),
  persistentPeers: str("persistent_peers", "", {
    doc: "Comma separated list of nodes to keep persistent connections to",
  }),
  addrBookFile: path("addr_book_file", "config/addrbook.json", { doc: "Path to address book" }),
  addrBookStrict: bool("addr_book_strict", true, {
    doc: "Set true for strict address routability rules\nSet false for private or local networks",
  }),
  maxNumInboundPeers: int("max_num_inbound_peers", 40, { doc: "Maximum number of inbound peers" }),
  maxNumOutboundPeers: int("max_num_outbound_peers", 10, {
    doc: "Maximum number of outbound peers to connect to, excluding persistent peers",
  }),
  unconditionalPeerIds: str("unconditional_peer_ids", "", {
    doc: "List of node IDs, to which a connection will be (re)established ignoring any existing limits",
  }),
  persistentPeersMaxDialPeriodMs: duration("persistent_peers_max_dial_period", "0s", {
    doc: "Maximum pause when redialing a persistent peer (if zero, exponential backoff is used)",
  }),
  flushThrottleTimeoutMs: duration("flush_throttle_timeout", "100ms", {
    doc: "Time to wait before flushing messages out on the connection",
  }),
  maxPacketMsgPayloadSize: int("max_packet_msg_payload_size", 1024, {
    doc: "Maximum size of a message packet payload, in bytes",
  }),
  sendRate: int("send_rate", 5120000, { doc: "Rate at which packets can be sent, in bytes/second" }),
  recvRate: int("recv_rate", 5120000, { doc: "Rate at which packets can be received, in bytes/second" }),
  pex: bool("pex", true, { doc: "Set true to enable the peer-exchange reactor" }),
  seedMode: bool("seed_mode", false, {
    doc: "Seed mode, in which node constantly crawls the network and looks for\npeers. If another node asks it for addresses, it responds and disconnects.\n\nDoes not work if the peer-exchange reactor is disabled.",
  }),
  privatePeerIds: str("private_peer_ids", "", {
    doc: "Comma separated list of peer IDs to keep private (will not be gossiped to other peers)",
  }),
  allowDuplicateIp: bool("allow_duplicate_ip", false, {
    doc: "Toggle to disable guard against peers connecting from the same ip.",
  }),
  handshakeTimeoutMs: duration("handshake_timeout", "20s", { doc: "Peer connection configuration." }),
  dialTimeoutMs: duration("dial_timeout", "3s", { doc: "" }),
});

const mempool = table("config.toml", "mempool", "Mempool Configuration Option", {
  type: oneOf("type", "flood", ["flood", "nop"] as const, {
    doc:
      "The type of mempool for this node to use.\n\n Possible types:\n" +
      ' - "flood" : concurrent linked list mempool with flooding gossip protocol\n (default)\n' +
      ' - "nop"   : nop-mempool (short for no operation; the ABCI app is responsible\n for storing, disseminating and proposing txs). "create_empty_blocks=false" is\n not supported.',
  }),
  recheck: bool("recheck", true, {
    doc:
      "Recheck (default: true) defines whether CometBFT should recheck the\nvalidity for all remaining transaction in the mempool after a block.\n" +
      "Since a block affects the application state, some transactions in the\nmempool may become invalid. If this does not apply to your application,\nyou can disable rechecking.",
  }),
  recheckTimeoutMs: duration("recheck_timeout", "1s", {
    doc:
      "recheck_timeout is the time the application has during the rechecking process\nto return CheckTx responses, once all requests have been sent. Responses that\n" +
      "arrive after the timeout expires are discarded. It only applies to\nnon-local ABCI clients and when recheck is enabled.",
  }),
  broadcast: bool("broadcast", true, {
    doc:
      "Broadcast (default: true) defines whether the mempool should relay\ntransactions to other peers. Setting this to false will stop the mempool\n" +
      "from relaying transactions to other peers until they are included in a\nblock.",
  }),
  walDir: path("wal_dir", "", {
    doc: 'WalPath (default: "") configures the location of the Write Ahead Log\n(WAL) for the mempool. The WAL is disabled by default. To enable, set\nWalPath to where you want the WAL to be written (e.g.\n"data/mempool.wal").',
  }),
  size: int("size", 5000, { doc: "Maximum number of transactions in the mempool" }),
  maxTxsBytes: int("max_txs_bytes", 1073741824, {
    doc: "Limit the total size of all txs in the mempool.\nThis only accounts for raw transactions (e.g. given 1MB transactions and\nmax_txs_bytes=5MB, mempool will only accept 5 transactions).",
  }),
  cacheSize: int("cache_size", 10000, {
    doc: "Size of the cache (used to filter transactions we saw earlier) in transactions",
  }),
  keepInvalidTxsInCache: bool("keep-invalid-txs-in-cache", false, {
    doc: "Do not remove invalid transactions from the cache (default: false)\nSet to true if it's not possible for any invalid transaction to become valid\nagain in the future.",
  }),
  maxTxBytes: int("max_tx_bytes", 1048576, {
    doc: "Maximum size of a single transaction.\nNOTE: the max size of a tx transmitted over the network is {max_tx_bytes}.",
  }),
  maxBatchBytes: int("max_batch_bytes", 0, {
    doc: "Maximum size of a batch of transactions to send to a peer\nIncluding space needed by encoding (one varint per transaction).\nXXX: Unused due to https://github.com/tendermint/tendermint/issues/5796",
  }),
  experimentalMaxGossipConnectionsToPersistentPeers: int("experimental_max_gossip_connections_to_persistent_peers", 0, {
    doc:
      "Experimental parameters to limit gossiping txs to up to the specified number of peers.\nWe use two independent upper values for persistent and non-persistent peers.\n" +
      "If set to 0, the feature is disabled for the corresponding group of peers.",
  }),
  experimentalMaxGossipConnectionsToNonPersistentPeers: int(
    "experimental_max_gossip_connections_to_non_persistent_peers",
    0,
    { doc: "" },
  ),
});

const stateSync = table("config.toml", "statesync", "State Sync Configuration Options", {
  enable: bool("enable", false, {
    doc:
      "State sync rapidly bootstraps a new node by discovering, fetching, and restoring a state machine\nsnapshot from peers instead of fetching and replaying historical blocks. Requires some peers in\n" +
      "the network to take and serve state machine snapshots. State sync is not attempted if the node\n" +
      "has any local state (LastBlockHeight > 0). The node will have a truncated block history,\n" +
      "starting from the height of the snapshot.",
  }),
  rpcServers: str("rpc_servers", "", {
    doc:
      "RPC servers (comma-separated) for light client verification of the synced state machine and\n" +
      "retrieval of state data for node bootstrapping. Also needs a trusted height and corresponding\n" +
      "header hash obtained from a trusted source, and a period during which validators can be trusted.\n\n" +
      "For Cosmos SDK-based chains, trust_period should usually be about 2/3 of the unbonding time (~2\n" +
      "weeks) during which they can be financially punished (slashed) for misbehavior.",
  }),
  trustHeight: int("trust_height", 0, { doc: "", min: 0 }),
  trustHash: str("trust_hash", "", { doc: "" }),
  trustPeriodMs: duration("trust_period", "168h0m0s", { doc: "" }),
  discoveryTimeMs: duration("discovery_time", "15s", {
    doc: "Time to spend discovering snapshots before initiating a restore.",
  }),
  tempDir: str("temp_dir", "", {
    doc: "Temporary directory for state sync snapshot chunks, defaults to the OS tempdir (typically /tmp).",
  }),
  chunkRequestTimeoutMs: duration("chunk_request_timeout", "10s", {
    doc: "The timeout duration before re-requesting a chunk, possibly from a different\npeer (default: 1 minute).",
  }),
  chunkFetchers: int("chunk_fetchers", 4, { doc: "The number of concurrent chunk fetchers to run (default: 1)." }),
  maxSnapshotChunks: int("max_snapshot_chunks", 100000, {
    doc: "Maximum number of chunks allowed in a snapshot (default: 100000).",
  }),
});

const blockSync = table("config.toml", "blocksync", "Block Sync Configuration Options", {
  version: oneOf("version", "v0", ["v0"] as const, {
    doc: 'Block Sync version to use:\n\n  1) "v0" - the default block sync implementation',
  }),
});

const consensus = table("config.toml", "consensus", "Consensus Configuration Options", {
  walPath: path("wal_file", "data/cs.wal/wal", { doc: "" }),
  timeoutProposeMs: duration("timeout_propose", "3s", {
    doc: "How long we wait for a proposal block before prevoting nil",
  }),
  timeoutProposeDeltaMs: duration("timeout_propose_delta", "500ms", {
    doc: "How much timeout_propose increases with each round",
  }),
  timeoutPrevoteMs: duration("timeout_prevote", "1s", {
    doc: "How long we wait after receiving +2/3 prevotes for “anything” (ie. not a single block or nil)",
  }),
  timeoutPrevoteDeltaMs: duration("timeout_prevote_delta", "500ms", {
    doc: "How much the timeout_prevote increases with each round",
  }),
  timeoutPrecommitMs: duration("timeout_precommit", "1s", {
    doc: "How long we wait after receiving +2/3 precommits for “anything” (ie. not a single block or nil)",
  }),
  timeoutPrecommitDeltaMs: duration("timeout_precommit_delta", "500ms", {
    doc: "How much the timeout_precommit increases with each round",
  }),
  timeoutCommitMs: duration("timeout_commit", "1s", {
    doc: "How long we wait after committing a block, before starting on the new\nheight (this gives us a chance to receive some more precommits, even\nthough we already have +2/3).",
  }),
  doubleSignCheckHeight: int("double_sign_check_height", 0, {
    doc:
      "How many blocks to look back to check existence of the node's consensus votes before joining consensus\n" +
      "When non-zero, the node will panic upon restart\nif the same consensus key was used to sign {double_sign_check_height} last blocks.\n" +
      "So, validators should stop the state machine, wait for some blocks, and then restart the state machine to avoid panic.",
  }),
  skipTimeoutCommit: bool("skip_timeout_commit", false, {
    doc: "Make progress as soon as we have all the precommits (as if TimeoutCommit = 0)",
  }),
  createEmptyBlocks: bool("create_empty_blocks", true, {
    doc: "EmptyBlocks mode and possible interval between empty blocks",
  }),
  createEmptyBlocksIntervalMs: duration("create_empty_blocks_interval", "0s", { doc: "" }),
  peerGossipSleepDurationMs: duration("peer_gossip_sleep_duration", "100ms", {
    doc: "Reactor sleep duration parameters",
  }),
  peerQueryMaj23SleepDurationMs: duration("peer_query_maj23_sleep_duration", "2s", { doc: "" }),
  blockTimeToleranceMs: duration("block_time_tolerance", "1m0s", {
    doc: "Maximum allowed difference between proposed block time and wall-clock time.",
    positive: true,
  }),
});

const storage = table("config.toml", "storage", "Storage Configuration Options", {
  discardAbciResponses: bool("discard_abci_responses", false, {
    doc:
      "Set to true to discard ABCI responses from the state store, which can save a\nconsiderable amount of disk space. Set to false to ensure ABCI responses are\n" +
      "persisted. ABCI responses are required for /block_results RPC queries, and to\nreindex events in the command-line tool.",
  }),
});

const txIndex = table("config.toml", "tx_index", "Transaction Indexer Configuration Options", {
  indexer: oneOf("indexer", "kv", ["null", "kv", "psql"] as const, {
    doc:
      'What indexer to use for transactions\n\nOptions:\n  1) "null"\n' +
      '  2) "kv" (default) - the simplest possible indexer, backed by key-value storage (LMDB in cometh).\n' +
      '  3) "psql" - the indexer services backed by PostgreSQL.\nWhen "kv" or "psql" is chosen "tx.height" and "tx.hash" will always be indexed.',
  }),
  psqlConn: str("psql-conn", "", {
    doc: "The PostgreSQL connection configuration, the connection format:\n  postgresql://<user>:<password>@<host>:<port>/<db>?<opts>",
  }),
});

const instrumentation = table("config.toml", "instrumentation", "Instrumentation Configuration Options", {
  prometheus: bool("prometheus", false, {
    doc: "When true, Prometheus metrics are served under /metrics on\nPrometheusListenAddr.",
  }),
  prometheusListenAddr: listenAddr("prometheus_listen_addr", ":26660", {
    doc: "Address to listen for Prometheus collector(s) connections",
    optional: true,
  }),
  maxOpenConnections: int("max_open_connections", 3, {
    doc: "Maximum number of simultaneous connections.\nIf you want to accept a larger number than the default, make sure\nyou increase your OS limits.\n0 - unlimited.",
  }),
  namespace: str("namespace", "cometbft", { doc: "Instrumentation namespace" }),
});

const appBase = table("app.toml", "", "Base Configuration", {
  pruning: oneOf("pruning", "default", ["default", "nothing", "everything", "custom"] as const, {
    doc:
      "How much past EVM state is kept for queries at old heights (eth_call, eth_getBalance):\n" +
      "default: the last 362880 heights; nothing: all heights (archive node);\n" +
      "everything: the last 2 heights; custom: the last pruning-keep-recent heights.",
  }),
  pruningKeepRecent: int("pruning-keep-recent", 0, {
    doc: 'Heights of state kept when pruning = "custom" (at least 2).',
    min: 0,
  }),
  minRetainBlocks: int("min-retain-blocks", 0, {
    doc:
      "MinRetainBlocks defines the minimum block height offset from the current\n" +
      "block being committed, such that all blocks past this offset are pruned\n" +
      "from CometBFT. It is used as part of the process of determining the\n" +
      "ResponseCommit.RetainHeight value during ABCI Commit. A value of 0 indicates\n" +
      "that no blocks should be pruned.\n\n" +
      "This configuration value is only responsible for pruning CometBFT blocks.\n" +
      "It has no bearing on application state pruning which is determined by the\n" +
      '"pruning-*" configurations.\n\n' +
      "Note: CometBFT block pruning is dependant on this parameter in conjunction\n" +
      "with the unbonding (safety threshold) period, state pruning and state sync\n" +
      "snapshot parameters to determine the correct minimum value of\n" +
      "ResponseCommit.RetainHeight.",
    min: 0,
  }),
});

const appStateSync = table("app.toml", "state-sync", "State Sync Configuration", {
  snapshotInterval: int("snapshot-interval", 0, {
    doc:
      "snapshot-interval specifies the block interval at which local state sync snapshots are\n" +
      "taken (0 to disable).",
    min: 0,
  }),
  snapshotKeepRecent: int("snapshot-keep-recent", 2, {
    doc: "snapshot-keep-recent specifies the number of recent snapshots to keep and serve (0 to keep all).",
    min: 0,
  }),
});

const jsonRpc = table("app.toml", "json-rpc", "EVM JSON-RPC Configuration", {
  enable: bool("enable", true, { doc: "Enable defines if the JSON-RPC server should be enabled." }),
  address: listenAddr("address", "127.0.0.1:8545", {
    doc: "Address defines the EVM RPC HTTP server address to bind to.",
    scheme: false,
  }),
  wsAddress: listenAddr("ws-address", "127.0.0.1:8546", {
    doc: "Address defines the EVM WebSocket server address to bind to.",
    scheme: false,
  }),
  wsOrigins: list("ws-origins", ["127.0.0.1", "localhost"], {
    doc: 'Allowed Origin hostnames for WebSocket upgrades ("*" allows any).',
  }),
  api: {
    key: "api",
    kind: "string",
    default: "eth,net,web3",
    aliases: [],
    flag: true,
    doc: `API defines a list of JSON-RPC namespaces that should be enabled\nExample: "eth,txpool,personal,net,debug,web3"\nValid namespaces: ${EVM_NAMESPACES.join(", ")}`,
    parse: parseNamespaces,
  } satisfies Setting<EvmNamespace[]>,
  gasCap: uint64("gas-cap", 25000000n, {
    doc: "GasCap sets a cap on gas that can be used in eth_call/estimateGas (0=infinite). Default: 25,000,000.",
    aliases: ["rpc-gas-cap"],
  }),
  allowInsecureUnlock: bool("allow-insecure-unlock", true, {
    doc: "Allow insecure account unlocking when account-related RPCs are exposed by http",
  }),
  evmTimeoutMs: duration("evm-timeout", "10s", {
    doc: "EVMTimeout is the global timeout for eth_call. Default: 10s.",
  }),
  txfeeCap: float("txfee-cap", 1, { doc: "TxFeeCap is the global tx-fee cap for send transaction. Default: 1eth." }),
  filterCap: int("filter-cap", 200, {
    doc: "FilterCap sets the global cap for total number of filters that can be created",
  }),
  feehistoryCap: int("feehistory-cap", 100, {
    doc: "FeeHistoryCap sets the global cap for total number of blocks that can be fetched",
    min: 1,
  }),
  logsCap: int("logs-cap", 10000, {
    doc: "LogsCap defines the max number of results can be returned from single 'eth_getLogs' query.",
  }),
  blockRangeCap: int("block-range-cap", 10000, {
    doc: "BlockRangeCap defines the max block range allowed for 'eth_getLogs' query.",
  }),
  httpTimeoutMs: duration("http-timeout", "30s", {
    doc: "HTTPTimeout is the read/write timeout of http json-rpc server.",
  }),
  httpIdleTimeoutMs: duration("http-idle-timeout", "2m0s", {
    doc: "HTTPIdleTimeout is the idle timeout of http json-rpc server.",
  }),
  allowUnprotectedTxs: bool("allow-unprotected-txs", false, {
    doc: "AllowUnprotectedTxs restricts unprotected (non EIP155 signed) transactions to be submitted via\nthe node's RPC when the global parameter is disabled.",
  }),
  maxOpenConnections: int("max-open-connections", 0, {
    doc: "MaxOpenConnections sets the maximum number of simultaneous connections\nfor the server listener (0 = unlimited).",
  }),
  enableIndexer: bool("enable-indexer", false, {
    doc: "EnableIndexer enables the custom transaction indexer for the EVM (ethereum transactions).",
  }),
  metricsAddress: listenAddr("metrics-address", "127.0.0.1:6065", {
    doc: "MetricsAddress defines the EVM Metrics server address to bind to.",
    scheme: false,
    optional: true,
  }),
  batchRequestLimit: int("batch-request-limit", 1000, {
    doc: "Upper bound on the number of requests in a JSON-RPC batch (0 = unlimited).",
  }),
  batchResponseMaxSize: int("batch-response-max-size", 25000000, {
    doc: "Upper bound on the number of response bytes of a JSON-RPC batch (0 = unlimited).",
  }),
  filterTimeoutMs: duration("filter-timeout", "5m0s", {
    doc:
      "A filter (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) not polled for this\n" +
      "long is removed, as geth removes it after 5 minutes. cometh-only key.",
    positive: true,
  }),
  enableProfiling: bool("enable-profiling", false, { doc: "Enable profiling in the debug namespace" }),
  readWorkers: int("read-workers", DEFAULT_READ_WORKERS, {
    doc:
      "Worker threads that run eth_call, eth_estimateGas, debug_traceCall and eth_getLogs, each\n" +
      "reading the EVM state through its own LMDB read transaction, so that reads use the other\n" +
      "cores while the main thread keeps consensus and CheckTx (0 = run them on the main thread,\n" +
      "where one long call holds up everything else until it ends). An eth_call whose contract and\n" +
      "function used little gas before still runs on the main thread (cheaper than the hand-off).\n" +
      "About 70 MiB each. With cores to spare, use the cores left after the main thread and LMDB's\n" +
      "writer (cores - 2). Dev chains (cometh dev) always run them on the main thread. cometh-only\n" +
      "key, 0..64.",
    max: 64,
  }),
  readProcesses: int("read-processes", DEFAULT_READ_PROCESSES, {
    doc:
      "Child processes that serve whole connections of the HTTP JSON-RPC server next to the main\n" +
      "process: accepted connections go round-robin to the main process and each child; a child\n" +
      "answers eth_call and state reads itself (its own LMDB read transaction at the height the main\n" +
      "process published) and passes every other request to the main process. About 120 MiB of RSS\n" +
      "each. On a 2-core machine use 1, elsewhere cores - 1 (docs/evm-engine.md, Read processes).\n" +
      "Dev chains (cometh dev) never start them. cometh-only key, 0..16.",
    max: 16,
  }),
});

const evm = table("app.toml", "evm", "EVM Configuration", {
  evmChainId: uint64("evm-chain-id", 262144n, {
    doc: "EIP-155 chain id answered by eth_chainId (separate from the CometBFT chain_id string).",
  }),
  minTip: uint64("min-tip", 0n, {
    doc: "Minimum effective tip in wei for a transaction to be proposed (lower ones wait in the mempool).",
  }),
  maxTxGasWanted: uint64("max-tx-gas-wanted", 0n, {
    doc: "Gas wanted CheckTx reports at most per transaction, for mempool block filling (0 = the tx's gas limit).",
  }),
});

/** The settings table, in file order. Keys of this object are the NodeConfig field names. */
export const SETTINGS = {
  base,
  rpc,
  p2p,
  mempool,
  stateSync,
  blockSync,
  consensus,
  storage,
  txIndex,
  instrumentation,
  appBase,
  appStateSync,
  jsonRpc,
  evm,
} as const;

export type SettingsTableName = keyof typeof SETTINGS;

type ValuesOf<S> = { [K in keyof S]: S[K] extends Setting<infer V> ? V : never };

/** The typed values of one table, derived from its settings. */
export type TableValues<N extends SettingsTableName> = ValuesOf<(typeof SETTINGS)[N]["settings"]>;

/** One flat view of a setting for flag registration, docs and tests. */
export interface SettingEntry {
  table: SettingsTableName;
  field: string;
  file: ConfigFileName;
  tableName: string;
  /** "--rpc.laddr", "--moniker" (undefined for keys that are not flags). */
  flag: string | undefined;
  /** "[rpc] laddr", "moniker". */
  display: string;
  setting: Setting<unknown>;
}

/** Every setting with its table, field and flag name, in file order. */
export function listSettings(): SettingEntry[] {
  const out: SettingEntry[] = [];
  for (const [tableKey, t] of Object.entries(SETTINGS) as [SettingsTableName, SettingsTable][]) {
    for (const [field, setting] of Object.entries(t.settings)) {
      const dotted = t.name === "" ? setting.key : `${t.name}.${setting.key}`;
      out.push({
        table: tableKey,
        field,
        file: t.file,
        tableName: t.name,
        flag: setting.flag ? `--${dotted}` : undefined,
        display: t.name === "" ? setting.key : `[${t.name}] ${setting.key}`,
        setting,
      });
    }
  }
  return out;
}

/**
 * priv_validator_laddr: empty (the key file signs), tcp://host:port, host:port (tcp) or
 * unix://path, as CometBFT's ProtocolAndAddress reads it (docs/remote-signer.md).
 */
function checkSignerLaddr(s: string): string | undefined {
  if (s === "") return undefined;
  const sep = s.indexOf("://");
  const proto = sep < 0 ? "tcp" : s.slice(0, sep);
  const rest = sep < 0 ? s : s.slice(sep + 3);
  if (proto === "unix")
    return rest === "" ? "must name a socket path after unix:// (unix:///path/to/signer.sock)" : undefined;
  if (proto !== "tcp") return `must be tcp://host:port or unix:///path (protocol "${proto}" is not one)`;
  const m = /^(?:\[[^\]]+\]|[^:/]*):(\d+)$/.exec(rest);
  if (m === null || Number(m[1]) > 65535) return "must be tcp://host:port, e.g. tcp://127.0.0.1:26659";
  return undefined;
}
