import type { Block, BlockMeta, Commit, CommitSig, Header } from "../../../types/block.js";
import type { BlockId } from "../../../types/blockId.js";
import type { Proposal } from "../../../types/proposal.js";
import type { Vote } from "../../../types/vote.js";
import type { WireValue } from "../../jsonrpc/index.js";
import { b64, hex, i64, time } from "./wire.js";

/** Blocks, headers, commits and votes in cmtjson form (docs/cometbft-rpc.md §2.1). */

export function encodeBlockId(id: BlockId) {
  return { hash: hex(id.hash), parts: { total: id.partSetHeader.total, hash: hex(id.partSetHeader.hash) } };
}

export function encodeHeader(h: Header) {
  return {
    // proto Consensus fields are omitempty: app is left out when 0.
    version: {
      block: h.version.block === 0n ? undefined : i64(h.version.block),
      app: h.version.app === 0n ? undefined : i64(h.version.app),
    },
    chain_id: h.chainId,
    height: i64(h.height),
    time: time(h.time),
    last_block_id: encodeBlockId(h.lastBlockId),
    last_commit_hash: hex(h.lastCommitHash),
    data_hash: hex(h.dataHash),
    validators_hash: hex(h.validatorsHash),
    next_validators_hash: hex(h.nextValidatorsHash),
    consensus_hash: hex(h.consensusHash),
    app_hash: hex(h.appHash),
    last_results_hash: hex(h.lastResultsHash),
    evidence_hash: hex(h.evidenceHash),
    proposer_address: hex(h.proposerAddress),
  };
}

export function encodeCommitSig(s: CommitSig) {
  return {
    block_id_flag: s.blockIdFlag,
    validator_address: hex(s.validatorAddress),
    timestamp: time(s.timestamp),
    signature: b64(s.signature),
  };
}

export function encodeCommit(c: Commit) {
  return {
    height: i64(c.height),
    round: c.round,
    block_id: encodeBlockId(c.blockId),
    signatures: c.signatures.map(encodeCommitSig),
  };
}

/** A vote as cmtjson writes types.Vote (inside evidence and the Vote event). */
export function encodeVote(v: Vote) {
  return {
    type: v.type,
    height: i64(v.height),
    round: v.round,
    block_id: encodeBlockId(v.blockId),
    timestamp: time(v.timestamp),
    validator_address: hex(v.validatorAddress),
    validator_index: v.validatorIndex,
    signature: b64(v.signature),
    extension: b64(v.extension),
    extension_signature: b64(v.extensionSignature),
  };
}

/** Evidence as a registered interface value. */
export function encodeEvidence(ev: Block["evidence"][number]): WireValue {
  return {
    type: "tendermint/DuplicateVoteEvidence",
    value: {
      vote_a: encodeVote(ev.voteA),
      vote_b: encodeVote(ev.voteB),
      TotalVotingPower: i64(ev.totalVotingPower),
      ValidatorPower: i64(ev.validatorPower),
      Timestamp: time(ev.timestamp),
    },
  };
}

export function encodeBlock(b: Block) {
  return {
    header: encodeHeader(b.header),
    data: { txs: b.data.txs.map((tx) => Buffer.from(tx).toString("base64")) },
    evidence: { evidence: b.evidence.map(encodeEvidence) },
    last_commit: encodeCommit(b.lastCommit),
  };
}

export function encodeBlockMeta(m: BlockMeta) {
  return {
    block_id: encodeBlockId(m.blockId),
    block_size: i64(m.blockSize),
    header: encodeHeader(m.header),
    num_txs: i64(m.numTxs),
  };
}

/** types.Proposal: the type key has no json tag, so it is written `Type`. */
export function encodeProposal(p: Proposal) {
  return {
    Type: p.type,
    height: i64(p.height),
    round: p.round,
    pol_round: p.polRound,
    block_id: encodeBlockId(p.blockId),
    timestamp: time(p.timestamp),
    signature: b64(p.signature),
  };
}
