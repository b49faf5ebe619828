import type { EvmReadPool } from "../app/evm/index.js";
import type { EvmApplication } from "../app/index.js";
import type { NodeConfig, NodeKey } from "../config/index.js";
import type { Mempool } from "../mempool/index.js";
import type { DevControl, EvmServices } from "../rpc/evm/index.js";
import type { BlockStore } from "../store/index.js";
import type { GenesisDoc } from "../types/index.js";
import { EvmChainAdapter } from "./evm/chain.js";
import { EvmExecutionAdapter } from "./evm/execution.js";
import type { EvmFeed } from "./evm/feed.js";
import { EvmFeeAdapter } from "./evm/fees.js";
import { DevKeys } from "./evm/keyring.js";
import { EvmNodeInfoAdapter, type EvmSyncView } from "./evm/nodeInfo.js";
import { EvmPeerAdapter, type EvmSwitchView } from "./evm/peers.js";
import { EvmStateAdapter } from "./evm/state.js";
import { EvmTraceAdapter } from "./evm/traces.js";
import { EvmTxPoolAdapter } from "./evm/txpool.js";

export { EvmFeed } from "./evm/feed.js";

export interface EvmServiceParts {
  config: NodeConfig;
  genesis: GenesisDoc;
  nodeKey: NodeKey;
  app: EvmApplication;
  mempool: Mempool;
  blockStore: BlockStore;
  feed: EvmFeed;
  /** A dev chain's controls, when the node runs one. */
  dev?: DevControl | undefined;
  /** Worker threads for eth_call, eth_estimateGas, debug_traceCall and eth_getLogs (`[json-rpc] read-workers`). */
  readPool?: EvmReadPool | undefined;
  /** The p2p switch: net_peerCount, net_listening and admin_* peers (absent: none, not listening). */
  p2p?: EvmSwitchView | undefined;
  /** Block sync: eth_syncing reports catching up while it runs (absent: never). */
  blocksync?: EvmSyncView | undefined;
}

/**
 * The Ethereum JSON-RPC's view of the node (rpc/evm/services.ts): one adapter per area over the EVM
 * app's reader and the node's subsystems (node/evm/).
 */
export function buildEvmServices(p: EvmServiceParts): EvmServices {
  const reader = p.app.reader;
  const devAccounts = p.app.devAccounts();
  const peers = p.p2p === undefined ? undefined : new EvmPeerAdapter(p.p2p);
  return {
    chain: new EvmChainAdapter(reader, p.readPool, p.blockStore, p.genesis, () => p.app.db.fork),
    state: new EvmStateAdapter(reader),
    execution: new EvmExecutionAdapter(reader, p.readPool),
    mempool: new EvmTxPoolAdapter(p.mempool, reader, p.feed, (key, sender) => p.app.hintSender(key, sender)),
    fees: new EvmFeeAdapter(p.app),
    events: p.feed,
    node: new EvmNodeInfoAdapter(
      reader,
      p.config,
      p.nodeKey,
      p.genesis,
      peers,
      p.blocksync === undefined ? undefined : { view: p.blocksync, earliestHeight: () => p.blockStore.base() },
    ),
    ...(peers === undefined ? {} : { p2p: peers }),
    tracer: new EvmTraceAdapter(reader, p.readPool),
    ...(devAccounts.length > 0 ? { keyring: new DevKeys(devAccounts) } : {}),
    ...(p.dev === undefined ? {} : { dev: p.dev }),
  };
}
