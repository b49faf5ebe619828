import { SchemaMessage } from "../types/index.js";
import { InvalidStatesyncMessageError } from "./errors.js";

/**
 * tendermint.statesync.Message (CometBFT v0.38 proto/tendermint/statesync/types.proto) via protobufjs
 * reflection: cosmjs-types does not generate the statesync package.
 */
const SCHEMA = `
syntax = "proto3";
package tendermint.statesync;

message SnapshotsRequest {}
message SnapshotsResponse { uint64 height = 1; uint32 format = 2; uint32 chunks = 3; bytes hash = 4; bytes metadata = 5; }
message ChunkRequest { uint64 height = 1; uint32 format = 2; uint32 index = 3; }
message ChunkResponse { uint64 height = 1; uint32 format = 2; uint32 index = 3; bytes chunk = 4; bool missing = 5; }

message Message {
  oneof sum {
    SnapshotsRequest  snapshots_request  = 1;
    SnapshotsResponse snapshots_response = 2;
    ChunkRequest      chunk_request      = 3;
    ChunkResponse     chunk_response     = 4;
  }
}
`;

const MessageType = new SchemaMessage<DecodedMessage>(SCHEMA, "tendermint.statesync.Message");

/** A decoded statesync message; heights are numbers (CometBFT heights stay far below 2^53). */
export type StatesyncMessage =
  | { kind: "snapshotsRequest" }
  | {
      kind: "snapshotsResponse";
      height: number;
      format: number;
      chunks: number;
      hash: Uint8Array;
      metadata: Uint8Array;
    }
  | { kind: "chunkRequest"; height: number; format: number; index: number }
  | { kind: "chunkResponse"; height: number; format: number; index: number; chunk: Uint8Array; missing: boolean };

export function encodeStatesyncMessage(msg: StatesyncMessage): Uint8Array {
  switch (msg.kind) {
    case "snapshotsRequest":
      return MessageType.encode({ snapshotsRequest: {} });
    case "snapshotsResponse":
      return MessageType.encode({
        snapshotsResponse: {
          height: msg.height,
          format: msg.format,
          chunks: msg.chunks,
          hash: msg.hash,
          metadata: msg.metadata,
        },
      });
    case "chunkRequest":
      return MessageType.encode({ chunkRequest: { height: msg.height, format: msg.format, index: msg.index } });
    case "chunkResponse":
      return MessageType.encode({
        chunkResponse: {
          height: msg.height,
          format: msg.format,
          index: msg.index,
          chunk: msg.chunk,
          missing: msg.missing,
        },
      });
  }
}

interface DecodedMessage {
  sum?: string;
  snapshotsResponse?: { height?: unknown; format?: number; chunks?: number; hash?: Uint8Array; metadata?: Uint8Array };
  chunkRequest?: { height?: unknown; format?: number; index?: number };
  chunkResponse?: { height?: unknown; format?: number; index?: number; chunk?: Uint8Array; missing?: boolean };
}

function uint64(v: unknown): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === "number" ? v : Number(BigInt(String(v)));
  if (!Number.isSafeInteger(n))
    throw new InvalidStatesyncMessageError(`height ${String(v)} does not fit in a safe integer`);
  return n;
}

function bytes(b: Uint8Array | undefined): Uint8Array {
  return b === undefined ? new Uint8Array(0) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Decodes and validates (statesync/messages.go validateMsg) one message. Throws
 * InvalidStatesyncMessageError: the reactor stops such a peer.
 */
export function decodeStatesyncMessage(raw: Uint8Array): StatesyncMessage {
  const m = MessageType.decode(
    raw,
    (err) => new InvalidStatesyncMessageError(`invalid statesync message: ${err.message}`, { cause: err }),
  );
  const msg = toMessage(m);
  validateMessage(msg);
  return msg;
}

function toMessage(m: DecodedMessage): StatesyncMessage {
  switch (m.sum) {
    case "snapshotsRequest":
      return { kind: "snapshotsRequest" };
    case "snapshotsResponse": {
      const s = m.snapshotsResponse ?? {};
      return {
        kind: "snapshotsResponse",
        height: uint64(s.height),
        format: s.format ?? 0,
        chunks: s.chunks ?? 0,
        hash: bytes(s.hash),
        metadata: bytes(s.metadata),
      };
    }
    case "chunkRequest": {
      const c = m.chunkRequest ?? {};
      return { kind: "chunkRequest", height: uint64(c.height), format: c.format ?? 0, index: c.index ?? 0 };
    }
    case "chunkResponse": {
      const c = m.chunkResponse ?? {};
      return {
        kind: "chunkResponse",
        height: uint64(c.height),
        format: c.format ?? 0,
        index: c.index ?? 0,
        chunk: bytes(c.chunk),
        missing: c.missing === true,
      };
    }
    default:
      throw new InvalidStatesyncMessageError("unknown statesync message type (no oneof field set)");
  }
}

/** statesync/messages.go validateMsg (a nil chunk and an empty one are the same on the wire here). */
function validateMessage(msg: StatesyncMessage): void {
  switch (msg.kind) {
    case "snapshotsResponse":
      if (msg.height === 0) throw new InvalidStatesyncMessageError("snapshot height cannot be 0");
      if (msg.hash.length === 0) throw new InvalidStatesyncMessageError("snapshot has no hash");
      if (msg.chunks === 0) throw new InvalidStatesyncMessageError("snapshot has no chunks");
      return;
    case "chunkRequest":
      if (msg.height === 0) throw new InvalidStatesyncMessageError("height cannot be 0");
      return;
    case "chunkResponse":
      if (msg.height === 0) throw new InvalidStatesyncMessageError("height cannot be 0");
      if (msg.missing && msg.chunk.length > 0) {
        throw new InvalidStatesyncMessageError("missing chunk cannot have contents");
      }
      return;
    default:
      return;
  }
}
