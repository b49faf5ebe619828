import protobuf from "protobufjs";
import { MalformedPacketError } from "./errors.js";

/**
 * Wire messages cosmjs-types does not generate: proto/tendermint/p2p/conn.proto (Packet,
 * AuthSigMessage) with the tendermint.crypto.PublicKey it embeds, and gogoproto's BytesValue the
 * ephemeral keys travel in. Field numbers copied from CometBFT v0.38.25.
 */
const SCHEMA = `
syntax = "proto3";
package cometh.p2pconn;

message BytesValue { bytes value = 1; }
message PublicKey { oneof sum { bytes ed25519 = 1; bytes secp256k1 = 2; } }

message PacketPing {}
message PacketPong {}
message PacketMsg { int32 channel_id = 1; bool eof = 2; bytes data = 3; }
message Packet {
  oneof sum {
    PacketPing packet_ping = 1;
    PacketPong packet_pong = 2;
    PacketMsg packet_msg = 3;
  }
}

message AuthSigMessage { PublicKey pub_key = 1; bytes sig = 2; }
`;

/** The schema's types, parsed on first use (not at import: start-up time, docs/dev-chain.md "Start-up"). */
function makeTypes() {
  const root = protobuf.parse(SCHEMA).root;
  return {
    BytesValue: root.lookupType("cometh.p2pconn.BytesValue"),
    PacketType: root.lookupType("cometh.p2pconn.Packet"),
    AuthSigMessageType: root.lookupType("cometh.p2pconn.AuthSigMessage"),
  };
}
let parsed: ReturnType<typeof makeTypes> | undefined;
function types(): ReturnType<typeof makeTypes> {
  parsed ??= makeTypes();
  return parsed;
}

export type Packet =
  | { readonly kind: "ping" }
  | { readonly kind: "pong" }
  | { readonly kind: "msg"; readonly channelId: number; readonly eof: boolean; readonly data: Uint8Array };

function plain(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** protoio.NewDelimitedWriter framing: varint length, then the Packet. */
export function encodePacketDelimited(p: Packet): Uint8Array {
  const obj =
    p.kind === "ping"
      ? { packetPing: {} }
      : p.kind === "pong"
        ? { packetPong: {} }
        : { packetMsg: { channelId: p.channelId, eof: p.eof, data: p.data } };
  return plain(types().PacketType.encodeDelimited(types().PacketType.fromObject(obj)).finish());
}

/** Decodes one Packet body (without its length prefix). */
export function decodePacket(bytes: Uint8Array): Packet {
  let msg: protobuf.Message;
  try {
    msg = types().PacketType.decode(bytes);
  } catch (err) {
    throw new MalformedPacketError(`malformed packet: ${(err as Error).message}`, { cause: err });
  }
  const o = msg as unknown as {
    packetPing?: object;
    packetPong?: object;
    packetMsg?: { channelId?: number; eof?: boolean; data?: Uint8Array };
  };
  if (o.packetMsg) {
    return {
      kind: "msg",
      channelId: o.packetMsg.channelId ?? 0,
      eof: o.packetMsg.eof ?? false,
      data: plain(o.packetMsg.data ?? new Uint8Array(0)),
    };
  }
  if (o.packetPing) return { kind: "ping" };
  if (o.packetPong) return { kind: "pong" };
  throw new MalformedPacketError("malformed packet: unknown message type (no ping, pong or msg set)");
}

/** Encoded size of the largest PacketMsg (MConnection.maxPacketMsgSize), the reader's length cap. */
export function maxPacketSize(maxPayloadBytes: number): number {
  const body = types()
    .PacketType.encode(
      types().PacketType.fromObject({ packetMsg: { channelId: 1, eof: true, data: new Uint8Array(maxPayloadBytes) } }),
    )
    .finish();
  return body.length;
}

export function encodeBytesValueDelimited(value: Uint8Array): Uint8Array {
  return plain(types().BytesValue.encodeDelimited(types().BytesValue.fromObject({ value })).finish());
}

export function decodeBytesValue(bytes: Uint8Array): Uint8Array {
  const o = types().BytesValue.decode(bytes) as unknown as { value?: Uint8Array };
  return plain(o.value ?? new Uint8Array(0));
}

export interface AuthSigMessage {
  /** Only Ed25519 node keys are accepted; a secp256k1 key decodes with type "secp256k1". */
  readonly pubKey: { readonly type: "ed25519" | "secp256k1" | "none"; readonly bytes: Uint8Array };
  readonly sig: Uint8Array;
}

export function encodeAuthSigMessageDelimited(ed25519PubKey: Uint8Array, sig: Uint8Array): Uint8Array {
  const msg = types().AuthSigMessageType.fromObject({ pubKey: { ed25519: ed25519PubKey }, sig });
  return plain(types().AuthSigMessageType.encodeDelimited(msg).finish());
}

export function decodeAuthSigMessage(bytes: Uint8Array): AuthSigMessage {
  const o = types().AuthSigMessageType.decode(bytes) as unknown as {
    pubKey?: { ed25519?: Uint8Array; secp256k1?: Uint8Array };
    sig?: Uint8Array;
  };
  const sig = plain(o.sig ?? new Uint8Array(0));
  if (o.pubKey?.ed25519) return { pubKey: { type: "ed25519", bytes: plain(o.pubKey.ed25519) }, sig };
  if (o.pubKey?.secp256k1) return { pubKey: { type: "secp256k1", bytes: plain(o.pubKey.secp256k1) }, sig };
  return { pubKey: { type: "none", bytes: new Uint8Array(0) }, sig };
}

/** Prefixes an already-encoded message with its varint length (protoio delimited framing). */
export function delimit(body: Uint8Array): Uint8Array {
  return plain(protobuf.Writer.create().bytes(body).finish());
}
