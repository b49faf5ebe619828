import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEV_MNEMONIC,
  decodeAnvilStateHex,
  deriveDevAccounts,
  ForkConfigError,
  type ForkOptions,
  ForkSource,
  ForkSourceError,
  formatDevAccounts,
  StateDumpError,
} from "../app/evm/index.js";
import {
  ConfigError,
  type ConfigOverrides,
  initHome,
  isHomeInitialized,
  loadGenesis,
  loadNodeConfig,
} from "../config/index.js";
import { isDevChainGenesis, startNode } from "../node/index.js";
import { createLogger } from "../util/logger.js";
import { startupMark } from "../util/startupTrace.js";
import { dashboardUrl } from "./dashboardUrl.js";
import { type DevInitGenesis, parseDevInitGenesis } from "./devGenesis.js";
import type { CliIo } from "./io.js";

/** `cometh dev`'s own flags (Anvil's names). */
export interface DevFlags {
  port: string;
  host: string;
  /** Absent: the --init file's `config.chainId`, else 31337. */
  chainId?: string;
  accounts: string;
  balance: string;
  mnemonic?: string;
  blockTime?: string;
  mining: boolean;
  gasLimit?: string;
  baseFee?: string;
  dumpState?: string;
  loadState?: string;
  state?: string;
  silent?: boolean;
  /** A geth genesis.json for a new dev chain (Anvil's `--init`; devGenesis.ts says what is read). */
  init?: string;
  /** Fork sources in failover order (`--fork-url`, repeated or comma-separated). */
  forkUrl?: string[];
  forkBlockNumber?: string;
  forkChainId?: string;
  forkCacheDir?: string;
  /** false with --no-storage-caching. */
  storageCaching?: boolean;
  /** Per request to the fork's source, ms (Anvil's --timeout). */
  timeout?: string;
  retries?: string;
}

export interface DevRunOptions extends DevFlags {
  /** --home: a persistent dev chain; absent: a temporary home deleted at exit. */
  home?: string;
  /** config.toml / app.toml flags given on the command line. */
  overrides: ConfigOverrides;
  logLevelGiven: boolean;
}

/**
 * The EVM chain id of a dev chain given neither --chain-id nor an --init file's chain id: Anvil's and
 * Hardhat's 31337. Foundry caches fork reads on disk per chain id and block for every chain id except
 * 99, 1337 and 31337, so a dev chain under any other id can be served an earlier dev chain's cached
 * state at the same block number (docs/dev-chain.md "Chain id"). `npm start` keeps Cosmos EVM's 262144.
 */
export const DEFAULT_DEV_CHAIN_ID = 31337n;

function wholeNumber(flag: string, value: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n > max) {
    throw new ConfigError("dev", flag, `must be a whole number up to ${max} (got "${value}")`);
  }
  return n;
}

function bigNumber(flag: string, value: string): bigint {
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(value)) {
    throw new ConfigError("dev", flag, `must be a whole number, decimal or 0x-hex (got "${value}")`);
  }
  return BigInt(value);
}

/** "10000", "0.5" ETH → wei. */
function etherToWei(flag: string, value: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,18}))?$/.exec(value);
  if (m === null) throw new ConfigError("dev", flag, `must be an amount of ETH such as 10000 or 0.5 (got "${value}")`);
  return BigInt(m[1] as string) * 10n ** 18n + BigInt((m[2] ?? "").padEnd(18, "0"));
}

/**
 * `cometh dev`: a single-validator dev chain for Hardhat and Foundry test suites (docs/dev-chain.md).
 * Writes a dev genesis (`app_state.evm.dev_chain`, the dev accounts funded) into a new home, starts
 * the node with automine and the dev methods, and stops on SIGINT/SIGTERM, writing --dump-state and
 * deleting a temporary home.
 */
export async function runDevChain(opts: DevRunOptions, io: CliIo): Promise<void> {
  startupMark("dev: command");
  const port = wholeNumber("--port", opts.port, 65535);
  const host = opts.host;
  const accounts = wholeNumber("--accounts", opts.accounts, 1000);
  const balanceWei = etherToWei("--balance", opts.balance);
  let init: DevInitGenesis | undefined;
  if (opts.init !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.init, "utf8");
    } catch (err) {
      throw new ConfigError("dev", "--init", `cannot read ${opts.init}: ${(err as Error).message}`);
    }
    init = parseDevInitGenesis(opts.init, text);
  }
  const temporary = opts.home === undefined;
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "cometh-dev-"));
  let fork: ForkSource | undefined;
  try {
    fork = openFork(opts, home);
  } catch (err) {
    if (temporary) rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const chainId =
    opts.chainId !== undefined
      ? bigNumber("--chain-id", opts.chainId)
      : (init?.chainId ?? storedChainId(home) ?? fork?.point.chainId ?? DEFAULT_DEV_CHAIN_ID);
  if (init?.chainId !== undefined && chainId !== init.chainId) {
    throw new ConfigError(
      "dev",
      "--chain-id",
      `${chainId} differs from config.chainId ${init.chainId} in ${opts.init}; give one of them`,
    );
  }
  const blockTimeSec = opts.blockTime === undefined ? 0 : wholeNumber("--block-time", opts.blockTime, 86_400);
  const gasLimit = opts.gasLimit === undefined ? init?.gasLimit : bigNumber("--gas-limit", opts.gasLimit);
  const baseFee = opts.baseFee === undefined ? init?.baseFee : bigNumber("--base-fee", opts.baseFee);
  const mnemonic = opts.mnemonic ?? DEV_MNEMONIC;
  const loadFile = opts.loadState ?? (opts.state !== undefined && existsSync(opts.state) ? opts.state : undefined);
  const dumpFile = opts.dumpState ?? opts.state;
  const keys = deriveDevAccounts(mnemonic, accounts);
  let loaded: Buffer | undefined;
  if (loadFile !== undefined) {
    try {
      loaded = readFileSync(loadFile);
    } catch (err) {
      throw new ConfigError("dev", "--load-state", `cannot read ${loadFile}: ${(err as Error).message}`);
    }
    try {
      decodeAnvilStateHex(`0x${loaded.toString("hex")}`);
    } catch (err) {
      if (!(err instanceof StateDumpError)) throw err;
      throw new ConfigError("dev", "--load-state", `${loadFile} is not a state file Anvil writes: ${err.message}`);
    }
  }

  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  const out = (line: string) => {
    if (opts.silent !== true) io.out(line);
  };
  try {
    if (!isHomeInitialized(home)) {
      await initHome(home, {
        chainId: "cometh-dev",
        moniker: "dev",
        appState: {
          evm: {
            dev_chain: true,
            accounts: keys.map((k) => ({ address: k.address, balance: balanceWei.toString() })),
            ...(init === undefined ? {} : { alloc: init.alloc }),
            ...(init?.coinbase === undefined ? {} : { coinbase: init.coinbase }),
          },
          ...(baseFee === undefined && init === undefined
            ? {}
            : {
                feemarket: {
                  params: {
                    ...(baseFee === undefined ? {} : { base_fee: baseFee.toString() }),
                    // A geth genesis describes Ethereum's accounting: the gas used is charged.
                    ...(init === undefined ? {} : { min_gas_multiplier: "0" }),
                  },
                },
              }),
        },
        ...(gasLimit === undefined ? {} : { maxGas: gasLimit }),
        // A fork's first block is the fork block + 1, as Anvil numbers it; CometBFT heights and
        // Ethereum block numbers stay equal (docs/dev-chain.md "Forking": block numbers).
        ...(fork === undefined ? {} : { initialHeight: Number(fork.point.blockNumber) + 1 }),
        // A temporary home goes when the chain stops: no fsyncs for its files.
        durable: !temporary,
      });
    }
    startupMark("dev: home initialized");
    if (fork !== undefined && readStoredFork(home) === undefined) writeFork(home, fork, chainId);
    const overrides: ConfigOverrides = {
      // A dev chain makes blocks when asked (automine, mine methods), back to back.
      "--consensus.timeout_commit": "0s",
      "--consensus.create_empty_blocks": false,
      "--consensus.timeout_propose": "3s",
      "--rpc.laddr": `tcp://${host}:26657`,
      "--rpc.dashboard": true,
      "--p2p.laddr": "tcp://127.0.0.1:0",
      "--proxy_app": "evm",
      // A temporary home goes at exit: its chain lives in memory, as Anvil's does (docs/dev-chain.md
      // "Memory stores"); a --home keeps LMDB, so the chain is there at the next start.
      ...(temporary ? { "--db_backend": "memdb" } : {}),
      "--pruning": "nothing",
      "--evm.evm-chain-id": chainId.toString(),
      "--json-rpc.enable": true,
      "--json-rpc.address": `${host}:${port}`,
      "--json-rpc.ws-address": `${host}:${port === 0 ? 0 : port + 1}`,
      "--json-rpc.api": "eth,net,web3,txpool,debug,personal,admin,miner",
      "--json-rpc.allow-insecure-unlock": true,
      // hardhat_mine(100000) or a large anvil_loadState may take minutes (Anvil has no such limit).
      "--json-rpc.http-timeout": "10m",
      ...(opts.logLevelGiven ? {} : { log_level: "error" }),
      ...opts.overrides,
    };
    const config = loadNodeConfig(home, overrides);
    if (!isDevChainGenesis(loadGenesis(config.base.genesisFile))) {
      throw new ConfigError(
        "dev",
        "--home",
        `${home} holds a chain that is not a dev chain (its genesis has no app_state.evm.dev_chain). Use a new directory, or run it with \`cometh start\``,
      );
    }
    startupMark("dev: config loaded");
    const log = createLogger({
      level: config.base.logLevels.default === "none" ? "silent" : config.base.logLevels.default,
      format: config.base.logFormat,
    });
    // Signals are handled from here on: one that arrives while the chain starts or loads a state
    // stops it as soon as it is up (never a kill half-way through a load).
    let stopping = false;
    let started = false;
    const finish = async () => {
      const n = node;
      if (n === undefined) return;
      if (dumpFile !== undefined && n.dev !== undefined) {
        writeFileSync(dumpFile, n.dev.dumpStateJson());
        out(`State written to ${dumpFile}`);
      }
      await n.stop();
      if (temporary) rmSync(home, { recursive: true, force: true });
    };
    const stopNow = () => {
      finish().then(
        () => log.flush(() => io.exit(0)),
        (err: unknown) => {
          io.err(
            `ERROR: stopping the dev chain failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          );
          io.exit(1);
        },
      );
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "stopping dev chain");
      if (started) stopNow();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    process.on("unhandledRejection", (reason: unknown) => {
      log.error({ err: reason }, "unhandled promise rejection (a bug: please report it)");
    });

    node = await startNode(config, log, {
      dev: {
        automine: opts.mining && blockTimeSec === 0,
        blockTimeSec: opts.mining ? blockTimeSec : 0,
        silent: opts.silent === true,
        print: (line) => io.out(line),
        mnemonic,
        accounts,
        ...(loaded === undefined ? {} : { loadState: new Uint8Array(loaded) }),
        ...(fork === undefined ? {} : { fork }),
        // A restart of the home resumes the fork anvil_reset moved the chain to.
        onForkReset: (next) => writeFork(home, next, chainId),
      },
    });

    startupMark("dev: node started");
    out("");
    out(`cometh dev ${node.genesis.chainId} (EVM chain id ${chainId}, home ${temporary ? "temporary" : home})`);
    out("");
    out(formatDevAccounts(keys, balanceWei));
    out("");
    out("WARNING: these accounts and keys are public; never use them on a real network.");
    out("");
    if (fork !== undefined) {
      out("Fork");
      out("==================");
      out(`Endpoint:       ${fork.options.urls.join(", ")}`);
      out(`Block number:   ${fork.point.blockNumber}`);
      out(`Block hash:     ${fork.point.blockHash}`);
      out(`Chain ID:       ${fork.point.chainId}`);
      out(`Cache:          ${fork.cacheFile ?? "memory only"}`);
      out("");
    }
    for (const addr of node.rpcAddresses) out(`node RPC listening on ${addr}`);
    for (const addr of node.rpcAddresses) {
      const url = dashboardUrl(addr, node.config.rpc.dashboard);
      if (url !== undefined) out(`Dashboard: ${url}`);
    }
    if (node.evmRpc !== undefined) {
      out(`Ethereum JSON-RPC listening on http://${node.evmRpc.http} and ws://${node.evmRpc.ws}`);
      out(`Listening on ${node.evmRpc.http}`);
    }
    started = true;
    if (stopping) stopNow();
  } catch (err) {
    // A failure after the start (a state file that does not load) stops the chain before its home goes.
    await node?.stop();
    // The app closes the fork's source; before the app exists, it is closed here.
    if (node === undefined) await fork?.close();
    if (temporary) rmSync(home, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The fork's source, resolved before the genesis is written (the chain id of a fork is the source's).
 * A home keeps the fork it was made with (`config/fork.json`: URLs, block, source chain id), so a
 * restart with --home needs no --fork-* flags and reads the same block.
 */
function openFork(opts: DevRunOptions, home: string): ForkSource | undefined {
  const given = opts.forkUrl ?? [];
  const stored = readStoredFork(home);
  if (given.length === 0 && stored === undefined) {
    if (opts.forkBlockNumber !== undefined || opts.forkChainId !== undefined) {
      throw new ConfigError("dev", "--fork-block-number", "needs --fork-url: the chain to fork");
    }
    return undefined;
  }
  const blockText = opts.forkBlockNumber ?? stored?.blockNumber;
  if (blockText !== undefined && !/^-?\d+$/.test(blockText)) {
    throw new ConfigError(
      "dev",
      "--fork-block-number",
      `must be a whole number, or negative for blocks before the head (got "${blockText}")`,
    );
  }
  const blockNumber = blockText === undefined ? undefined : BigInt(blockText);
  if (stored !== undefined && blockNumber !== undefined && BigInt(stored.blockNumber) !== blockNumber) {
    throw new ConfigError(
      "dev",
      "--fork-block-number",
      `${blockNumber} differs from block ${stored.blockNumber} this home was forked at. Use a new --home to fork another block`,
    );
  }
  const forkChainId = opts.forkChainId ?? stored?.chainId;
  const options: ForkOptions = {
    urls: given.length > 0 ? given : (stored?.urls ?? []),
    ...(blockNumber === undefined ? {} : { blockNumber }),
    ...(forkChainId === undefined ? {} : { chainId: bigNumber("--fork-chain-id", forkChainId) }),
    ...(opts.forkCacheDir === undefined ? {} : { cacheRoot: opts.forkCacheDir }),
    ...(opts.storageCaching === false ? { noCache: true } : {}),
    timeoutMs: wholeNumber("--timeout", opts.timeout ?? "10000", 3_600_000),
    retries: wholeNumber("--retries", opts.retries ?? "0", 100),
  };
  let fork: ForkSource;
  try {
    fork = ForkSource.open(options);
  } catch (err) {
    if (err instanceof ForkConfigError || err instanceof ForkSourceError) {
      throw new ConfigError("dev", "--fork-url", err.message);
    }
    throw err;
  }
  return fork;
}

/**
 * Records the fork of a home (see openFork): when a new home is made, and again each time anvil_reset
 * moves the chain to another fork. Written to a temporary file and renamed: never half a record.
 */
function writeFork(home: string, fork: ForkSource, evmChainId: bigint): void {
  const file = join(home, "config", "fork.json");
  const record: StoredFork = {
    urls: [...fork.options.urls],
    blockNumber: fork.point.blockNumber.toString(),
    chainId: fork.point.chainId.toString(),
    evmChainId: evmChainId.toString(),
  };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, file);
}

/** The EVM chain id a fork's home was made with (fork.json), when it records one. */
function storedChainId(home: string): bigint | undefined {
  const id = readStoredFork(home)?.evmChainId;
  return id === undefined ? undefined : bigNumber("--chain-id", id);
}

function readStoredFork(home: string): StoredFork | undefined {
  const file = join(home, "config", "fork.json");
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as StoredFork;
  } catch (err) {
    throw new ConfigError("dev", "--home", `cannot read ${file}: ${(err as Error).message}`);
  }
}

interface StoredFork {
  urls: string[];
  /** The source's block the chain reads its state at. */
  blockNumber: string;
  /** The source's chain id (an offline start needs no source to learn it). */
  chainId: string;
  /**
   * The chain's own EVM chain id (absent in records written before it was kept): a restart keeps it
   * when anvil_reset moved the chain to a source with another id.
   */
  evmChainId?: string;
}
