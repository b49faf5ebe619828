/**
 * p2p/ owns CometBFT v0.38's peer-to-peer layer: the reactor contract (reactor.ts), the switch
 * (listening, dialing, persistent-peer redial, peer limits, routing channel messages to reactors),
 * peers, `id@host:port` addresses, the address book (addrbook.json) and the PEX reactor on channel
 * 0x00. conn/ owns the wire below a peer: secret connection, NodeInfo handshake, MConnection
 * multiplexing and flow control.
 *
 * It does not own what messages mean on any other channel (consensus, mempool, evidence,
 * blocksync own theirs), nor config parsing (config/) or the net_info JSON shape (rpc/).
 */
export * from "./addrBook.js";
export * from "./conn/index.js";
export * from "./errors.js";
export * from "./netAddress.js";
export * from "./nodeInfo.js";
export * from "./peer.js";
export * from "./pexReactor.js";
export type {
  ChannelDescriptor,
  ChannelStatus,
  ConnectionStatus,
  FlowStatus,
  NetAddress,
  NodeInfo,
  Peer,
  Reactor,
  ReactorSwitch,
} from "./reactor.js";
export * from "./switch.js";
export type { PeerTraffic } from "./traffic.js";
