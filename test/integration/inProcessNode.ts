import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EvmApplication } from "../../src/app/index.js";
import { type ConfigOverrides, initHome, loadNodeConfig } from "../../src/config/index.js";
import { buildEvmServices, EvmFeed } from "../../src/node/evmServices.js";
import { type DevStartOptions, type RunningNode, startNode } from "../../src/node/index.js";
import type { EvmServices } from "../../src/rpc/evm/index.js";
import { createLogger, silentLogger } from "../../src/util/logger.js";

/** A real node started inside the test process on 127.0.0.1 ephemeral ports and a temp home. */
export interface InProcessNode {
  node: RunningNode;
  home: string;
  /** `http://127.0.0.1:PORT` of the node RPC. */
  rpcUrl: string;
  /** `ws://127.0.0.1:PORT/websocket`. */
  wsUrl: string;
  close(): Promise<void>;
}

/** More ways to shape the node's home before it starts. */
export interface InProcessNodeOptions {
  /** app_state of the new genesis.json (default none). */
  appState?: unknown;
  /** Runs after the home is initialised and before the node starts (e.g. to edit genesis.json). */
  beforeStart?: (home: string) => Promise<void> | void;
}

export async function startInProcessNode(
  overrides: ConfigOverrides = {},
  options: InProcessNodeOptions = {},
): Promise<InProcessNode> {
  const home = await mkdtemp(join(tmpdir(), "cometh-it-"));
  await initHome(home, {
    chainId: "test-chain",
    moniker: "it-node",
    ...(options.appState !== undefined ? { appState: options.appState } : {}),
  });
  await options.beforeStart?.(home);
  const config = loadNodeConfig(home, {
    "--rpc.laddr": "tcp://127.0.0.1:0",
    "--p2p.laddr": "tcp://127.0.0.1:0",
    "--json-rpc.enable": false,
    // An in-process node serves every connection itself (its children would load the sources through
    // tsx): read processes are tested on spawned nodes (readProcesses.test.ts and every spawnNode test).
    "--json-rpc.read-processes": "0",
    "--consensus.timeout_commit": "100ms",
    "--proxy_app": "kvstore",
    ...overrides,
  });
  const level = process.env.COMETH_TEST_LOG;
  const log = level ? createLogger({ level }) : silentLogger();
  const node = await startNode(config, log);
  const addr = node.rpcAddresses[0] ?? "";
  const hostPort = addr.replace(/^tcp:\/\//, "");
  return {
    node,
    home,
    rpcUrl: `http://${hostPort}`,
    wsUrl: `ws://${hostPort}/websocket`,
    close: async () => {
      await node.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** An in-process node running the EVM app with its Ethereum JSON-RPC (HTTP and WebSocket) on ephemeral ports. */
export interface InProcessEvmNode extends InProcessNode {
  /** `http://127.0.0.1:PORT` of the Ethereum JSON-RPC. */
  evmHttpUrl: string;
  /** `ws://127.0.0.1:PORT` of the Ethereum JSON-RPC. */
  evmWsUrl: string;
}

/** startInProcessNode with the EVM app and the Ethereum JSON-RPC (namespaces `api`), after block 1. */
export async function startInProcessEvmNode(
  api = "eth,net,web3,txpool,debug,personal",
  overrides: ConfigOverrides = {},
): Promise<InProcessEvmNode> {
  const n = await startInProcessNode({
    "--proxy_app": "evm",
    "--json-rpc.enable": true,
    "--json-rpc.address": "127.0.0.1:0",
    "--json-rpc.ws-address": "127.0.0.1:0",
    "--json-rpc.api": api,
    ...overrides,
  });
  const evm = n.node.evmRpc;
  if (evm === undefined) {
    await n.close();
    throw new Error("the Ethereum JSON-RPC did not start");
  }
  await n.node.consensus.waitForHeight(1);
  return { ...n, evmHttpUrl: `http://${evm.http}`, evmWsUrl: `ws://${evm.ws}` };
}

/**
 * An in-process `cometh dev` chain (genesis `evm.dev_chain`, the dev accounts funded, automine) with
 * the Ethereum JSON-RPC on ephemeral ports, as the dev command starts it.
 */
export async function startInProcessDevNode(
  overrides: ConfigOverrides = {},
  dev: DevStartOptions = {},
  home?: string,
  /** More keys of the genesis `app_state.evm` (e.g. `alloc`: contracts at fixed addresses). */
  genesisEvm: Record<string, unknown> = {},
): Promise<InProcessEvmNode> {
  const dir = home ?? (await mkdtemp(join(tmpdir(), "cometh-dev-it-")));
  await initHome(dir, { chainId: "cometh-dev", moniker: "dev", appState: { evm: { dev_chain: true, ...genesisEvm } } });
  const config = loadNodeConfig(dir, {
    "--rpc.laddr": "tcp://127.0.0.1:0",
    "--p2p.laddr": "tcp://127.0.0.1:0",
    "--proxy_app": "evm",
    "--pruning": "nothing",
    "--consensus.timeout_commit": "0s",
    "--consensus.create_empty_blocks": false,
    "--json-rpc.enable": true,
    "--json-rpc.address": "127.0.0.1:0",
    "--json-rpc.ws-address": "127.0.0.1:0",
    "--json-rpc.api": "eth,net,web3,txpool,debug,personal",
    ...overrides,
  });
  const level = process.env.COMETH_TEST_LOG;
  const log = level ? createLogger({ level }) : silentLogger();
  const node = await startNode(config, log, { dev: { silent: true, ...dev } });
  const addr = node.rpcAddresses[0] ?? "";
  const hostPort = addr.replace(/^tcp:\/\//, "");
  const evm = node.evmRpc;
  if (evm === undefined) {
    await node.stop();
    throw new Error("the Ethereum JSON-RPC did not start");
  }
  return {
    node,
    home: dir,
    rpcUrl: `http://${hostPort}`,
    wsUrl: `ws://${hostPort}/websocket`,
    evmHttpUrl: `http://${evm.http}`,
    evmWsUrl: `ws://${evm.ws}`,
    close: async () => {
      await node.stop();
      if (home === undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The Ethereum JSON-RPC services of a running EVM node, built as the node builds them
 * (node/evmServices.ts over the node's EVM app, mempool and block store), with a feed of their own
 * that announces each committed height: tests start their own servers over a real chain with the
 * settings (and clock) they need and look at those servers' runtime. The dev controls are left out
 * (the servers answer as on a chain that is not a dev chain); mine through `node.dev`.
 */
export interface NodeEvmServices {
  readonly services: EvmServices;
  readonly feed: EvmFeed;
  /** Announces every committed height not announced yet (also done on each commit). */
  deliver(): void;
}

export function nodeEvmServices(node: RunningNode): NodeEvmServices {
  const app = node.app;
  if (!(app instanceof EvmApplication)) throw new Error("the node does not run the EVM app");
  const feed = new EvmFeed(node.txInclusion, node.epoch);
  const services = buildEvmServices({
    config: node.config,
    genesis: node.genesis,
    nodeKey: node.nodeKey,
    app,
    mempool: node.mempool,
    blockStore: node.blockStore,
    feed,
    p2p: node.p2p,
  });
  let delivered = Math.max(0, app.reader.latestHeight());
  // A rollback makes heights again: they are announced again when made.
  node.epoch.onRewind((height) => {
    delivered = Math.min(delivered, height);
  });
  const deliver = () => {
    const head = app.reader.latestHeight();
    while (delivered < head) feed.newBlock(++delivered);
  };
  const follow = (): void => {
    node.consensus.waitForHeight(delivered + 1).then(
      () => {
        deliver();
        follow();
      },
      () => undefined,
    );
  };
  follow();
  return { services, feed, deliver };
}
