// reactors/: the glue between p2p and the subsystems that gossip. Owns the wire codecs of the
// consensus channels (tendermint.consensus.Message) and the mempool channel (tendermint.mempool.Message),
// the ConsensusReactor (channels 0x20-0x23: routes consensus's Gossip calls to peers, hands decoded and
// validated peer messages to consensus, ignores data/vote messages during block sync) and the
// MempoolReactor (channel 0x30: peer txs into CheckTx, admitted txs out to every other peer), plus
// ordered non-blocking delivery to peers (PeerSender).
// Does not own: per-peer round state and what to gossip to whom (consensus/), tx admission (mempool/),
// connections, channels' framing and peer lifecycle (p2p/), block sync.
export {
  decodeConsensusMessage,
  encodeConsensusMessage,
  MAX_BLOCK_PARTS_COUNT,
  MAX_VOTES_COUNT,
  validateConsensusMessage,
} from "./consensusCodec.js";
export {
  CONSENSUS_CHANNEL,
  CONSENSUS_MAX_MSG_BYTES,
  CONSENSUS_MESSAGE_CHANNEL,
  type ConsensusChannelId,
  type ConsensusPort,
  ConsensusReactor,
  type ConsensusReactorOptions,
  peerNodeAddress,
} from "./consensusReactor.js";
export { InvalidConsensusMessageError, InvalidMempoolMessageError, ReactorError } from "./errors.js";
export { decodeMempoolTxs, encodeMempoolTxs, mempoolRecvMessageCapacity } from "./mempoolCodec.js";
export { MEMPOOL_CHANNEL, type MempoolPort, MempoolReactor, type MempoolReactorOptions } from "./mempoolReactor.js";
export { PeerSender } from "./peerSender.js";
