import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ConfigError } from "./errors.js";
import { loadNodeConfig, type NodeConfig } from "./nodeConfig.js";
import { parseProxyApp } from "./proxyApp.js";
import { renderConfigFile } from "./renderConfigFile.js";
import { listSettings, type SettingEntry } from "./settingsTable.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "cometh-config-"));
  mkdirSync(join(home, "config"));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

function writeConfig(text: string, file: "config.toml" | "app.toml" = "config.toml"): void {
  writeFileSync(join(home, "config", file), text);
}

/** The error message with the temp home replaced, for snapshots. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message.replaceAll(home, "<home>");
  }
  throw new Error("expected a ConfigError");
}

describe("defaults", () => {
  test("default: equal CometBFT v0.38.25's DefaultConfig and the app.toml table", () => {
    const c = loadNodeConfig(home);
    const h = (p: string) => join(home, p);
    const expected: Omit<NodeConfig, "home" | "files" | "warnings"> = {
      base: {
        version: "0.38.25",
        proxyApp: "evm",
        moniker: hostname(),
        dbBackend: "lmdb",
        dbDir: h("data"),
        logLevel: "info",
        logLevels: { default: "info", modules: {} },
        logFormat: "plain",
        genesisFile: h("config/genesis.json"),
        privValidatorKeyFile: h("config/priv_validator_key.json"),
        privValidatorStateFile: h("data/priv_validator_state.json"),
        privValidatorLaddr: "",
        nodeKeyFile: h("config/node_key.json"),
        abci: "socket",
        blockSyncMode: true,
        filterPeers: false,
        eventBusBufferCapacity: 0,
      },
      rpc: {
        laddr: "tcp://127.0.0.1:26657",
        corsAllowedOrigins: [],
        corsAllowedMethods: ["HEAD", "GET", "POST"],
        corsAllowedHeaders: ["Origin", "Accept", "Content-Type", "X-Requested-With", "X-Server-Time"],
        grpcLaddr: "",
        grpcMaxOpenConnections: 900,
        unsafe: false,
        maxOpenConnections: 900,
        maxSubscriptionClients: 100,
        maxSubscriptionsPerClient: 5,
        experimentalSubscriptionBufferSize: 200,
        experimentalWebsocketWriteBufferSize: 200,
        experimentalCloseOnSlowClient: false,
        timeoutBroadcastTxCommitMs: 10_000,
        maxRequestBatchSize: 10,
        maxBodyBytes: 1_000_000,
        maxHeaderBytes: 1_048_576,
        tlsCertFile: "",
        tlsKeyFile: "",
        pprofLaddr: "",
        dashboard: false,
      },
      p2p: {
        laddr: "tcp://0.0.0.0:26656",
        externalAddress: "",
        seeds: "",
        persistentPeers: "",
        addrBookFile: h("config/addrbook.json"),
        addrBookStrict: true,
        maxNumInboundPeers: 40,
        maxNumOutboundPeers: 10,
        unconditionalPeerIds: "",
        persistentPeersMaxDialPeriodMs: 0,
        flushThrottleTimeoutMs: 100,
        maxPacketMsgPayloadSize: 1024,
        sendRate: 5_120_000,
        recvRate: 5_120_000,
        pex: true,
        seedMode: false,
        privatePeerIds: "",
        allowDuplicateIp: false,
        handshakeTimeoutMs: 20_000,
        dialTimeoutMs: 3_000,
      },
      mempool: {
        type: "flood",
        recheck: true,
        recheckTimeoutMs: 1_000,
        broadcast: true,
        walDir: "",
        size: 5000,
        maxTxsBytes: 1_073_741_824,
        cacheSize: 10_000,
        keepInvalidTxsInCache: false,
        maxTxBytes: 1_048_576,
        maxBatchBytes: 0,
        experimentalMaxGossipConnectionsToPersistentPeers: 0,
        experimentalMaxGossipConnectionsToNonPersistentPeers: 0,
      },
      stateSync: {
        enable: false,
        rpcServers: "",
        trustHeight: 0,
        trustHash: "",
        trustPeriodMs: 168 * 3_600_000,
        discoveryTimeMs: 15_000,
        tempDir: "",
        chunkRequestTimeoutMs: 10_000,
        chunkFetchers: 4,
        maxSnapshotChunks: 100_000,
      },
      blockSync: { version: "v0" },
      consensus: {
        walPath: h("data/cs.wal/wal"),
        timeoutProposeMs: 3_000,
        timeoutProposeDeltaMs: 500,
        timeoutPrevoteMs: 1_000,
        timeoutPrevoteDeltaMs: 500,
        timeoutPrecommitMs: 1_000,
        timeoutPrecommitDeltaMs: 500,
        timeoutCommitMs: 1_000,
        doubleSignCheckHeight: 0,
        skipTimeoutCommit: false,
        createEmptyBlocks: true,
        createEmptyBlocksIntervalMs: 0,
        peerGossipSleepDurationMs: 100,
        peerQueryMaj23SleepDurationMs: 2_000,
        blockTimeToleranceMs: 60_000,
      },
      storage: { discardAbciResponses: false },
      txIndex: { indexer: "kv", psqlConn: "" },
      instrumentation: {
        prometheus: false,
        prometheusListenAddr: ":26660",
        maxOpenConnections: 3,
        namespace: "cometbft",
      },
      appBase: { pruning: "default", pruningKeepRecent: 0, minRetainBlocks: 0 },
      appStateSync: { snapshotInterval: 0, snapshotKeepRecent: 2 },
      jsonRpc: {
        enable: true,
        address: "127.0.0.1:8545",
        wsAddress: "127.0.0.1:8546",
        wsOrigins: ["127.0.0.1", "localhost"],
        api: ["eth", "net", "web3"],
        gasCap: 25_000_000n,
        allowInsecureUnlock: true,
        evmTimeoutMs: 10_000,
        txfeeCap: 1,
        filterCap: 200,
        feehistoryCap: 100,
        logsCap: 10_000,
        blockRangeCap: 10_000,
        httpTimeoutMs: 30_000,
        httpIdleTimeoutMs: 120_000,
        allowUnprotectedTxs: false,
        maxOpenConnections: 0,
        enableIndexer: false,
        metricsAddress: "127.0.0.1:6065",
        batchRequestLimit: 1000,
        batchResponseMaxSize: 25_000_000,
        filterTimeoutMs: 300_000,
        enableProfiling: false,
        readWorkers: 0,
        readProcesses: 1,
      },
      evm: { evmChainId: 262_144n, minTip: 0n, maxTxGasWanted: 0n },
    };
    expect(c).toEqual({
      ...expected,
      home,
      files: { config: h("config/config.toml"), app: h("config/app.toml") },
      warnings: [],
    });
  });

  test("default: the generated files load back to the defaults without warnings", () => {
    writeConfig(renderConfigFile("config.toml"));
    writeConfig(renderConfigFile("app.toml"), "app.toml");
    expect(loadNodeConfig(home)).toEqual(loadNodeConfig(join(home, "nonexistent-subdir", "..")));
    expect(loadNodeConfig(home).warnings).toEqual([]);
  });

  test("default: the generated config.toml carries CometBFT's comments and every key", () => {
    const text = renderConfigFile("config.toml");
    expect(text).toContain("# A custom human readable name for this node\nmoniker = ");
    expect(text).toContain('# How long we wait for a proposal block before prevoting nil\ntimeout_propose = "3s"');
    expect(text).toContain("[rpc]\n\n# TCP or UNIX socket address for the RPC server to listen on");
    expect(text).toContain('block_time_tolerance = "1m0s"');
    expect(text).toContain('cors_allowed_methods = ["HEAD", "GET", "POST"]');
    for (const e of listSettings()) {
      const file = renderConfigFile(e.file);
      expect(file).toMatch(new RegExp(`^${e.setting.key.replaceAll(".", "\\.")} = `, "m"));
    }
    expect(renderConfigFile("app.toml")).toContain(
      "[json-rpc]\n\n# Enable defines if the JSON-RPC server should be enabled.\nenable = true",
    );
    expect(renderConfigFile("app.toml")).toContain("txfee-cap = 1.0");
  });

  test("behavior: values in the files replace defaults; paths resolve against home", () => {
    writeConfig(
      [
        'moniker = "node-a"',
        'db_dir = "/var/lib/cometh"',
        'genesis_file = "other/genesis.json"',
        "[rpc]",
        'laddr = "tcp://0.0.0.0:36657"',
        'tls_cert_file = "cert.pem"',
        "[consensus]",
        'timeout_commit = "250ms"',
        "[mempool]",
        "keep-invalid-txs-in-cache = true",
      ].join("\n"),
    );
    writeConfig('[json-rpc]\napi = "eth,txpool"\nrpc-gas-cap = 0\n', "app.toml");
    const c = loadNodeConfig(home);
    expect(c.base.moniker).toBe("node-a");
    expect(c.base.dbDir).toBe("/var/lib/cometh");
    expect(c.base.genesisFile).toBe(join(home, "other/genesis.json"));
    expect(c.rpc.laddr).toBe("tcp://0.0.0.0:36657");
    expect(c.rpc.tlsCertFile).toBe(join(home, "config", "cert.pem"));
    expect(c.consensus.timeoutCommitMs).toBe(250);
    expect(c.mempool.keepInvalidTxsInCache).toBe(true);
    expect(c.jsonRpc.api).toEqual(["eth", "txpool"]);
    expect(c.jsonRpc.gasCap).toBe(0n);
  });

  test("behavior: unknown keys and tables are ignored with a warning", () => {
    writeConfig('fast_sync = true\n[rpc]\nladdr = "tcp://127.0.0.1:1"\nbogus = 1\n[fastsync]\nversion = "v0"\n');
    const c = loadNodeConfig(home);
    expect(c.warnings.map((w) => w.replaceAll(home, "<home>"))).toMatchInlineSnapshot(`
      [
        "<home>/config/config.toml: unknown key fast_sync is ignored",
        "<home>/config/config.toml: unknown key [rpc] bogus is ignored",
        "<home>/config/config.toml: unknown table [fastsync] is ignored",
      ]
    `);
  });

  test("behavior: log_level with module levels", () => {
    writeConfig('log_level = "consensus:debug,*:error"');
    expect(loadNodeConfig(home).base.logLevels).toEqual({ default: "error", modules: { consensus: "debug" } });
  });
});

/** A non-default value for each flag, and what the config must then hold. */
function sampleFor(e: SettingEntry): { flag: string | boolean; expected: unknown } | "skip" {
  const special: Record<string, { flag: string | boolean; expected: unknown } | "skip"> = {
    // Settings with a single valid value or a required value: covered by the error tests.
    "--proxy_app": "skip",
    "--db_backend": "skip",
    "--priv_validator_laddr": { flag: "unix:///tmp/signer.sock", expected: "unix:///tmp/signer.sock" },
    "--blocksync.version": "skip",
    "--statesync.enable": "skip",
    "--rpc.experimental_subscription_buffer_size": { flag: "150", expected: 150 },
    "--tx_index.indexer": { flag: "null", expected: "null" },
    "--log_level": { flag: "debug", expected: "debug" },
    "--json-rpc.api": { flag: "eth,debug", expected: ["eth", "debug"] },
    "--rpc.laddr": { flag: "tcp://127.0.0.1:0", expected: "tcp://127.0.0.1:0" },
    "--rpc.grpc_laddr": { flag: "tcp://127.0.0.1:9090", expected: "tcp://127.0.0.1:9090" },
    "--p2p.laddr": { flag: "tcp://0.0.0.0:1", expected: "tcp://0.0.0.0:1" },
    "--instrumentation.prometheus_listen_addr": { flag: ":9999", expected: ":9999" },
    "--json-rpc.address": { flag: "0.0.0.0:1", expected: "0.0.0.0:1" },
    "--json-rpc.ws-address": { flag: "0.0.0.0:2", expected: "0.0.0.0:2" },
    "--json-rpc.metrics-address": { flag: "0.0.0.0:3", expected: "0.0.0.0:3" },
    "--rpc.tls_cert_file": { flag: "c.pem", expected: join(home, "config", "c.pem") },
    "--rpc.tls_key_file": { flag: "k.pem", expected: join(home, "config", "k.pem") },
    "--version": "skip",
  };
  const s = special[e.flag ?? ""];
  if (s !== undefined) return s;
  const st = e.setting;
  if (st.valid !== undefined) {
    const other = st.valid.find((v) => v !== st.default);
    return other === undefined ? "skip" : { flag: other, expected: other };
  }
  if (st.resolve !== undefined) return { flag: "custom/path", expected: join(home, "custom/path") };
  switch (st.kind) {
    case "boolean":
      return { flag: !st.default, expected: !st.default };
    case "integer":
      return typeof st.default === "bigint"
        ? { flag: String(st.default + 7n), expected: st.default + 7n }
        : { flag: String(Number(st.default) + 7), expected: Number(st.default) + 7 };
    case "float":
      return { flag: "2.5", expected: 2.5 };
    case "duration":
      return { flag: "7s", expected: 7000 };
    case "list":
      return { flag: "a,b", expected: ["a", "b"] };
    default:
      return { flag: "sample-value", expected: "sample-value" };
  }
}

describe("flags", () => {
  const entries = listSettings().filter((e) => e.flag !== undefined);
  test("default: every setting but version is a flag named --<table>.<key>", () => {
    expect(entries.length).toBe(listSettings().length - 1);
    expect(entries.map((e) => e.flag)).toContain("--moniker");
    expect(entries.map((e) => e.flag)).toContain("--rpc.laddr");
    expect(entries.map((e) => e.flag)).toContain("--json-rpc.gas-cap");
    expect(entries.map((e) => e.flag)).toContain("--mempool.keep-invalid-txs-in-cache");
  });

  for (const e of entries) {
    test(`args: ${e.flag} overrides ${e.display}`, () => {
      const sample = sampleFor(e);
      if (sample === "skip") return;
      writeConfig(renderConfigFile("config.toml"));
      const c = loadNodeConfig(home, { [(e.flag as string).slice(2)]: sample.flag });
      const table = c[e.table] as Record<string, unknown>;
      expect(table[e.field]).toEqual(sample.expected);
      expect(table[e.field]).not.toEqual(loadNodeConfig(home)[e.table][e.field as never]);
    });
  }

  test("args: dashes and underscores are interchangeable, a leading -- is accepted", () => {
    const c = loadNodeConfig(home, { "--p2p.external-address": "1.2.3.4:26656", "json_rpc.ws_address": "0.0.0.0:1" });
    expect(c.p2p.externalAddress).toBe("1.2.3.4:26656");
    expect(c.jsonRpc.wsAddress).toBe("0.0.0.0:1");
  });

  test("args: flags win over the files", () => {
    writeConfig('[consensus]\ntimeout_commit = "5s"\n');
    expect(loadNodeConfig(home, { "consensus.timeout_commit": "10ms" }).consensus.timeoutCommitMs).toBe(10);
  });
});

describe("errors", () => {
  test("error: malformed TOML", () => {
    writeConfig('moniker = "a"\n[rpc\nladdr = 1\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: is not valid TOML: illegal character in key at line 2, column 5"`,
    );
  });

  test("error: malformed app.toml", () => {
    writeConfig("[json-rpc]\nenable = yes\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: is not valid TOML: invalid value at line 2, column 10"`,
    );
  });

  test("error: wrong type", () => {
    writeConfig('[mempool]\nsize = "big"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [mempool] size must be an integer; got "big" (a string)"`,
    );
    writeConfig('[rpc]\nunsafe = "yes"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] unsafe must be true or false; got "yes" (a string)"`,
    );
    writeConfig('[rpc]\ncors_allowed_origins = "*"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] cors_allowed_origins must be an array of strings; got "*" (a string)"`,
    );
    writeConfig("rpc = 5\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: rpc must be a table ([rpc])"`,
    );
  });

  test("error: unknown value", () => {
    writeConfig('[tx_index]\nindexer = "elastic"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [tx_index] indexer must be one of "null", "kv", "psql"; got "elastic""`,
    );
    writeConfig('db_backend = "goleveldb"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: db_backend must be one of "lmdb", "memdb"; got "goleveldb". cometh stores everything in LMDB (or in memory with memdb); CometBFT's goleveldb, cleveldb, boltdb, rocksdb and badgerdb are replaced by it"`,
    );
    writeConfig('log_format = "xml"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: log_format must be one of "plain", "json"; got "xml""`,
    );
    writeConfig('log_level = "verbose"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: log_level has unknown level "verbose"; valid levels: debug, info, warn, error, none; as "info" or "consensus:debug,*:error""`,
    );
    writeConfig('proxy_app = "evmm"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "evmm""`,
    );
  });

  test("behavior: proxy_app names a built-in app or an external application's socket", () => {
    for (const [text, target] of [
      ["evm", { kind: "builtin", name: "evm" }],
      ["kvstore", { kind: "builtin", name: "kvstore" }],
      ["tcp://127.0.0.1:26658", { kind: "socket", address: { protocol: "tcp", host: "127.0.0.1", port: 26658 } }],
      ["127.0.0.1:26658", { kind: "socket", address: { protocol: "tcp", host: "127.0.0.1", port: 26658 } }],
      ["unix:///run/app.sock", { kind: "socket", address: { protocol: "unix", path: "/run/app.sock" } }],
    ] as const) {
      writeConfig(`proxy_app = "${text}"\n`);
      const config = loadNodeConfig(home);
      expect(config.base.proxyApp).toBe(text);
      expect(parseProxyApp(config.base.proxyApp)).toMatchObject(target);
    }
    // abci = "grpc" drives an external app over ABCI's gRPC service.
    writeConfig('proxy_app = "tcp://127.0.0.1:26658"\nabci = "grpc"\n');
    expect(loadNodeConfig(home).base.abci).toBe("grpc");
  });

  test("error: malformed proxy_app addresses", () => {
    const errors = [
      "tcp://127.0.0.1",
      "tcp://127.0.0.1:0",
      "http://127.0.0.1:26658",
      "unix://",
      "persistent_kvstore",
    ].map((text) => {
      writeConfig(`proxy_app = "${text}"\n`);
      return errorOf(() => loadNodeConfig(home));
    });
    expect(errors).toMatchInlineSnapshot(`
      [
        "<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "tcp://127.0.0.1" (must be host:port, as in "tcp://127.0.0.1:26657")",
        "<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "tcp://127.0.0.1:0" (port 0 cannot be dialled: give the port the application listens on)",
        "<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "http://127.0.0.1:26658" (unknown protocol "http"; valid protocols: "tcp", "unix")",
        "<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "unix://" (unix address needs a socket path, as in unix:///run/cometh.sock)",
        "<home>/config/config.toml: proxy_app must be "evm", "kvstore", or the address of an external ABCI application such as "tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"; got "persistent_kvstore", one of CometBFT's built-in apps that cometh does not include (run it as an external app, e.g. \`abci-cli kvstore\`)",
      ]
    `);
    // Ignored for the in-process apps, as CometBFT ignores it for its built-in ones.
    writeConfig('proxy_app = "kvstore"\nabci = "grpc"\n');
    expect(loadNodeConfig(home).base.abci).toBe("grpc");
  });

  test("error: unknown EVM namespace lists the valid ones", () => {
    writeConfig('[json-rpc]\napi = "eth,foo"\n', "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] api has unknown namespace "foo"; valid namespaces: eth, web3, net, txpool, debug, personal, admin, miner"`,
    );
    writeConfig('[json-rpc]\napi = "eth,eth"\n', "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] api lists namespace "eth" twice; valid namespaces: eth, web3, net, txpool, debug, personal, admin, miner"`,
    );
  });

  test("error: negative numbers and durations", () => {
    writeConfig("[rpc]\nmax_open_connections = -1\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] max_open_connections can't be negative; got -1. Use 0 or a positive integer"`,
    );
    writeConfig('[consensus]\ntimeout_propose = "-1s"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [consensus] timeout_propose can't be negative; got "-1s""`,
    );
    writeConfig("");
    writeConfig("[json-rpc]\ngas-cap = -5\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] gas-cap can't be negative; got -5. Use 0 or a positive integer"`,
    );
  });

  test("behavior: [rpc] dashboard is off unless the file or a flag turns it on", () => {
    writeConfig("");
    expect(loadNodeConfig(home).rpc.dashboard).toBe(false);
    writeConfig("[rpc]\ndashboard = true\n");
    expect(loadNodeConfig(home).rpc.dashboard).toBe(true);
    expect(loadNodeConfig(home, { "rpc.dashboard": false }).rpc.dashboard).toBe(false);
    writeConfig('[rpc]\ndashboard = "yes"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] dashboard must be true or false; got "yes" (a string)"`,
    );
    expect(renderConfigFile("config.toml")).toMatch(/^dashboard = false$/m);
  });

  test("default: [json-rpc] filter-timeout is a positive Go duration (geth's 5 minutes by default)", () => {
    expect(loadNodeConfig(home).jsonRpc.filterTimeoutMs).toBe(300_000);
    expect(loadNodeConfig(home, { "json-rpc.filter-timeout": "1500ms" }).jsonRpc.filterTimeoutMs).toBe(1500);
    expect(() => loadNodeConfig(home, { "json-rpc.filter-timeout": "0s" })).toThrow(/filter-timeout/);
  });

  test("limits: [json-rpc] read-workers takes 0..64", () => {
    writeConfig("[json-rpc]\nread-workers = 0\n", "app.toml");
    expect(loadNodeConfig(home).jsonRpc.readWorkers).toBe(0);
    writeConfig("[json-rpc]\nread-workers = 64\n", "app.toml");
    expect(loadNodeConfig(home).jsonRpc.readWorkers).toBe(64);
    expect(loadNodeConfig(home, { "json-rpc.read-workers": "2" }).jsonRpc.readWorkers).toBe(2);
    writeConfig("[json-rpc]\nread-workers = 65\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] read-workers must be at most 64; got 65"`,
    );
    writeConfig("[json-rpc]\nread-workers = -1\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] read-workers can't be negative; got -1. Use 0 or a positive integer"`,
    );
    writeConfig('[json-rpc]\nread-workers = "two"\n', "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] read-workers must be an integer; got "two" (a string)"`,
    );
    writeConfig("", "app.toml");
    expect(errorOf(() => loadNodeConfig(home, { "json-rpc.read-workers": "100" }))).toMatchInlineSnapshot(
      `"flag --json-rpc.read-workers: must be at most 64; got 100"`,
    );
  });

  test("limits: [json-rpc] read-processes takes 0..16", () => {
    writeConfig("", "app.toml");
    expect(loadNodeConfig(home).jsonRpc.readProcesses).toBe(1);
    writeConfig("[json-rpc]\nread-processes = 16\n", "app.toml");
    expect(loadNodeConfig(home).jsonRpc.readProcesses).toBe(16);
    expect(loadNodeConfig(home, { "json-rpc.read-processes": "1" }).jsonRpc.readProcesses).toBe(1);
    writeConfig("[json-rpc]\nread-processes = 17\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] read-processes must be at most 16; got 17"`,
    );
    writeConfig("[json-rpc]\nread-processes = -1\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] read-processes can't be negative; got -1. Use 0 or a positive integer"`,
    );
    writeConfig("", "app.toml");
    expect(errorOf(() => loadNodeConfig(home, { "json-rpc.read-processes": "x" }))).toMatchInlineSnapshot(
      `"flag --json-rpc.read-processes: must be an integer; got "x" (a string)"`,
    );
  });

  test("error: malformed duration and address", () => {
    writeConfig('[consensus]\ntimeout_commit = "1 second"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [consensus] timeout_commit must be a duration such as "500ms", "3s" or "1m0s" (units: ns, us, ms, s, m, h); got "1 second""`,
    );
    writeConfig("[consensus]\ntimeout_commit = 1000\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [consensus] timeout_commit must be a duration such as "500ms", "3s" or "1m0s" (units: ns, us, ms, s, m, h); got 1000 (an integer)"`,
    );
    writeConfig('[rpc]\nladdr = "http://127.0.0.1:26657"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] laddr is not a valid listen address (unknown protocol "http"; valid protocols: "tcp", "unix"); got "http://127.0.0.1:26657""`,
    );
  });

  test("error: bad flag values name the flag", () => {
    expect(errorOf(() => loadNodeConfig(home, { "mempool.size": "-3" }))).toMatchInlineSnapshot(
      `"flag --mempool.size: can't be negative; got -3. Use 0 or a positive integer"`,
    );
    expect(errorOf(() => loadNodeConfig(home, { "tx_index.indexer": "sql" }))).toMatchInlineSnapshot(
      `"flag --tx_index.indexer: must be one of "null", "kv", "psql"; got "sql""`,
    );
    expect(errorOf(() => loadNodeConfig(home, { "rpc.laddr": true }))).toMatchInlineSnapshot(
      `"flag --rpc.laddr: needs a value"`,
    );
    expect(errorOf(() => loadNodeConfig(home, { "no.such": "1" }))).toMatchInlineSnapshot(
      `"flag --no.such: is not a setting. Run "cometh start --help" for the list of flags"`,
    );
  });

  test("error: rules across settings", () => {
    writeConfig("[rpc]\nexperimental_websocket_write_buffer_size = 150\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] experimental_websocket_write_buffer_size (150) must be >= experimental_subscription_buffer_size (200)"`,
    );
    writeConfig('[mempool]\ntype = "nop"\n[consensus]\ncreate_empty_blocks = false\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [mempool] type "nop" does not support create_empty_blocks = false; use type = "flood" or create_empty_blocks = true"`,
    );
    writeConfig('[tx_index]\nindexer = "psql"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [tx_index] psql-conn must be set when indexer = "psql" (postgresql://<user>:<password>@<host>:<port>/<db>?<opts>)"`,
    );
    writeConfig("[rpc]\nexperimental_subscription_buffer_size = 50\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [rpc] experimental_subscription_buffer_size must be at least 100; got 50"`,
    );
    writeConfig('priv_validator_laddr = "udp://127.0.0.1:26659"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: priv_validator_laddr must be tcp://host:port or unix:///path (protocol "udp" is not one)"`,
    );
    writeConfig('priv_validator_laddr = "tcp://127.0.0.1"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: priv_validator_laddr must be tcp://host:port, e.g. tcp://127.0.0.1:26659"`,
    );
    writeConfig('priv_validator_laddr = "unix://"\n');
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: priv_validator_laddr must name a socket path after unix:// (unix:///path/to/signer.sock)"`,
    );
    writeConfig("[statesync]\nenable = true\n");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [statesync] rpc_servers at least two rpc_servers entries are required (comma-separated, such as "http://10.0.0.1:26657,http://10.0.0.2:26657")"`,
    );
    writeConfig(
      '[statesync]\nenable = true\nrpc_servers = "http://127.0.0.1:1,http://127.0.0.1:2"\ntrust_height = 5\n',
    );
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [statesync] trust_hash "" is not a 32-byte hex block hash (take it from a trusted node's /block?height=<trust_height>)"`,
    );
    writeConfig(
      `[statesync]\nenable = true\nrpc_servers = "a,b"\ntrust_height = 5\ntrust_hash = "${"ab".repeat(32)}"\ndiscovery_time = "500ms"\n`,
    );
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/config.toml: [statesync] discovery_time must be 0 or at least 1s"`,
    );
    writeConfig("");
    writeConfig('[json-rpc]\napi = ""\n', "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] api must name at least one namespace when enable = true, such as "eth,net,web3""`,
    );
    writeConfig("[json-rpc]\ngas-cap = 1\nrpc-gas-cap = 2\n", "app.toml");
    expect(errorOf(() => loadNodeConfig(home))).toMatchInlineSnapshot(
      `"<home>/config/app.toml: [json-rpc] gas-cap is also set as "rpc-gas-cap" with a different value; set only one of "gas-cap", "rpc-gas-cap""`,
    );
  });
});

describe("app.toml pruning", () => {
  test("invalid: custom pruning needs at least 2 kept heights", () => {
    expect(() => loadNodeConfig("/nonexistent-home", { "--pruning": "custom", "--pruning-keep-recent": "1" })).toThrow(
      /pruning-keep-recent.*\(1\) must be at least 2 when pruning = "custom"/,
    );
    expect(loadNodeConfig("/nonexistent-home", { "--pruning": "nothing" }).appBase.pruning).toBe("nothing");
  });
});
