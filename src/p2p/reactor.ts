/**
 * The contract between p2p and the reactors that use it (CometBFT p2p.Reactor / p2p.Peer, v0.38).
 * p2p moves opaque message bytes on numbered channels; each reactor owns its channels' protobuf
 * encoding and what the messages mean. Nothing here knows consensus, mempool or blocks.
 */

/** A channel a reactor speaks on (conn.ChannelDescriptor). IDs are one byte and unique per switch. */
export interface ChannelDescriptor {
  readonly id: number;
  /** Relative share of the send bandwidth when several channels have data queued. */
  readonly priority: number;
  /** Messages queued for sending before send() reports the queue full (default 1). */
  readonly sendQueueCapacity: number;
  /** Largest message accepted on this channel, in bytes; bigger ones stop the peer. */
  readonly recvMessageCapacity: number;
  readonly name: string;
}

/** The address a peer is reachable at, `<id>@<host>:<port>` when formatted. */
export interface NetAddress {
  /** Node ID: lowercase hex of the first 20 bytes of sha256(ed25519 pubkey). */
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

/** The peer's DefaultNodeInfo (p2p/node_info.go) as exchanged in the handshake. */
export interface NodeInfo {
  readonly protocolVersion: { readonly p2p: bigint; readonly block: bigint; readonly app: bigint };
  readonly id: string;
  /** The address it listens on, `host:port` (or `tcp://host:port`). */
  readonly listenAddr: string;
  /** The chain ID. */
  readonly network: string;
  readonly version: string;
  /** Channel IDs the peer serves. */
  readonly channels: Uint8Array;
  readonly moniker: string;
  readonly other: { readonly txIndex: string; readonly rpcAddress: string };
}

/** flowrate.Status of one direction of a connection (net_info connection_status). */
export interface FlowStatus {
  readonly startMs: number;
  readonly bytes: number;
  readonly samples: number;
  readonly instRate: number;
  readonly curRate: number;
  readonly avgRate: number;
  readonly peakRate: number;
  readonly bytesRem: number;
  readonly durationMs: number;
  readonly idleMs: number;
  readonly timeRemMs: number;
  readonly progress: number;
  readonly active: boolean;
}

export interface ChannelStatus {
  readonly id: number;
  readonly sendQueueCapacity: number;
  readonly sendQueueSize: number;
  readonly priority: number;
  readonly recentlySent: number;
}

export interface ConnectionStatus {
  readonly durationMs: number;
  readonly sendMonitor: FlowStatus;
  readonly recvMonitor: FlowStatus;
  readonly channels: readonly ChannelStatus[];
}

/** A connected, authenticated peer. */
export interface Peer {
  /** Its node ID (verified: the secret connection proved the key). */
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly isOutbound: boolean;
  /** Dialed from persistent_peers (or dial_peers persistent=true): redialed when lost. */
  readonly isPersistent: boolean;
  /** The remote socket address. */
  readonly remoteHost: string;
  readonly remotePort: number;
  /** The address to dial it back (its listen address for inbound peers). */
  readonly socketAddr: NetAddress;
  /**
   * Queues `msg` on `channelId`; resolves true once queued, false if the peer stopped or the
   * channel is unknown. Waits while the channel's send queue is full (backpressure, p2p Send).
   */
  send(channelId: number, msg: Uint8Array): Promise<boolean>;
  /** Queues `msg` unless the channel's send queue is full; false when it was not queued. */
  trySend(channelId: number, msg: Uint8Array): boolean;
  isRunning(): boolean;
  status(): ConnectionStatus;
  /** Per-reactor data attached to the peer (Peer.Get/Set). */
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

/**
 * A reactor: registered on the switch with its channels; told about peers as they come and go and
 * handed every message that arrives on its channels. `receive` must not block: long work is queued.
 */
export interface Reactor {
  readonly name: string;
  channels(): readonly ChannelDescriptor[];
  /** Called once the switch has started (before any peer is added). */
  start?(sw: ReactorSwitch): void | Promise<void>;
  stop?(): void | Promise<void>;
  /** A new peer, already running: the reactor may send to it right away. */
  addPeer(peer: Peer): void;
  /** The peer is gone (or being stopped); `reason` is the error, if any. */
  removePeer(peer: Peer, reason: unknown): void;
  /** A complete message on one of this reactor's channels. Throwing stops the peer for error. */
  receive(channelId: number, peer: Peer, msg: Uint8Array): void;
}

/** What a reactor may ask of the switch. */
export interface ReactorSwitch {
  peers(): readonly Peer[];
  peer(id: string): Peer | undefined;
  /** trySend to every peer (Switch.Broadcast). */
  broadcast(channelId: number, msg: Uint8Array): void;
  /** Disconnects a misbehaving peer (persistent peers are redialed). */
  stopPeerForError(peer: Peer, reason: unknown): void;
  /** This node's ID. */
  nodeId(): string;
}
