import { serverError } from "../errors.js";
import { method, type Namespace, notImplemented } from "../method.js";
import { p } from "../params.js";
import { clientVersion } from "./web3.js";

/**
 * admin: Cosmos EVM v0.5 has none; cometh serves geth's (docs/ethereum-rpc.md "Namespaces"). Node
 * identity and peers come from CometBFT's p2p layer (there is no enode: ids are CometBFT node ids,
 * urls id@host:port).
 */

const SERVERS_FIXED =
  "the EVM JSON-RPC servers are configured in app.toml [json-rpc] (address, ws-address); change them there and restart";

function hostPort(listenAddr: string): { ip: string; port: number } {
  const m = /^(?:[a-z]+:\/\/)?\[?([^\]]*?)\]?:(\d+)$/.exec(listenAddr);
  return m === null ? { ip: "", port: 0 } : { ip: m[1] ?? "", port: Number(m[2]) };
}

const serversFixed = method([], () => {
  throw serverError(SERVERS_FIXED);
});

export const admin = {
  nodeInfo: method([], (_, s) => {
    const id = s.node.identity();
    const { ip, port } = hostPort(id.listenAddr);
    return {
      id: id.id,
      name: clientVersion(s.node.version()),
      enode: `${id.id}@${ip}:${port}`,
      ip,
      ports: { discovery: 0, listener: port },
      listenAddr: id.listenAddr,
      protocols: { cometbft: { network: id.network, moniker: id.name, chainId: Number(s.node.chainId()) } },
    };
  }),
  peers: method([], async (_, s) =>
    ((await s.p2p?.peers()) ?? []).map((peer) => ({
      id: peer.id,
      name: peer.name,
      network: { remoteAddress: peer.remoteAddress, inbound: peer.inbound, trusted: false, static: false },
      protocols: {},
    })),
  ),
  datadir: method([], (_, s) => s.node.dataDir()),
  addPeer: method([p.string], async ([url], s) => (await s.p2p?.addPeer(url, false)) ?? false),
  removePeer: method([p.string], async ([url], s) => (await s.p2p?.removePeer(url)) ?? false),
  addTrustedPeer: method([p.string], async ([url], s) => (await s.p2p?.addPeer(url, true)) ?? false),
  removeTrustedPeer: method([p.string], async ([url], s) => (await s.p2p?.removePeer(url)) ?? false),
  startHTTP: serversFixed,
  stopHTTP: serversFixed,
  startRPC: serversFixed,
  stopRPC: serversFixed,
  startWS: serversFixed,
  stopWS: serversFixed,
  exportChain: notImplemented("blocks are CometBFT blocks; export them with the node's own tools"),
  importChain: notImplemented("blocks are CometBFT blocks; sync them over p2p"),
  peerEvents: notImplemented("peer event subscriptions are not served"),
} satisfies Namespace;
