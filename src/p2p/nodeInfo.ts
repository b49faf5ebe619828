import { DefaultNodeInfo } from "cosmjs-types/tendermint/p2p/types";
import { ConnectionError } from "./conn/errors.js";
import type { NodeInfo } from "./reactor.js";

/**
 * DefaultNodeInfo on the wire (cosmjs-types tendermint.p2p.DefaultNodeInfo) and the checks
 * p2p/node_info.go runs on a peer's: Validate and CompatibleWith.
 */

/** MaxNodeInfoSize: the handshake refuses longer NodeInfo messages. */
export const MAX_NODE_INFO_SIZE = 10_240;
/** maxNumChannels in node_info.go. */
export const MAX_NUM_CHANNELS = 16;

/** The peer's NodeInfo is malformed (ErrRejected isNodeInfoInvalid). */
export class NodeInfoInvalidError extends ConnectionError {
  constructor(problem: string, opts: { cause?: unknown } = {}) {
    super(`invalid NodeInfo: ${problem}`, opts);
  }
}

/** The peer is valid but cannot talk to us (ErrRejected isIncompatible). */
export class IncompatiblePeerError extends ConnectionError {
  constructor(problem: string, hint: string) {
    super(`incompatible: ${problem}. ${hint}`);
  }
}

export function encodeNodeInfo(n: NodeInfo): Uint8Array {
  return DefaultNodeInfo.encode({
    protocolVersion: { p2p: n.protocolVersion.p2p, block: n.protocolVersion.block, app: n.protocolVersion.app },
    defaultNodeId: n.id,
    listenAddr: n.listenAddr,
    network: n.network,
    version: n.version,
    channels: n.channels,
    moniker: n.moniker,
    other: { txIndex: n.other.txIndex, rpcAddress: n.other.rpcAddress },
  }).finish();
}

export function decodeNodeInfo(b: Uint8Array): NodeInfo {
  let pb: DefaultNodeInfo;
  try {
    pb = DefaultNodeInfo.decode(b);
  } catch (err) {
    throw new NodeInfoInvalidError(`cannot decode DefaultNodeInfo: ${(err as Error).message}`, { cause: err });
  }
  return {
    protocolVersion: {
      p2p: pb.protocolVersion?.p2p ?? 0n,
      block: pb.protocolVersion?.block ?? 0n,
      app: pb.protocolVersion?.app ?? 0n,
    },
    id: pb.defaultNodeId,
    listenAddr: pb.listenAddr,
    network: pb.network,
    version: pb.version,
    channels: new Uint8Array(pb.channels),
    moniker: pb.moniker,
    other: { txIndex: pb.other?.txIndex ?? "", rpcAddress: pb.other?.rpcAddress ?? "" },
  };
}

/** cmtstrings.IsASCIIText: non-empty, printable ASCII only (no tabs or newlines). */
function isAsciiText(s: string): boolean {
  return /^[\x20-\x7e]+$/.test(s);
}

/** Go's net.SplitHostPort for `host:port` and `[v6]:port`; undefined when malformed. */
function splitHostPort(addr: string): { host: string; port: string } | undefined {
  if (addr.startsWith("[")) {
    const m = /^\[([^\]]*)\]:([^:]*)$/.exec(addr);
    return m ? { host: m[1] ?? "", port: m[2] ?? "" } : undefined;
  }
  const i = addr.lastIndexOf(":");
  if (i < 0) return undefined;
  const host = addr.slice(0, i);
  if (host.includes(":")) return undefined;
  return { host, port: addr.slice(i + 1) };
}

/**
 * DefaultNodeInfo.Validate plus the ID check NewNetAddressString does: a 40-hex-character ID, a
 * `[proto://]host:port` listen address, at most 16 distinct channels, ASCII version/moniker/rpc
 * address and tx_index "on", "off" or "". Host names are not resolved (CometBFT looks them up).
 */
export function validateNodeInfo(n: NodeInfo): void {
  if (!/^[0-9a-fA-F]{40}$/.test(n.id)) {
    throw new NodeInfoInvalidError(`invalid ID "${n.id}": a node ID is 40 hex characters (20 bytes)`);
  }
  const listen = n.listenAddr.includes("://") ? n.listenAddr.slice(n.listenAddr.indexOf("://") + 3) : n.listenAddr;
  const hp = splitHostPort(listen);
  if (!hp) throw new NodeInfoInvalidError(`invalid listen address "${n.listenAddr}": expected host:port`);
  if (hp.host.length === 0) throw new NodeInfoInvalidError(`invalid listen address "${n.listenAddr}": host is empty`);
  if (!/^\d+$/.test(hp.port) || Number(hp.port) > 65_535) {
    throw new NodeInfoInvalidError(`invalid listen address "${n.listenAddr}": port must be 0-65535`);
  }
  if (n.version.length > 0 && (!isAsciiText(n.version) || n.version.trim() === "")) {
    throw new NodeInfoInvalidError(`info.Version must be valid ASCII text without tabs, but got ${n.version}`);
  }
  if (n.channels.length > MAX_NUM_CHANNELS) {
    throw new NodeInfoInvalidError(`info.Channels is too long (${n.channels.length}). Max is ${MAX_NUM_CHANNELS}`);
  }
  const seen = new Set<number>();
  for (const ch of n.channels) {
    if (seen.has(ch)) throw new NodeInfoInvalidError(`info.Channels contains duplicate channel id ${ch}`);
    seen.add(ch);
  }
  if (!isAsciiText(n.moniker) || n.moniker.trim() === "") {
    throw new NodeInfoInvalidError(
      `info.Moniker must be valid non-empty ASCII text without tabs, but got ${n.moniker}`,
    );
  }
  const txIndex = n.other.txIndex;
  if (txIndex !== "" && txIndex !== "on" && txIndex !== "off") {
    throw new NodeInfoInvalidError(
      `info.Other.TxIndex should be either 'on', 'off', or empty string, got '${txIndex}'`,
    );
  }
  const rpc = n.other.rpcAddress;
  if (rpc.length > 0 && (!isAsciiText(rpc) || rpc.trim() === "")) {
    throw new NodeInfoInvalidError(`info.Other.RPCAddress=${rpc} must be valid ASCII text without tabs`);
  }
}

function formatChannels(c: Uint8Array): string {
  return `[${Array.from(c).join(" ")}]`;
}

/** DefaultNodeInfo.CompatibleWith: same block protocol, same network, a channel in common (unless we have none). */
export function checkCompatibleWith(ours: NodeInfo, theirs: NodeInfo): void {
  if (ours.protocolVersion.block !== theirs.protocolVersion.block) {
    throw new IncompatiblePeerError(
      `peer is on a different Block version. Got ${theirs.protocolVersion.block}, expected ${ours.protocolVersion.block}`,
      "Both nodes must run a CometBFT-compatible version with the same block protocol",
    );
  }
  if (ours.network !== theirs.network) {
    throw new IncompatiblePeerError(
      `peer is on a different network. Got ${theirs.network}, expected ${ours.network}`,
      "Check that both nodes use the same genesis chain_id",
    );
  }
  // No channels of our own means we are only testing the connection.
  if (ours.channels.length === 0) return;
  if (!ours.channels.some((ch) => theirs.channels.includes(ch))) {
    throw new IncompatiblePeerError(
      `peer has no common channels. Our channels: ${formatChannels(ours.channels)} ; Peer channels: ${formatChannels(theirs.channels)}`,
      "Enable at least one common reactor on both nodes",
    );
  }
}

/** Validate(theirs) then CompatibleWith(ours, theirs). */
export function checkNodeInfoCompatible(ours: NodeInfo, theirs: NodeInfo): void {
  validateNodeInfo(theirs);
  checkCompatibleWith(ours, theirs);
}
