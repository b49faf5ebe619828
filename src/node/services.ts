import type { Application } from "../app/index.js";
import { COMETBFT_VERSION, type NodeConfig, type NodeKey } from "../config/index.js";
import type { Consensus } from "../consensus/index.js";
import { type ChainEpoch, type EventBus, parseQuery, type TxInclusion } from "../events/index.js";
import type { Indexer } from "../indexer/index.js";
import type { Mempool } from "../mempool/index.js";
import type { NodeInfo } from "../p2p/index.js";
import type { FilePV, SignerClient } from "../privval/index.js";
import type { CometServices, EvidenceAccess, NodeInfoView, P2PAccess } from "../rpc/comet/index.js";
import type { BlockStore, StateStore } from "../store/index.js";
import {
  addressFromPubKey,
  formatVote,
  type GenesisDoc,
  headerHash,
  proofsFromByteSlices,
  txHash,
} from "../types/index.js";

/** CometBFT v0.38's p2p and block protocol versions (version/version.go). */
const P2P_PROTOCOL = 8n;
const BLOCK_PROTOCOL = 11n;
/** The channels a v0.38 validator node advertises: blocksync, consensus ×4, mempool, evidence, statesync ×2, pex. */
const CHANNELS = Uint8Array.from([0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x60, 0x61, 0x00]);

export interface ServiceParts {
  config: NodeConfig;
  genesis: GenesisDoc;
  nodeKey: NodeKey;
  signer: FilePV | SignerClient;
  blockStore: BlockStore;
  stateStore: StateStore;
  app: Application;
  mempool: Mempool;
  bus: EventBus;
  /** The node's one "tx included" wait (broadcast_tx_commit waits on it). */
  txWaits: TxInclusion;
  consensus: Consensus;
  indexer: Indexer;
  p2p?: P2PAccess;
  /** The switch's NodeInfo (real listen port, channels of its reactors). */
  p2pNodeInfo?: () => NodeInfo;
  evidence?: EvidenceAccess;
  /** Block sync still running. */
  isCatchingUp?: () => boolean;
  /** The chain's rewinds (a dev chain's rollbacks), which kept answers by height follow. */
  epoch?: ChainEpoch;
}

/** This node's DefaultNodeInfo before the switch fills in channels and the real port. */
export function nodeInfoFor(
  config: NodeConfig,
  genesis: GenesisDoc,
  nodeKey: NodeKey,
  consensus: Pick<Consensus, "chainState">,
): NodeInfo {
  return {
    protocolVersion: { p2p: P2P_PROTOCOL, block: BLOCK_PROTOCOL, app: consensus.chainState().appVersion },
    id: nodeKey.id,
    listenAddr: config.p2p.externalAddress !== "" ? config.p2p.externalAddress : config.p2p.laddr,
    network: genesis.chainId,
    version: COMETBFT_VERSION,
    channels: CHANNELS,
    moniker: config.base.moniker,
    other: { txIndex: config.txIndex.indexer === "null" ? "off" : "on", rpcAddress: config.rpc.laddr },
  };
}

/** The node RPC's view of the node (rpc/comet/services.ts), from the real subsystems. */
export function buildCometServices(p: ServiceParts): CometServices {
  const nodeInfo = (): NodeInfoView => {
    const n = p.p2pNodeInfo?.() ?? nodeInfoFor(p.config, p.genesis, p.nodeKey, p.consensus);
    // The app version can change with a block; the switch's copy is from start.
    return { ...n, protocolVersion: { ...n.protocolVersion, app: p.consensus.chainState().appVersion } };
  };
  // Validator sets of a height never change once stored (updates take effect at H+2), so the few
  // heights status/validators/dump ask for again and again are kept decoded.
  const validatorCache = new Map<number, ReturnType<StateStore["loadValidators"]>>();
  const state = {
    loadValidators: (height: number) => {
      const hit = validatorCache.get(height);
      if (hit !== undefined) return hit;
      const vs = p.stateStore.loadValidators(height);
      if (vs !== undefined) {
        if (validatorCache.size >= 16) validatorCache.delete(validatorCache.keys().next().value as number);
        validatorCache.set(height, vs);
      }
      return vs;
    },
    loadConsensusParams: (height: number) => p.stateStore.loadConsensusParams(height),
    loadFinalizeBlockResponse: (height: number) => p.stateStore.loadFinalizeBlockResponse(height),
  };
  return {
    blocks: p.blockStore,
    ...(p.epoch === undefined ? {} : { epoch: p.epoch }),
    state,
    app: p.app,
    mempool: p.mempool,
    events: p.bus,
    txWaits: p.txWaits,
    parseQuery,
    consensus: p.consensus,
    indexer: p.indexer,
    node: {
      nodeInfo,
      validatorPubKey: () => p.signer.pubKey(),
      isCatchingUp: () => p.isCatchingUp?.() ?? false,
    },
    types: { formatVote, headerHash, txHash, proofsFromByteSlices, addressFromPubKey },
    genesis: p.genesis,
    ...(p.p2p === undefined ? {} : { p2p: p.p2p }),
    ...(p.evidence === undefined ? {} : { evidence: p.evidence }),
  };
}
