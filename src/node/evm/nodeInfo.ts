import type { EvmReader } from "../../app/evm/index.js";
import { type NodeConfig, type NodeKey, packageVersion } from "../../config/index.js";
import type { NodeIdentity, NodeInfoSource, SyncStatus } from "../../rpc/evm/index.js";
import type { GenesisDoc } from "../../types/index.js";
import type { EvmPeerAdapter } from "./peers.js";

/** The RPC's `node` (net_*, web3_*, admin_nodeInfo, eth_chainId, eth_syncing): this node's identity and sync. */
export class EvmNodeInfoAdapter implements NodeInfoSource {
  readonly #reader: EvmReader;
  readonly #config: NodeConfig;
  readonly #nodeKey: NodeKey;
  readonly #genesis: GenesisDoc;
  readonly #version = packageVersion();
  /** The p2p switch's view; absent when the RPC runs without one (tests): no peers, not listening. */
  readonly #peers: EvmPeerAdapter | undefined;

  constructor(
    reader: EvmReader,
    config: NodeConfig,
    nodeKey: NodeKey,
    genesis: GenesisDoc,
    peers: EvmPeerAdapter | undefined,
  ) {
    this.#reader = reader;
    this.#config = config;
    this.#nodeKey = nodeKey;
    this.#genesis = genesis;
    this.#peers = peers;
  }

  chainId(): bigint {
    return this.#reader.chainId();
  }
  version(): string {
    return this.#version;
  }
  syncStatus(): SyncStatus {
    const h = Math.max(0, this.#reader.latestHeight());
    return { catchingUp: false, startingBlock: 0, currentBlock: h, highestBlock: h };
  }
  peerCount(): number {
    return this.#peers?.peerCount() ?? 0;
  }
  listening(): boolean {
    return this.#peers?.listening() ?? false;
  }
  identity(): NodeIdentity {
    const config = this.#config;
    const configured: NodeIdentity = {
      id: this.#nodeKey.id,
      name: config.base.moniker,
      listenAddr: config.p2p.externalAddress !== "" ? config.p2p.externalAddress : config.p2p.laddr,
      network: this.#genesis.chainId,
    };
    if (this.#peers === undefined || config.p2p.externalAddress !== "") return configured;
    return { ...configured, listenAddr: this.#peers.listenAddr(configured) };
  }
  dataDir(): string {
    return this.#config.home;
  }
}
