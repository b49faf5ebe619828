/**
 * What the switch reports of the bytes each peer moves, for CometBFT's p2p metrics
 * (peer_send_bytes_total, peer_receive_bytes_total, message_*_bytes_total). node/ implements it when
 * `[instrumentation] prometheus` is on; without it nothing is called. Called once per message:
 * implementations must be O(1).
 */
export interface PeerTraffic {
  /** `msg` was queued for `peerId` on `channelId` (Peer.Send/TrySend succeeded). */
  sent(peerId: string, channelId: number, msg: Uint8Array): void;
  /** `msg` arrived from `peerId` on `channelId`, before its reactor sees it. */
  received(peerId: string, channelId: number, msg: Uint8Array): void;
}
