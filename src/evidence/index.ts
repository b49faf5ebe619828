// evidence/: evidence of double signing (CometBFT v0.38 evidence/). Owns the evidence pool
// (pending and committed DuplicateVoteEvidence persisted in a KvStore table, evidence formed from
// the conflicting votes consensus reports, verification against the validator set and block time
// of the evidence height, expiry by max_age_num_blocks and max_age_duration, the list offered to
// proposals, the check of a block's evidence, the update after each commit) and the evidence
// reactor gossiping it on p2p channel 0x38.
// Does not own: the evidence types, their proto encodings and hashes (types/), putting evidence
// in blocks or passing misbehavior to the app (consensus/ BlockExecutor, through
// EvidencePoolAccess), peer connections (p2p/), the broadcast_evidence route (rpc/).
export {
  EvidenceError,
  EvidencePoolNotReadyError,
  InvalidEvidenceMessageError,
  InvalidEvidenceSubmissionError,
  UnverifiableEvidenceError,
} from "./errors.js";
export {
  EVIDENCE_TABLE,
  type EvidenceBlockReader,
  EvidencePool,
  type EvidencePoolDeps,
  type EvidenceStateReader,
} from "./evidencePool.js";
export {
  DEFAULT_EVIDENCE_BROADCAST_INTERVAL_MS,
  decodeEvidenceListMessage,
  EVIDENCE_CHANNEL,
  EVIDENCE_MAX_MSG_BYTES,
  type EvidenceGossipPool,
  EvidenceReactor,
  type EvidenceReactorOptions,
  encodeEvidenceListMessage,
} from "./evidenceReactor.js";
export { isEvidenceExpired, verifyDuplicateVote } from "./verifyDuplicateVote.js";
