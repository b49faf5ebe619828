import { ComethError } from "../../util/errors.js";

/**
 * Errors of the connection layer (p2p/conn and the upgrade half of p2p/transport.go). Texts follow
 * CometBFT's so logs read alike; each adds what to check.
 */

/** Base of every error a peer connection fails or is rejected with. */
export class ConnectionError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** The remote closed the connection (io.EOF) or the socket failed. */
export class ConnectionClosedError extends ConnectionError {
  constructor(detail = "connection closed by the remote side", opts: { cause?: unknown } = {}) {
    super(detail, opts);
  }
}

/** The secret handshake plus NodeInfo exchange did not finish within handshake_timeout. */
export class HandshakeTimeoutError extends ConnectionError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`handshake did not complete within ${timeoutMs}ms. The peer is slow, not a cometh node, or unreachable`);
    this.timeoutMs = timeoutMs;
  }
}

/** The secret connection handshake failed (ErrRejected isAuthFailure, "secret conn failed: …"). */
export class SecretConnectionError extends ConnectionError {}

/** The remote's ephemeral X25519 key is a low-order point (ErrSmallOrderRemotePubKey). */
export class LowOrderPointError extends SecretConnectionError {
  constructor(opts: { cause?: unknown } = {}) {
    super("secret conn failed: detected low order point from remote peer", opts);
  }
}

/** The remote's signature over the handshake challenge does not verify. */
export class ChallengeVerificationError extends SecretConnectionError {
  constructor(detail = "challenge verification failed") {
    super(`secret conn failed: ${detail}. The peer does not hold the key it presented`);
  }
}

/** A sealed frame failed authentication: tampered, replayed, reordered or out of sync. */
export class FrameDecryptError extends SecretConnectionError {
  constructor(detail: string, opts: { cause?: unknown } = {}) {
    super(`failed to decrypt SecretConnection: ${detail}`, opts);
  }
}

/** The key the peer proved is not the one we expected (dialed ID, or the ID in its NodeInfo). */
export class PeerIdMismatchError extends ConnectionError {
  readonly connId: string;
  readonly expectedId: string;
  constructor(connId: string, expectedId: string, what: "dialed ID" | "NodeInfo.ID") {
    super(
      `auth failure: conn.ID (${connId}) ${what} (${expectedId}) mismatch. Check the <id>@ part of the peer address`,
    );
    this.connId = connId;
    this.expectedId = expectedId;
  }
}

/** We connected to ourselves (ErrRejected isSelf). */
export class SelfConnectionError extends ConnectionError {
  readonly id: string;
  constructor(id: string) {
    super(`self ID<${id}>: refusing to connect to ourselves. Remove our own address from the peer lists`);
    this.id = id;
  }
}

/** Our ping got no pong within pong_timeout. */
export class PongTimeoutError extends ConnectionError {
  constructor(timeoutMs: number) {
    super(`pong timeout: no pong within ${timeoutMs}ms of our ping. The peer is stalled or the link is down`);
  }
}

/** A packet named a channel this connection does not serve. */
export class UnknownChannelError extends ConnectionError {
  readonly channelId: number;
  constructor(channelId: number) {
    super(`unknown channel ${formatChannelId(channelId)}. The peer sent on a channel we did not announce`);
    this.channelId = channelId;
  }
}

/** A message grew past its channel's recvMessageCapacity. */
export class MessageTooLargeError extends ConnectionError {
  readonly channelId: number;
  constructor(channelId: number, capacity: number, received: number) {
    super(
      `received message exceeds available capacity: ${capacity} < ${received} on channel ${formatChannelId(channelId)}`,
    );
    this.channelId = channelId;
  }
}

/** Bytes on the wire that are not a valid length-delimited tendermint.p2p.Packet. */
export class MalformedPacketError extends ConnectionError {}

/** MConnectionConfig values that cannot work together. */
export class MConnectionConfigError extends ConnectionError {}

function formatChannelId(id: number): string {
  return `0x${id.toString(16).toUpperCase().padStart(2, "0")}`;
}
