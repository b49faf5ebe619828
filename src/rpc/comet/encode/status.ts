import type { BlockMeta } from "../../../types/block.js";
import type { PubKey } from "../../../types/keys.js";
import type { WireValue } from "../../jsonrpc/index.js";
import type { FlowStatusView, NodeInfoView, PeerView } from "../services.js";
import { encodePubKey, hex, i64, time } from "./wire.js";

/** status and net_info (docs/cometbft-rpc.md §2.1). */

export function encodeNodeInfo(n: NodeInfoView) {
  return {
    protocol_version: {
      p2p: i64(n.protocolVersion.p2p),
      block: i64(n.protocolVersion.block),
      app: i64(n.protocolVersion.app),
    },
    id: n.id,
    listen_addr: n.listenAddr,
    network: n.network,
    version: n.version,
    channels: hex(n.channels),
    moniker: n.moniker,
    other: { tx_index: n.other.txIndex, rpc_address: n.other.rpcAddress },
  };
}

export interface StatusParts {
  nodeInfo: NodeInfoView;
  latest: BlockMeta | undefined;
  latestHeight: number;
  earliest: BlockMeta | undefined;
  catchingUp: boolean;
  validator: { address: Uint8Array; pubKey: PubKey; votingPower: bigint };
}

/** With no blocks, hashes are "", heights "0" and times the Unix epoch (time.Unix(0, 0)). */
export function encodeStatus(s: StatusParts): WireValue {
  return {
    node_info: encodeNodeInfo(s.nodeInfo),
    sync_info: {
      latest_block_hash: s.latest === undefined ? "" : hex(s.latest.blockId.hash),
      latest_app_hash: s.latest === undefined ? "" : hex(s.latest.header.appHash),
      latest_block_height: i64(s.latestHeight),
      latest_block_time: time(s.latest === undefined ? 0n : s.latest.header.time),
      earliest_block_hash: s.earliest === undefined ? "" : hex(s.earliest.blockId.hash),
      earliest_app_hash: s.earliest === undefined ? "" : hex(s.earliest.header.appHash),
      earliest_block_height: i64(s.earliest === undefined ? 0 : s.earliest.header.height),
      earliest_block_time: time(s.earliest === undefined ? 0n : s.earliest.header.time),
      catching_up: s.catchingUp,
    },
    validator_info: {
      address: hex(s.validator.address),
      pub_key: encodePubKey(s.validator.pubKey),
      voting_power: i64(s.validator.votingPower),
    },
  };
}

function encodeFlow(f: FlowStatusView) {
  return {
    Start: time(f.start),
    Bytes: i64(f.bytes),
    Samples: i64(f.samples),
    InstRate: i64(f.instRate),
    CurRate: i64(f.curRate),
    AvgRate: i64(f.avgRate),
    PeakRate: i64(f.peakRate),
    BytesRem: i64(f.bytesRem),
    Duration: i64(f.durationNs),
    Idle: i64(f.idleNs),
    TimeRem: i64(f.timeRemNs),
    Progress: f.progress,
    Active: f.active,
  };
}

/** p2p.ConnectionStatus has no json tags: Go field names. */
export function encodePeer(p: PeerView) {
  return {
    node_info: encodeNodeInfo(p.nodeInfo),
    is_outbound: p.isOutbound,
    connection_status: {
      Duration: i64(p.connectionStatus.durationNs),
      SendMonitor: encodeFlow(p.connectionStatus.sendMonitor),
      RecvMonitor: encodeFlow(p.connectionStatus.recvMonitor),
      Channels: p.connectionStatus.channels.map((c) => ({
        ID: c.id,
        SendQueueCapacity: i64(c.sendQueueCapacity),
        SendQueueSize: i64(c.sendQueueSize),
        Priority: i64(c.priority),
        RecentlySent: i64(c.recentlySent),
      })),
    },
    remote_ip: p.remoteIp,
  };
}

export function encodeNetInfo(listening: boolean, listeners: readonly string[], peers: readonly PeerView[]): WireValue {
  return { listening, listeners: [...listeners], n_peers: i64(peers.length), peers: peers.map(encodePeer) };
}
