import { chainRules, type EvmReader } from "../../app/evm/index.js";
import { type NodeConfig, type NodeKey, packageVersion } from "../../config/index.js";
import type { ChainRules, NodeIdentity, NodeInfoSource, SyncStatus } from "../../rpc/evm/index.js";
import type { GenesisDoc } from "../../types/index.js";
import type { EvmPeerAdapter } from "./peers.js";

/** Block sync as eth_syncing reads it (blocksync/ BlocksyncReactor satisfies it). */
export interface EvmSyncView {
  isSyncing(): boolean;
  status(): { readonly maxPeerHeight: number };
}

/** The RPC's `node` (net_*, web3_*, admin_nodeInfo, eth_chainId, eth_syncing): this node's identity and sync. */
export class EvmNodeInfoAdapter implements NodeInfoSource {
  readonly #reader: EvmReader;
  readonly #config: NodeConfig;
  readonly #nodeKey: NodeKey;
  readonly #genesis: GenesisDoc;
  readonly #version = packageVersion();
  /** The p2p switch's view; absent when the RPC runs without one (tests): no peers, not listening. */
  readonly #peers: EvmPeerAdapter | undefined;
  /** Block sync and the earliest stored block; absent: never catching up. */
  readonly #sync: { view: EvmSyncView; earliestHeight: () => number } | undefined;

  constructor(
    reader: EvmReader,
    config: NodeConfig,
    nodeKey: NodeKey,
    genesis: GenesisDoc,
    peers: EvmPeerAdapter | undefined,
    sync: { view: EvmSyncView; earliestHeight: () => number } | undefined,
  ) {
    this.#reader = reader;
    this.#config = config;
    this.#nodeKey = nodeKey;
    this.#genesis = genesis;
    this.#peers = peers;
    this.#sync = sync;
  }

  chainId(): bigint {
    return this.#reader.chainId();
  }
  version(): string {
    return this.#version;
  }
  /** Cosmos EVM's eth_syncing: catching up while block sync runs, from the earliest stored block. */
  syncStatus(): SyncStatus {
    const h = Math.max(0, this.#reader.latestHeight());
    const sync = this.#sync;
    if (sync === undefined || !sync.view.isSyncing()) {
      return { catchingUp: false, startingBlock: 0, currentBlock: h, highestBlock: h };
    }
    return {
      catchingUp: true,
      startingBlock: sync.earliestHeight(),
      currentBlock: h,
      highestBlock: Math.max(h, sync.view.status().maxPeerHeight),
    };
  }
  peerCount(): number {
    return this.#peers?.peerCount() ?? 0;
  }
  listening(): boolean {
    return this.#peers?.listening() ?? false;
  }
  identity(): NodeIdentity {
    const config = this.#config;
    // The advertised address when set, else the bound one (the configured laddr may say port 0).
    const listenAddr =
      config.p2p.externalAddress !== ""
        ? config.p2p.externalAddress
        : (this.#peers?.boundListenAddr() ?? config.p2p.laddr);
    return { id: this.#nodeKey.id, name: config.base.moniker, listenAddr, network: this.#genesis.chainId };
  }
  dataDir(): string {
    return this.#config.home;
  }
  chainRules(): ChainRules {
    return chainRules();
  }
}
