// app/socket/: an external ABCI 2.0 application driven over CometBFT v0.38's socket protocol
// (`proxy_app = "tcp://host:port"` or `"unix:///path"`, `abci = "socket"`), or over ABCI's gRPC
// service (`abci = "grpc"`, grpcConnection.ts), as an Application.
// Owns: the length-delimited framing (codec.ts), one connection's request/response/Flush discipline
// (connection.ts), the four connections (consensus, mempool, query, snapshot) and the mapping of
// cometh's ABCI values to `tendermint.abci` protobuf (messages.ts). Does not own: what the node does
// when the application is lost (node/ stops it), the in-process apps, consensus or the mempool.
export { encodeFrame, encodeLengthPrefix, FrameDecoder, MAX_ABCI_MESSAGE_BYTES } from "./codec.js";
export {
  type AbciConnection,
  type AbciConnectionName,
  type AbciRequestKind,
  type AbciResponseOf,
  AbciSocketConnection,
  DIAL_RETRY_INTERVAL_MS,
  formatAbciAddress,
} from "./connection.js";
export { AbciConnectionError, AbciFrameError, AbciResponseError } from "./errors.js";
export { AbciGrpcConnection, decodeGrpcMessage, encodeGrpcMessage } from "./grpcConnection.js";
export { SocketApplication, type SocketAppOptions } from "./socketApplication.js";
