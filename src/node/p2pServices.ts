import type { ConnectionStatus, FlowStatus, Peer } from "../p2p/index.js";
import type { FlowStatusView, P2PAccess, PeerView } from "../rpc/comet/index.js";
import { timestampFromMs } from "../util/time.js";

/** The switch as the node RPC uses it (p2p/ Switch satisfies it). */
export interface SwitchView {
  isListening(): boolean;
  listeners(): string[];
  peers(): readonly Peer[];
  dialSeeds(addrs: readonly string[]): void;
  addPersistentPeers(addrs: readonly string[]): void;
  addUnconditionalPeerIds(ids: readonly string[]): void;
  addPrivatePeerIds(ids: readonly string[]): void;
  dialPeersAsync(addrs: readonly string[], opts?: { persistent?: boolean }): void;
}

const NS_PER_MS = 1_000_000n;

function msToNs(ms: number): bigint {
  return BigInt(Math.round(ms)) * NS_PER_MS;
}

function flowView(f: FlowStatus): FlowStatusView {
  return {
    start: timestampFromMs(f.startMs),
    bytes: BigInt(Math.round(f.bytes)),
    samples: BigInt(Math.round(f.samples)),
    instRate: BigInt(Math.round(f.instRate)),
    curRate: BigInt(Math.round(f.curRate)),
    avgRate: BigInt(Math.round(f.avgRate)),
    peakRate: BigInt(Math.round(f.peakRate)),
    bytesRem: BigInt(Math.round(f.bytesRem)),
    durationNs: msToNs(f.durationMs),
    idleNs: msToNs(f.idleMs),
    timeRemNs: msToNs(f.timeRemMs),
    progress: f.progress,
    active: f.active,
  };
}

function connectionView(s: ConnectionStatus): PeerView["connectionStatus"] {
  return {
    durationNs: msToNs(s.durationMs),
    sendMonitor: flowView(s.sendMonitor),
    recvMonitor: flowView(s.recvMonitor),
    channels: s.channels.map((c) => ({
      id: c.id,
      sendQueueCapacity: c.sendQueueCapacity,
      sendQueueSize: c.sendQueueSize,
      priority: c.priority,
      recentlySent: BigInt(Math.round(c.recentlySent)),
    })),
  };
}

/** net_info and the unsafe dial routes, from the switch. */
export function p2pAccess(sw: SwitchView): P2PAccess {
  return {
    isListening: () => sw.isListening(),
    listeners: () => sw.listeners(),
    peers: () =>
      sw.peers().map((p) => ({
        // p2p's NodeInfo has the view's shape: handed over as it is.
        nodeInfo: p.nodeInfo,
        isOutbound: p.isOutbound,
        remoteIp: p.remoteHost,
        connectionStatus: connectionView(p.status()),
      })),
    dialSeeds: (seeds) => sw.dialSeeds(seeds),
    addPersistentPeers: (peers) => sw.addPersistentPeers(peers),
    addUnconditionalPeerIds: (ids) => sw.addUnconditionalPeerIds(ids),
    addPrivatePeerIds: (ids) => sw.addPrivatePeerIds(ids),
    dialPeers: (peers) => sw.dialPeersAsync(peers),
  };
}
