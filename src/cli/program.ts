import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, Option } from "commander";
import {
  COMETBFT_VERSION,
  ConfigError,
  type ConfigOverrides,
  createTestnet,
  GenesisError,
  initHome,
  isHomeInitialized,
  type LogLevelName,
  listSettings,
  loadNodeConfig,
  loadNodeKey,
  type NodeConfig,
  NodeKeyFileError,
  normalizeFlagName,
  packageVersion,
  parseLogLevel,
  resetHome,
  resolveHome,
} from "../config/index.js";
import type { RunningNode } from "../node/index.js";
import {
  DoubleSignError,
  encodePubKeyJson,
  InvalidSignRequestError,
  loadPrivValidatorKey,
  PrivValidatorFileError,
  RemoteSignerError,
  SignerAddressError,
  SignerConnectionError,
} from "../privval/index.js";
import { createLogger, type Logger } from "../util/logger.js";
import { startupMark } from "../util/startupTrace.js";
import { dashboardUrl } from "./dashboardUrl.js";
import type { DevFlags } from "./devCommand.js";
import type { CliIo } from "./io.js";
import type { SignerFlags } from "./signerCommand.js";

export type { CliIo } from "./io.js";

export const processIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  env: process.env,
  exit: (code) => process.exit(code),
};

/** Errors caused by the user's files or flags: the message is enough, no stack trace. */
const USER_ERRORS = [
  ConfigError,
  GenesisError,
  NodeKeyFileError,
  PrivValidatorFileError,
  DoubleSignError,
  InvalidSignRequestError,
  SignerAddressError,
  SignerConnectionError,
  RemoteSignerError,
] as const;

/**
 * Damaged data files found while starting a node (store/ StoreFileError, consensus/ WalRepairError),
 * and a data directory another node holds (node/ DataDirLockedError): their message names the file
 * and what is wrong. Registered by `loadNode`, as those modules load
 * with the node only.
 */
let dataFileErrors: readonly (abstract new (...args: never[]) => Error)[] = [];

/** node/ on demand (init, show-node-id and version run without its dependencies), with its data-file errors. */
async function loadNode(): Promise<typeof import("../node/index.js")> {
  const [node, store, consensus] = await Promise.all([
    import("../node/index.js"),
    import("../store/index.js"),
    import("../consensus/index.js"),
  ]);
  dataFileErrors = [store.StoreFileError, consensus.WalRepairError, node.DataDirLockedError];
  return node;
}

/** pino level for a log_level name ("none" silences). */
function pinoLevel(level: LogLevelName): string {
  return level === "none" ? "silent" : level;
}

export function createNodeLogger(config: NodeConfig): Logger {
  return createLogger({ level: pinoLevel(config.base.logLevels.default), format: config.base.logFormat });
}

interface GlobalOpts {
  home?: string;
  log_level?: string;
}

/** Settings flags in argv may use "-" or "_" (--p2p.external-address); rewrite them to the table's spelling. */
export function normalizeArgv(argv: readonly string[]): string[] {
  const canonical = new Map<string, string>();
  for (const e of listSettings()) if (e.flag !== undefined) canonical.set(normalizeFlagName(e.flag), e.flag);
  return argv.map((arg) => {
    if (!arg.startsWith("--")) return arg;
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const flag = canonical.get(normalizeFlagName(name));
    if (flag === undefined || flag === name) return arg;
    return eq < 0 ? flag : `${flag}${arg.slice(eq)}`;
  });
}

/**
 * Builds the `cometh` command tree. Actions report user errors on stderr and exit 1. The commands,
 * in `cometh help` order: init, start, dev, testnet, start-testnet, signer, show-node-id,
 * show-validator, version, unsafe-reset-all.
 */
export function buildProgram(io: CliIo = processIo, argv?: readonly string[]): Command {
  // The words of the command line (runCli): start's and dev's setting flags are built only when named.
  const only = argv === undefined ? undefined : new Set(argv.slice(2));
  const program = new Command("cometh")
    .description("A CometBFT v0.38 compatible blockchain node")
    .option("--home <dir>", "directory for config and data (default: $COMETH_HOME or ~/.cometh)")
    .option("--log_level <level>", 'log level, e.g. "info" or "consensus:debug,*:error"')
    .showHelpAfterError('(run "cometh help <command>" for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  addInitCommand(program, io);
  addStartCommand(program, io, only);
  addDevCommand(program, io, only);
  addTestnetCommands(program, io);
  addSignerCommand(program, io);
  addShowCommands(program, io);
  addVersionCommand(program, io);
  addUnsafeResetAllCommand(program, io);
  return program;
}

// ---------------------------------------------------------------------------------------------
// What the commands share: global flags, setting flags, error reporting

function globals(cmd: Command): GlobalOpts {
  return cmd.optsWithGlobals<GlobalOpts>();
}

function homeOf(cmd: Command, io: CliIo): string {
  return resolveHome(globals(cmd).home, io.env);
}

/** --log_level as a config override. */
function globalOverrides(cmd: Command): ConfigOverrides {
  const level = globals(cmd).log_level;
  return level === undefined ? {} : { log_level: level };
}

/** An action that reports what it throws on stderr (user errors without a stack trace) and exits 1. */
function reportingErrors<A extends unknown[]>(
  io: CliIo,
  fn: (...args: A) => Promise<void> | void,
): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    try {
      await fn(...args);
    } catch (err) {
      if ([...USER_ERRORS, ...dataFileErrors].some((cls) => err instanceof cls)) {
        io.err(`ERROR: ${(err as Error).message}`);
      } else {
        io.err(`ERROR: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
      io.exit(1);
    }
  };
}

/**
 * Every config.toml/app.toml key as a flag of `cmd` (start, dev), unless the command line does not
 * name it (`only`, from runCli): ~100 options each, built for every command, were ~3% of
 * `cometh dev`'s start-up (docs/dev-chain.md "Start-up"). A word of the command line that merely
 * equals a command's name only costs that time.
 */
function addSettingFlags(cmd: Command, only: ReadonlySet<string> | undefined): void {
  if (only !== undefined && ![cmd.name(), ...cmd.aliases()].some((n) => only.has(n))) return;
  for (const e of listSettings()) {
    if (e.flag === undefined || e.flag === "--log_level") continue;
    const firstLine = e.setting.doc.split("\n")[0] ?? "";
    const d = e.setting.default;
    const def = typeof d === "string" || Array.isArray(d) ? JSON.stringify(d) : String(d);
    const description = `${firstLine ? `${firstLine} ` : ""}(${e.display} in ${e.file}; default ${def})`;
    cmd.addOption(new Option(e.setting.kind === "boolean" ? `${e.flag} [bool]` : `${e.flag} <value>`, description));
  }
}

/** The setting flags given on the command line, as config overrides. */
function settingOverrides(cmd: Command): ConfigOverrides {
  const settingFlags = new Set(listSettings().map((e) => e.flag));
  const overrides: ConfigOverrides = { ...globalOverrides(cmd) };
  for (const opt of cmd.options) {
    const attr = opt.attributeName();
    if (cmd.getOptionValueSource(attr) !== "cli" || opt.long === undefined || !settingFlags.has(opt.long)) continue;
    overrides[opt.long] = cmd.getOptionValue(attr) as string | boolean;
  }
  return overrides;
}

// ---------------------------------------------------------------------------------------------
// init

function addInitCommand(program: Command, io: CliIo): void {
  program
    .command("init")
    .description(
      "Initialize a home directory: config files, validator key, node key and genesis (existing files are kept)",
    )
    .option("--chain-id <id>", 'chain id for a new genesis (default: "test-chain-" and 6 random characters)')
    .option("--moniker <name>", "node name written into a new config.toml (default: the host name)")
    .action(
      reportingErrors(io, async (opts: { chainId?: string; moniker?: string }, cmd: Command) => {
        const home = homeOf(cmd, io);
        const result = await initHome(home, {
          ...(opts.chainId !== undefined ? { chainId: opts.chainId } : {}),
          ...(opts.moniker !== undefined ? { moniker: opts.moniker } : {}),
        });
        for (const f of result.files) io.out(`${f.action === "generated" ? "Generated" : "Found"} ${f.path}`);
        io.out(`chain_id=${result.chainId} node_id=${result.nodeId} home=${result.home}`);
      }),
    );
}

// ---------------------------------------------------------------------------------------------
// start

function addStartCommand(program: Command, io: CliIo, only: ReadonlySet<string> | undefined): void {
  const start = program
    .command("start")
    .aliases(["node", "run"])
    .description("Run the node (initialises the home first when it has no config)");
  addSettingFlags(start, only);
  start.action(reportingErrors(io, (_opts: unknown, cmd: Command) => startCommand(cmd, io)));
}

/** `cometh start`: initialises a home that has none, starts the node, prints where it listens, stops on signals. */
async function startCommand(cmd: Command, io: CliIo): Promise<void> {
  const home = homeOf(cmd, io);
  const overrides = settingOverrides(cmd);
  if (!isHomeInitialized(home)) {
    const moniker = overrides["--moniker"];
    const result = await initHome(home, typeof moniker === "string" ? { moniker } : {});
    for (const f of result.files) if (f.action === "generated") io.err(`Generated ${f.path}`);
  }
  const config = loadNodeConfig(home, overrides);
  const log = createNodeLogger(config);
  for (const w of config.warnings) log.warn(w);
  const { startNode, formatDevAccounts } = await loadNode();
  const node = await startNode(config, log);
  io.out(`cometh node ${node.nodeKey.id} on chain ${node.genesis.chainId} (home ${config.home})`);
  for (const addr of node.rpcAddresses) io.out(`node RPC listening on ${addr}`);
  for (const addr of node.rpcAddresses) {
    const url = dashboardUrl(addr, node.config.rpc.dashboard);
    if (url !== undefined) io.out(`Dashboard: ${url}`);
  }
  if (node.evmRpc !== undefined) {
    io.out(`Ethereum JSON-RPC listening on http://${node.evmRpc.http} and ws://${node.evmRpc.ws}`);
  }
  if (node.devAccounts.length > 0) {
    io.out(`\n${formatDevAccounts([...node.devAccounts])}\n`);
    io.out("WARNING: these accounts and keys are public; never use them on a real network.\n");
  }
  stopOnSignals(node, log, io);
  // The node stopped itself (an external ABCI application was lost): exit non-zero once it has.
  void node.failed.then((err) => {
    io.err(`ERROR: the node stopped: ${err.message}`);
    log.flush(() => io.exit(1));
  });
}

/** SIGINT/SIGTERM stop the node (once) and exit; a stray rejected promise is logged, not fatal. */
function stopOnSignals(node: RunningNode, log: Logger, io: CliIo): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping node");
    node.stop().then(
      () => log.flush(() => io.exit(0)),
      (err: unknown) => {
        io.err(`ERROR: stopping the node failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        io.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // A stray rejected promise is a bug somewhere, but must not take a running validator down:
  // consensus state is safe (WAL, fsynced signer) and the node keeps serving; it is logged loudly.
  process.on("unhandledRejection", (reason: unknown) => {
    log.error({ err: reason }, "unhandled promise rejection (a bug: please report it)");
  });
}

// ---------------------------------------------------------------------------------------------
// dev

function addDevCommand(program: Command, io: CliIo, only: ReadonlySet<string> | undefined): void {
  const dev = program
    .command("dev")
    .description(
      "Run a single-validator dev chain for test suites (Anvil's and Hardhat's dev methods, automine); in a temporary home deleted at exit unless --home is given",
    )
    .option("--port <port>", "Ethereum JSON-RPC HTTP port (WebSocket on port + 1)", "8545")
    .option("--host <ip>", "address the Ethereum JSON-RPC and node RPC listen on", "127.0.0.1")
    .option("--chain-id <id>", "EVM chain id of a new dev chain (default: the --init file's, else 31337)")
    .option("--accounts <n>", "dev accounts to fund and unlock", "10")
    .option("--balance <eth>", "balance of each dev account, in ETH", "10000")
    .option("--mnemonic <words>", "BIP-39 mnemonic of the dev accounts (default: Hardhat's and Anvil's)")
    .option("--block-time <seconds>", "interval mining: a block every N seconds instead of automine")
    .option("--no-mining", "no automine and no interval mining: blocks only on evm_mine / anvil_mine")
    .option("--gas-limit <gas>", "block gas limit of a new dev chain (default: unlimited, as Cosmos EVM)")
    .option("--base-fee <wei>", "base fee of a new dev chain's first block, in wei")
    .option(
      "--init <genesis.json>",
      "a geth genesis.json for a new dev chain: its chain id, alloc, coinbase, gas limit and base fee (Ethereum's gas accounting)",
    )
    .option("--dump-state <file>", "write the state to this file (Anvil's JSON) at exit")
    .option("--load-state <file>", "load a state file (Anvil's JSON) at start")
    .option("--state <file>", "--load-state and --dump-state with one file (loaded only if it exists)")
    .option("--silent", "print no request log, console.log or banner")
    .option(
      "--fork-url <url>",
      "fork the chain at this Ethereum JSON-RPC URL: its state is read lazily at the fork block (repeat or comma-separate for failover)",
      collectList,
      [],
    )
    .option(
      "--fork-block-number <n>",
      "the fork block (default: the source's head); negative: that many blocks before the head",
    )
    .option(
      "--fork-chain-id <id>",
      "the source's chain id: with --fork-block-number, start from the disk cache without asking the source",
    )
    .option("--fork-cache-dir <dir>", "root of the fork's disk cache (default: ~/.cometh/cache/rpc)")
    .option("--no-storage-caching", "keep the fork's reads in memory only, no disk cache")
    .option("--timeout <ms>", "timeout of each request to the fork's source, in ms", "10000")
    .option("--retries <n>", "extra rounds over the fork URLs when none answers", "0");
  addSettingFlags(dev, only);
  dev.action(
    reportingErrors(io, async (opts: DevFlags, cmd: Command) => {
      startupMark("cli: dev action");
      await loadNode();
      const { runDevChain } = await import("./devCommand.js");
      startupMark("cli: node modules loaded");
      const given = globals(cmd).home;
      await runDevChain(
        {
          ...opts,
          ...(given === undefined ? {} : { home: resolve(given) }),
          overrides: settingOverrides(cmd),
          logLevelGiven: globals(cmd).log_level !== undefined,
        },
        io,
      );
    }),
  );
}

/** A repeatable option whose values may also be comma-separated (`--fork-url a,b --fork-url c`). */
function collectList(value: string, previous: string[]): string[] {
  return [
    ...previous,
    ...value
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== ""),
  ];
}

// ---------------------------------------------------------------------------------------------
// testnet, start-testnet

interface TestnetFlags {
  v: string;
  n: string;
  o: string;
  chainId?: string;
  initialHeight: string;
  nodeDirPrefix: string;
  p2pPort: string;
  jsonRpcPort: string;
  startingIpAddress?: string;
  hostnamePrefix?: string;
  populatePersistentPeers: boolean | string;
  proxy_app?: string;
}

/** The flags testnet and start-testnet share (CometBFT's `testnet`). */
function testnetOptions(cmd: Command): Command {
  return cmd
    .option("--v <n>", "number of validators", "4")
    .option("--n <n>", "number of non-validators", "0")
    .option("--o <dir>", "directory to write the node homes to", "./mytestnet")
    .option("--chain-id <id>", 'chain id (default: "test-chain-" and 6 random characters)')
    .option("--initial-height <h>", "initial height of the chain", "1")
    .option("--node-dir-prefix <prefix>", "prefix of each node's directory name and moniker", "node")
    .option("--p2p-port <port>", "p2p port of node0 (node i: + 10 i on 127.0.0.1)", "26656")
    .option("--json-rpc-port <port>", "Ethereum JSON-RPC port of node0 (node i: + 10 i)", "8545")
    .option(
      "--starting-ip-address <ip>",
      "give node i this IPv4 address + i and the same ports everywhere (containers) instead of loopback ports",
    )
    .option(
      "--hostname-prefix <prefix>",
      "give node i the host name <prefix><i> and the same ports everywhere (docker-compose) instead of loopback ports",
    )
    .option("--populate-persistent-peers [bool]", "list every other node in persistent_peers", true)
    .option("--proxy_app <app>", 'application of every node ("evm" or "kvstore")');
}

function wholeNumber(flag: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new ConfigError("testnet", flag, `must be a whole number (got "${value}")`);
  }
  return n;
}

async function writeTestnet(opts: TestnetFlags): ReturnType<typeof createTestnet> {
  return createTestnet({
    outputDir: opts.o,
    validators: wholeNumber("--v", opts.v),
    nonValidators: wholeNumber("--n", opts.n),
    initialHeight: wholeNumber("--initial-height", opts.initialHeight),
    nodeDirPrefix: opts.nodeDirPrefix,
    p2pPort: wholeNumber("--p2p-port", opts.p2pPort),
    jsonRpcPort: wholeNumber("--json-rpc-port", opts.jsonRpcPort),
    populatePersistentPeers: opts.populatePersistentPeers !== false && opts.populatePersistentPeers !== "false",
    ...(opts.chainId === undefined ? {} : { chainId: opts.chainId }),
    ...(opts.startingIpAddress === undefined ? {} : { startingIp: opts.startingIpAddress }),
    ...(opts.hostnamePrefix === undefined ? {} : { hostnamePrefix: opts.hostnamePrefix }),
    ...(opts.proxy_app === undefined ? {} : { proxyApp: opts.proxy_app }),
  });
}

function addTestnetCommands(program: Command, io: CliIo): void {
  testnetOptions(
    program
      .command("testnet")
      .description("Write the homes of a multi-validator network (one genesis, distinct ports, persistent peers)"),
  ).action(reportingErrors(io, (opts: TestnetFlags) => testnetCommand(opts, io)));

  testnetOptions(
    program
      .command("start-testnet")
      .description("Start every node of a testnet directory (writing it first when it does not exist)"),
  ).action(reportingErrors(io, (opts: TestnetFlags) => startTestnetCommand(opts, io)));
}

/** `cometh testnet`: writes the homes and lists the nodes. */
async function testnetCommand(opts: TestnetFlags, io: CliIo): Promise<void> {
  const result = await writeTestnet(opts);
  io.out(`Successfully initialized ${result.nodes.length} node directories (chain ${result.chainId})`);
  for (const n of result.nodes) {
    io.out(
      `${n.name}: ${n.home} id=${n.nodeId} p2p=${n.host}:${n.p2pPort} rpc=${n.host}:${n.rpcPort} json-rpc=${n.host}:${n.jsonRpcPort}${n.isValidator ? " (validator)" : ""}`,
    );
    io.out(`  dashboard: http://${n.host}:${n.rpcPort}/dashboard`);
  }
  io.out(`Start one node with "npm start -- --home <dir>", or all of them with "npm run testnet -- --o ${opts.o}".`);
}

/** `cometh start-testnet`: the testnet's node homes (written first when there are none), each started as a child process. */
async function startTestnetCommand(opts: TestnetFlags, io: CliIo): Promise<void> {
  const out = resolve(opts.o);
  const prefix = opts.nodeDirPrefix;
  let names = existsSync(out)
    ? readdirSync(out).filter((d) => d.startsWith(prefix) && /^\d+$/.test(d.slice(prefix.length)))
    : [];
  if (names.length === 0) {
    const result = await writeTestnet(opts);
    io.out(`Wrote ${result.nodes.length} node homes under ${out} (chain ${result.chainId})`);
    names = result.nodes.map((n) => n.name);
  }
  names.sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  const nodes = names.map((name) => {
    const home = join(out, name);
    // A home that is not a node home fails here, before anything starts.
    const config = loadNodeConfig(home);
    const url = dashboardUrl(config.rpc.laddr, config.rpc.dashboard);
    if (url !== undefined) io.out(`${name} dashboard: ${url}`);
    return { name, home };
  });
  const { runTestnetNodes } = await import("./testnetRunner.js");
  const runner = runTestnetNodes(nodes, io);
  const stop = () => runner.stop();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  io.exit(await runner.done);
}

// ---------------------------------------------------------------------------------------------
// signer

function addSignerCommand(program: Command, io: CliIo): void {
  program
    .command("signer")
    .description(
      "Run a remote signer: hold the validator key and its double-sign state, dial a node's priv_validator_laddr and sign for it",
    )
    .option("--addr <address>", "the node's priv_validator_laddr: tcp://host:port or unix:///path")
    .option("--chain-id <id>", "chain to sign for (default: the chain id of the home's config/genesis.json)")
    .option("--key-file <path>", "validator key (default: the home's config/priv_validator_key.json)")
    .option("--state-file <path>", "last sign state (default: the home's data/priv_validator_state.json)")
    .action(
      reportingErrors(io, async (opts: SignerFlags, cmd: Command) => {
        const level = parseLogLevel(globals(cmd).log_level ?? "info");
        if (typeof level === "string") throw new ConfigError("--log_level", undefined, level);
        const log = createLogger({ level: pinoLevel(level.default) });
        const { runSigner } = await import("./signerCommand.js");
        await runSigner(homeOf(cmd, io), opts, log, io);
      }),
    );
}

// ---------------------------------------------------------------------------------------------
// show-node-id, show-validator, version, unsafe-reset-all

function addShowCommands(program: Command, io: CliIo): void {
  program
    .command("show-node-id")
    .alias("show_node_id")
    .description("Show this node's ID (lowercase hex)")
    .action(
      reportingErrors(io, async (_opts: unknown, cmd: Command) => {
        const config = loadNodeConfig(homeOf(cmd, io), globalOverrides(cmd));
        const key = await loadNodeKey(config.base.nodeKeyFile);
        io.out(key.id);
      }),
    );

  program
    .command("show-validator")
    .alias("show_validator")
    .description("Show this node's validator public key")
    .action(
      reportingErrors(io, (_opts: unknown, cmd: Command) => {
        const config = loadNodeConfig(homeOf(cmd, io), globalOverrides(cmd));
        const key = loadPrivValidatorKey(config.base.privValidatorKeyFile);
        io.out(JSON.stringify(encodePubKeyJson(key.pubKey)));
      }),
    );
}

function addVersionCommand(program: Command, io: CliIo): void {
  program
    .command("version")
    .description("Show the version")
    .action(
      reportingErrors(io, () => {
        io.out(`cometh ${packageVersion()} (CometBFT ${COMETBFT_VERSION} compatible)`);
      }),
    );
}

function addUnsafeResetAllCommand(program: Command, io: CliIo): void {
  program
    .command("unsafe-reset-all")
    .alias("unsafe_reset_all")
    .description(
      "(unsafe) Remove all the data and WAL, reset this node's validator to genesis state (keys and config are kept)",
    )
    .option("--keep-addr-book", "keep the address book intact")
    .action(
      reportingErrors(io, async (opts: { keepAddrBook?: boolean }, cmd: Command) => {
        const config = loadNodeConfig(homeOf(cmd, io), globalOverrides(cmd));
        // Never under a running node (node/ assertDataDirFree): it would delete the stores it writes.
        await (await loadNode()).assertDataDirFree(config.base.dbDir);
        const result = await resetHome(config, { keepAddrBook: opts.keepAddrBook === true });
        if (opts.keepAddrBook) io.out("The address book remains intact");
        for (const p of result.removed) io.out(`Removed ${p}`);
        io.out(`Reset private validator file to genesis state: ${result.privValidatorStateFile}`);
      }),
    );
}

/** Parses argv (as process.argv) and runs the command. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<void> {
  const normalized = normalizeArgv(argv);
  await buildProgram(io, normalized).parseAsync(normalized);
}
