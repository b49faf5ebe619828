import type { ConnectionStatus, FlowStatus, NodeInfo } from "../reactor.js";

/** Test support shared by the in-memory fakes of p2p: a peer's NodeInfo and an idle connection. */

/** A v0.38 NodeInfo for a fake peer on "test-chain" serving `channels`. */
export function fixtureNodeInfo(id: string, channels: readonly number[]): NodeInfo {
  return {
    protocolVersion: { p2p: 8n, block: 11n, app: 0n },
    id,
    listenAddr: "tcp://127.0.0.1:26656",
    network: "test-chain",
    version: "0.38.25",
    channels: Uint8Array.from(channels),
    moniker: id,
    other: { txIndex: "on", rpcAddress: "tcp://127.0.0.1:26657" },
  };
}

const IDLE_FLOW: FlowStatus = {
  startMs: 0,
  bytes: 0,
  samples: 0,
  instRate: 0,
  curRate: 0,
  avgRate: 0,
  peakRate: 0,
  bytesRem: 0,
  durationMs: 0,
  idleMs: 0,
  timeRemMs: 0,
  progress: 0,
  active: false,
};

/** The status of a connection that never moved a byte. */
export function idleConnectionStatus(): ConnectionStatus {
  return { durationMs: 0, sendMonitor: IDLE_FLOW, recvMonitor: IDLE_FLOW, channels: [] };
}
