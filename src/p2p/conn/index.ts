/**
 * p2p/conn: one authenticated, encrypted, multiplexed connection to a peer (CometBFT
 * p2p/conn + the upgrade step of p2p/transport.go). Owns the secret connection handshake and
 * framing, the NodeInfo exchange on a fresh socket, MConnection channels, packetization,
 * priorities, keepalive, rate limiting and connection status.
 * Does not own: listening, dialing, the peer set, reconnects, filtering by IP/ID, the address
 * book or PEX, nor what any channel's messages mean (that is the switch and the reactors).
 */
export { ChunkReader, type ChunkSource, socketSource } from "./chunkReader.js";
export * from "./errors.js";
export { FlowMonitor } from "./flowMonitor.js";
export {
  DEFAULT_MCONNECTION_CONFIG,
  MConnection,
  type MConnectionConfig,
  type MConnectionStream,
} from "./mConnection.js";
export { MerlinTranscript } from "./merlin.js";
export { DATA_MAX_SIZE, SEALED_FRAME_SIZE, SecretConnection } from "./secretConnection.js";
export { nodeIdFromEd25519, type PeerConnection, type UpgradeOptions, upgradeConnection } from "./upgradeConnection.js";
export { delimit } from "./wire.js";
