// consensus/: the Tendermint state machine (CometBFT v0.38 consensus/state.go) with one input queue,
// vote sets (VoteSet, HeightVoteSet), timeouts on an injected clock, the block executor
// (create/validate/apply blocks, events per block), the WAL and its catch-up replay, the ABCI
// handshake (crash recovery), per-peer round states and gossip decisions, and the round-state and
// peer-state views behind dump_consensus_state / consensus_state, and the block-production policy
// port (blockProduction.ts: when round 0 proposes; CometBFT's TimeoutPolicy by default, a dev chain's
// MiningPolicy for automine, interval mining and mining on demand).
// Does not own: signing keys and the double-sign guard (privval), storage formats (store), the
// mempool, transport of messages (p2p; consensus hands them to a Gossip), or wire JSON (rpc).
export {
  BlockExecutor,
  blockHash,
  buildLastCommitInfo,
  EMPTY_EVIDENCE_POOL,
  MAX_BLOCK_SIZE_BYTES,
  maxDataBytes,
  misbehaviorOf,
  updateState,
} from "./blockExecutor.js";
export {
  type BlockProductionPolicy,
  type ProductionControl,
  type Round0Decision,
  TimeoutPolicy,
} from "./blockProduction.js";
export { type Consensus, createConsensus } from "./consensus.js";
export { type ConsensusOptions, ConsensusState, defaultConsensusOptions } from "./consensusState.js";
export type {
  BlockStoreAccess,
  ConsensusApp,
  ConsensusDeps,
  ConsensusEventMap,
  EventPublisher,
  EvidencePoolAccess,
  EvidenceReporter,
  FailPoint,
  FailPointDetail,
  FailPointHook,
  Gossip,
  MempoolAccess,
  RoundStateEvent,
  Signer,
  StateStoreAccess,
} from "./deps.js";
export {
  AppBlockHeightTooHighError,
  AppBlockHeightTooLowError,
  AppHashMismatchError,
  BlockExecutionError,
  ConflictingPeerMaj23Error,
  ConflictingVoteError,
  ConsensusError,
  ConsensusFailureError,
  DoubleSignRiskError,
  HandshakeError,
  InvalidBlockError,
  InvalidBlockPartError,
  InvalidProposalError,
  InvalidVoteError,
  NonDeterministicSignatureError,
  PeerFaultError,
  UnwantedRoundVoteError,
  WalCorruptionError,
  WalRepairError,
  WalReplayError,
  WalWriteError,
} from "./errors.js";
export { makeGenesisState } from "./genesisState.js";
export { type HandshakeDeps, type HandshakeResult, handshake } from "./handshake.js";
export { HeightVoteSet } from "./heightVoteSet.js";
export type * from "./messages.js";
export { isStateMachineMessage } from "./messages.js";
export type { ConsensusMetricsHooks } from "./metricsHooks.js";
export { type DevMiningOptions, MiningPolicy } from "./miningPolicy.js";
export { PeerState } from "./peerState.js";
export { compareHrs, ROUND_STEP, type RoundStep, roundStepName } from "./roundStep.js";
export { type TimeoutInfo, TimeoutTicker } from "./ticker.js";
export {
  type ConsensusStateView,
  formatRoundVotes,
  formatVoteSet,
  type PartSetView,
  type PeerRoundState,
  type PeerStateView,
  type RoundStateView,
  type RoundVotesText,
  type RoundVotesView,
  type ValidatorSetView,
} from "./views.js";
export {
  formatBitArray,
  formatFraction,
  formatVoteSetBitArray,
  formatVoteSetVotes,
  VoteSet,
  type VoteSetView,
} from "./voteSet.js";
export { Wal, type WalOptions } from "./wal.js";
export type { TimedWalMessage, WalMessage } from "./walCodec.js";
