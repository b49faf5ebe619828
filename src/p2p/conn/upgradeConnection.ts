import type { Socket } from "node:net";
import { addressFromPubKey, KEY_TYPES } from "../../types/index.js";
import { bytesToHex } from "../../util/bytes.js";
import {
  checkCompatibleWith,
  decodeNodeInfo,
  encodeNodeInfo,
  MAX_NODE_INFO_SIZE,
  validateNodeInfo,
} from "../nodeInfo.js";
import type { ChannelDescriptor, ConnectionStatus, NodeInfo } from "../reactor.js";
import { ChunkReader, socketSource } from "./chunkReader.js";
import { HandshakeTimeoutError, PeerIdMismatchError, SecretConnectionError, SelfConnectionError } from "./errors.js";
import { MConnection, type MConnectionConfig } from "./mConnection.js";
import { SecretConnection } from "./secretConnection.js";
import { delimit } from "./wire.js";

/** An authenticated, encrypted, multiplexed connection to a peer whose NodeInfo we accepted. */
export interface PeerConnection {
  readonly remoteNodeInfo: NodeInfo;
  /** 32-byte Ed25519 key proven by the handshake. */
  readonly remotePubKey: Uint8Array;
  readonly remoteHost: string;
  readonly remotePort: number;
  /** Starts reading; onReceive gets each complete message; onError once, when the connection fails/closes. */
  start(onReceive: (channelId: number, msg: Uint8Array) => void, onError: (err: unknown) => void): void;
  /** Resolves true once queued; waits while the channel queue is full; false if stopped, unknown channel or timed out. */
  send(channelId: number, msg: Uint8Array): Promise<boolean>;
  trySend(channelId: number, msg: Uint8Array): boolean;
  status(): ConnectionStatus;
  /** Idempotent; onError is not called for a local close. */
  close(): void;
}

export interface UpgradeOptions {
  /** 64-byte Ed25519 node key (seed || pub, as PrivKey.bytes). */
  readonly privKey: Uint8Array;
  /** Ours. */
  readonly nodeInfo: NodeInfo;
  readonly channels: readonly ChannelDescriptor[];
  readonly handshakeTimeoutMs: number;
  readonly config: MConnectionConfig;
  /** When dialing, the ID we expect; a mismatch fails with PeerIdMismatchError. */
  readonly expectedId?: string;
}

/** p2p.PubKeyToID: lowercase hex of the Ed25519 key's 20-byte address. */
export function nodeIdFromEd25519(pubKey: Uint8Array): string {
  return bytesToHex(addressFromPubKey({ type: KEY_TYPES.ed25519, bytes: pubKey }));
}

class UpgradedConnection implements PeerConnection {
  readonly remoteNodeInfo: NodeInfo;
  readonly remotePubKey: Uint8Array;
  readonly remoteHost: string;
  readonly remotePort: number;
  readonly #mconn: MConnection;

  constructor(mconn: MConnection, socket: Socket, remoteNodeInfo: NodeInfo, remotePubKey: Uint8Array) {
    this.#mconn = mconn;
    this.remoteNodeInfo = remoteNodeInfo;
    this.remotePubKey = remotePubKey;
    this.remoteHost = socket.remoteAddress ?? "";
    this.remotePort = socket.remotePort ?? 0;
  }

  start(onReceive: (channelId: number, msg: Uint8Array) => void, onError: (err: unknown) => void): void {
    this.#mconn.start(onReceive, onError);
  }
  send(channelId: number, msg: Uint8Array): Promise<boolean> {
    return this.#mconn.send(channelId, msg);
  }
  trySend(channelId: number, msg: Uint8Array): boolean {
    return this.#mconn.trySend(channelId, msg);
  }
  status(): ConnectionStatus {
    return this.#mconn.status();
  }
  close(): void {
    this.#mconn.close();
  }
}

/**
 * MultiplexTransport.upgrade: the secret handshake, the dialed-ID check, the NodeInfo exchange,
 * NodeInfo validation, the proven-key-vs-NodeInfo.ID check, self rejection and compatibility, all
 * within handshakeTimeoutMs. On failure the socket is destroyed and the named error thrown.
 */
export async function upgradeConnection(socket: Socket, opts: UpgradeOptions): Promise<PeerConnection> {
  if (opts.privKey.length !== 64) {
    throw new SecretConnectionError(
      `node key must be 64 bytes (Ed25519 seed || public key), got ${opts.privKey.length}. Check node_key.json`,
    );
  }
  socket.setNoDelay(true);
  const rawReader = new ChunkReader(socketSource(socket));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HandshakeTimeoutError(opts.handshakeTimeoutMs)), opts.handshakeTimeoutMs);
  });
  const work = runUpgrade(socket, rawReader, opts);
  // If the timeout wins, the handshake's own failure (socket destroyed) must not go unhandled.
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } catch (err) {
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function runUpgrade(socket: Socket, rawReader: ChunkReader, opts: UpgradeOptions): Promise<PeerConnection> {
  const sc = await SecretConnection.handshake(socket, rawReader, opts.privKey);
  const connId = nodeIdFromEd25519(sc.remotePubKey);
  if (opts.expectedId !== undefined && connId !== opts.expectedId.toLowerCase()) {
    throw new PeerIdMismatchError(connId, opts.expectedId, "dialed ID");
  }

  sc.write(delimit(encodeNodeInfo(opts.nodeInfo)));
  const { msg } = await sc.reader.readDelimited(MAX_NODE_INFO_SIZE);
  const theirs = decodeNodeInfo(msg);
  validateNodeInfo(theirs);
  if (connId !== theirs.id) throw new PeerIdMismatchError(connId, theirs.id, "NodeInfo.ID");
  if (opts.nodeInfo.id === theirs.id) throw new SelfConnectionError(theirs.id);
  checkCompatibleWith(opts.nodeInfo, theirs);

  const mconn = new MConnection(
    {
      reader: sc.reader,
      write: (data) => sc.write(data),
      get writableLength() {
        return sc.writableLength;
      },
      waitDrain: () => sc.waitDrain(),
      end: () => socket.end(),
      destroy: () => socket.destroy(),
    },
    opts.channels,
    opts.config,
  );
  return new UpgradedConnection(mconn, socket, theirs, sc.remotePubKey);
}
