import { type Block, decodeBlock, encodeBlock, SchemaMessage } from "../types/index.js";
import { InvalidBlocksyncMessageError } from "./errors.js";

/**
 * tendermint.blocksync.Message (CometBFT v0.38 proto/tendermint/blocksync/types.proto) via
 * protobufjs reflection: cosmjs-types does not generate the blocksync package. BlockResponse's
 * `block` (tendermint.types.Block) and `ext_commit` (tendermint.types.ExtendedCommit) are declared
 * as bytes: an embedded message and a bytes field have the same wire form, so the block is
 * encoded/decoded by types/protoCodec (cosmjs-types) and stays byte-identical to Go's.
 */
const SCHEMA = `
syntax = "proto3";
package tendermint.blocksync;

message BlockRequest { int64 height = 1; }
message NoBlockResponse { int64 height = 1; }
message BlockResponse { bytes block = 1; bytes ext_commit = 2; }
message StatusRequest {}
message StatusResponse { int64 height = 1; int64 base = 2; }

message Message {
  oneof sum {
    BlockRequest    block_request     = 1;
    NoBlockResponse no_block_response = 2;
    BlockResponse   block_response    = 3;
    StatusRequest   status_request    = 4;
    StatusResponse  status_response   = 5;
  }
}
`;

const MessageType = new SchemaMessage<DecodedMessage>(SCHEMA, "tendermint.blocksync.Message");

/** A decoded blocksync message; heights are numbers (they fit: CometBFT heights stay far below 2^53). */
export type BlocksyncMessage =
  | { kind: "blockRequest"; height: number }
  | { kind: "noBlockResponse"; height: number }
  /** `blockSize`: bytes of the encoded block, set when decoded. */
  | { kind: "blockResponse"; block: Block; blockSize?: number }
  | { kind: "statusRequest" }
  | { kind: "statusResponse"; height: number; base: number };

export function encodeBlocksyncMessage(msg: BlocksyncMessage): Uint8Array {
  let obj: Record<string, unknown>;
  switch (msg.kind) {
    case "blockRequest":
      obj = { blockRequest: { height: msg.height } };
      break;
    case "noBlockResponse":
      obj = { noBlockResponse: { height: msg.height } };
      break;
    case "blockResponse":
      // No vote extensions in this node: ext_commit stays nil, as CometBFT sends it when they are off.
      obj = { blockResponse: { block: encodeBlock(msg.block) } };
      break;
    case "statusRequest":
      obj = { statusRequest: {} };
      break;
    case "statusResponse":
      obj = { statusResponse: { height: msg.height, base: msg.base } };
      break;
  }
  return MessageType.encode(obj);
}

/** protobufjs hands int64 out as a number or a Long; anything outside the safe range is refused. */
function int64(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === "number" ? v : Number(BigInt(String(v)));
  if (!Number.isSafeInteger(n)) {
    throw new InvalidBlocksyncMessageError(`${field} ${String(v)} does not fit in a safe integer`);
  }
  return n;
}

interface DecodedMessage {
  sum?: string;
  blockRequest?: { height?: unknown };
  noBlockResponse?: { height?: unknown };
  blockResponse?: { block?: Uint8Array; extCommit?: Uint8Array };
  statusResponse?: { height?: unknown; base?: unknown };
}

/**
 * Decodes and validates (blocksync/msgs.go ValidateMsg) one message. Throws
 * InvalidBlocksyncMessageError: the reactor stops such a peer.
 */
export function decodeBlocksyncMessage(bytes: Uint8Array): BlocksyncMessage {
  const m = MessageType.decode(
    bytes,
    (err) => new InvalidBlocksyncMessageError(`invalid blocksync message: ${err.message}`, { cause: err }),
  );
  const msg = toMessage(m);
  validateMessage(msg);
  return msg;
}

function toMessage(m: DecodedMessage): BlocksyncMessage {
  switch (m.sum) {
    case "blockRequest":
      return { kind: "blockRequest", height: int64(m.blockRequest?.height, "height") };
    case "noBlockResponse":
      return { kind: "noBlockResponse", height: int64(m.noBlockResponse?.height, "height") };
    case "blockResponse": {
      const raw = m.blockResponse?.block;
      if (raw === undefined || raw.length === 0) {
        throw new InvalidBlocksyncMessageError("block response without a block");
      }
      const blockBytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
      let block: Block;
      try {
        block = decodeBlock(blockBytes);
      } catch (err) {
        throw new InvalidBlocksyncMessageError(`peer sent us an invalid block: ${(err as Error).message}`, {
          cause: err,
        });
      }
      return { kind: "blockResponse", block, blockSize: blockBytes.length };
    }
    case "statusRequest":
      return { kind: "statusRequest" };
    case "statusResponse":
      return {
        kind: "statusResponse",
        height: int64(m.statusResponse?.height, "height"),
        base: int64(m.statusResponse?.base, "base"),
      };
    default:
      throw new InvalidBlocksyncMessageError("unknown blocksync message type (no oneof field set)");
  }
}

/** blocksync/msgs.go ValidateMsg. */
function validateMessage(msg: BlocksyncMessage): void {
  switch (msg.kind) {
    case "blockRequest":
    case "noBlockResponse":
      if (msg.height < 0) throw new InvalidBlocksyncMessageError(`invalid height ${msg.height}: negative height`);
      return;
    case "statusResponse":
      if (msg.base < 0) throw new InvalidBlocksyncMessageError(`invalid base ${msg.base}: negative base`);
      if (msg.height < 0) throw new InvalidBlocksyncMessageError(`invalid height ${msg.height}: negative height`);
      if (msg.base > msg.height) {
        throw new InvalidBlocksyncMessageError(
          `invalid height ${msg.height}: base ${msg.base} cannot be greater than height`,
        );
      }
      return;
    default:
      return;
  }
}
