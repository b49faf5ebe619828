import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { isIPv4 } from "node:net";
import { join, resolve } from "node:path";
import { FilePV } from "../privval/index.js";
import { defaultConsensusParams, type GenesisDoc } from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { systemClock } from "../util/clock.js";
import { ConfigError } from "./errors.js";
import { saveGenesis } from "./genesis.js";
import { initHome, randomChainId } from "./home.js";
import { loadNodeConfig } from "./nodeConfig.js";
import { loadOrGenerateNodeKey } from "./nodeKey.js";
import type { TomlInput } from "./setting.js";

/** Voting power of each testnet validator (cmd/cometbft/commands/testnet.go). */
export const TESTNET_VALIDATOR_POWER = 1n;
/** Ports of node i are the base ports plus i × this stride when every node shares one host. */
export const TESTNET_PORT_STRIDE = 10;

export interface TestnetOptions {
  /** Where the node homes go (`<outputDir>/<prefix><i>`). */
  outputDir: string;
  /** Validators (`--v`, default 4). */
  validators: number;
  /** Non-validator full nodes (`--n`, default 0). */
  nonValidators: number;
  chainId?: string;
  initialHeight?: number;
  /** Home directory names and monikers: `node0`, `node1`, … */
  nodeDirPrefix?: string;
  /** First p2p port (default 26656); the node RPC is p2p + 1, Prometheus p2p + 4. */
  p2pPort?: number;
  /** First Ethereum JSON-RPC port (default 8545); WebSocket is this + 1. */
  jsonRpcPort?: number;
  /**
   * Give node i the address startingIp + i and the same ports everywhere (CometBFT's
   * --starting-ip-address, for containers). Without it every node is on 127.0.0.1 with ports
   * shifted by {@link TESTNET_PORT_STRIDE} × i.
   */
  startingIp?: string;
  /**
   * Give node i the host name `<prefix><i>` and the same ports everywhere (CometBFT's
   * --hostname-prefix, for docker-compose networks). Ignored when startingIp is set.
   */
  hostnamePrefix?: string;
  /** Write persistent_peers listing every other node (default true). */
  populatePersistentPeers?: boolean;
  /** Which app each node runs (default: the config default, "evm"). */
  proxyApp?: string;
  /** More config.toml values for every node. */
  config?: Record<string, TomlInput>;
  /** Explicit ports per node (tests pass free ephemeral ports); overrides the base ports and stride. */
  ports?: (i: number) => { p2p: number; rpc: number; jsonRpc: number; jsonRpcWs: number };
}

export interface TestnetNode {
  name: string;
  home: string;
  nodeId: string;
  isValidator: boolean;
  host: string;
  p2pPort: number;
  rpcPort: number;
  jsonRpcPort: number;
  jsonRpcWsPort: number;
}

export interface TestnetResult {
  chainId: string;
  nodes: TestnetNode[];
}

function nthIp(start: string, i: number): string {
  if (!isIPv4(start)) {
    throw new ConfigError("testnet", "--starting-ip-address", `"${start}" is not an IPv4 address like 192.167.10.2`);
  }
  const n = start.split(".").reduce((acc, part) => acc * 256 + Number(part), 0) + i;
  if (n > 0xffffffff) {
    throw new ConfigError("testnet", "--starting-ip-address", `"${start}" + ${i} is past 255.255.255.255`);
  }
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/**
 * `cometh testnet`: writes one home per node under outputDir, all sharing one genesis whose
 * validators are the first `validators` nodes, each config listing the others as persistent peers.
 * Loopback networks need `addr_book_strict = false` and `allow_duplicate_ip = true`, which are set.
 */
export async function createTestnet(opts: TestnetOptions): Promise<TestnetResult> {
  const total = opts.validators + opts.nonValidators;
  if (!Number.isInteger(opts.validators) || opts.validators < 1) {
    throw new ConfigError(
      "testnet",
      "--v",
      `must be a whole number of validators of at least 1 (got ${opts.validators})`,
    );
  }
  if (!Number.isInteger(opts.nonValidators) || opts.nonValidators < 0) {
    throw new ConfigError("testnet", "--n", `must be a whole number of at least 0 (got ${opts.nonValidators})`);
  }
  const out = resolve(opts.outputDir);
  const prefix = opts.nodeDirPrefix ?? "node";
  for (let i = 0; i < total; i++) {
    if (existsSync(join(out, `${prefix}${i}`)) && readdirSync(join(out, `${prefix}${i}`)).length > 0) {
      throw new ConfigError(
        "testnet",
        "--o",
        `${join(out, `${prefix}${i}`)} already exists and is not empty: choose another directory or remove it`,
      );
    }
  }
  const chainId = opts.chainId ?? randomChainId();
  const baseP2p = opts.p2pPort ?? 26656;
  const baseJsonRpc = opts.jsonRpcPort ?? 8545;
  const nodes: TestnetNode[] = [];
  for (let i = 0; i < total; i++) {
    const shared = opts.startingIp !== undefined || opts.hostnamePrefix !== undefined;
    const offset = shared ? 0 : TESTNET_PORT_STRIDE * i;
    const host =
      opts.startingIp !== undefined
        ? nthIp(opts.startingIp, i)
        : opts.hostnamePrefix !== undefined
          ? `${opts.hostnamePrefix}${i}`
          : "127.0.0.1";
    const home = join(out, `${prefix}${i}`);
    const given = opts.ports?.(i);
    nodes.push({
      name: `${prefix}${i}`,
      home,
      nodeId: "",
      isValidator: i < opts.validators,
      host,
      p2pPort: given?.p2p ?? baseP2p + offset,
      rpcPort: given?.rpc ?? baseP2p + 1 + offset,
      jsonRpcPort: given?.jsonRpc ?? baseJsonRpc + offset,
      jsonRpcWsPort: given?.jsonRpcWs ?? baseJsonRpc + 1 + offset,
    });
  }
  // Node keys first: every peer list needs all the IDs (initHome keeps an existing key).
  for (const n of nodes) {
    mkdirSync(join(n.home, "config"), { recursive: true, mode: 0o700 });
    n.nodeId = (await loadOrGenerateNodeKey(join(n.home, "config", "node_key.json"))).id;
  }
  const pubKeys = [];
  for (const n of nodes) {
    const anyHost = opts.startingIp !== undefined || opts.hostnamePrefix !== undefined ? "0.0.0.0" : "127.0.0.1";
    const peers =
      (opts.populatePersistentPeers ?? true)
        ? nodes
            .filter((o) => o !== n)
            .map((o) => `${o.nodeId}@${o.host}:${o.p2pPort}`)
            .join(",")
        : "";
    await initHome(n.home, {
      chainId,
      moniker: n.name,
      config: {
        ...(opts.proxyApp === undefined ? {} : { proxy_app: opts.proxyApp }),
        "p2p.laddr": `tcp://${anyHost}:${n.p2pPort}`,
        "p2p.persistent_peers": peers,
        "p2p.addr_book_strict": false,
        "p2p.allow_duplicate_ip": true,
        "rpc.laddr": `tcp://${anyHost}:${n.rpcPort}`,
        // The live dashboard at http://<host>:<rpc port>/dashboard (cometh's own key).
        "rpc.dashboard": true,
        "instrumentation.prometheus_listen_addr": `:${n.p2pPort + 4}`,
        ...(opts.config ?? {}),
      },
      appConfig: {
        "json-rpc.address": `${anyHost}:${n.jsonRpcPort}`,
        "json-rpc.ws-address": `${anyHost}:${n.jsonRpcWsPort}`,
      },
    });
    const config = loadNodeConfig(n.home);
    const pv = await FilePV.load(config.base.privValidatorKeyFile, config.base.privValidatorStateFile);
    pubKeys.push({ address: pv.address(), pubKey: pv.pubKey() });
  }
  const genesis: GenesisDoc = {
    genesisTime: systemClock.nowNs(),
    chainId,
    initialHeight: opts.initialHeight ?? 1,
    consensusParams: defaultConsensusParams(),
    validators: pubKeys.slice(0, opts.validators).map((k, i) => ({
      address: k.address,
      pubKey: k.pubKey,
      power: TESTNET_VALIDATOR_POWER,
      name: nodes[i]?.name ?? "",
    })),
    appHash: EMPTY_BYTES,
    appState: "",
  };
  for (const n of nodes) {
    const config = loadNodeConfig(n.home);
    saveGenesis(config.base.genesisFile, genesis);
  }
  return { chainId, nodes };
}
