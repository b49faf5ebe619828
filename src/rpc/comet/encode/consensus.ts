import type { Block } from "../../../types/block.js";
import type { Vote } from "../../../types/vote.js";
import { bytesEqual } from "../../../util/bytes.js";
import type { WireValue } from "../../jsonrpc/index.js";
import type {
  BitArrayView,
  PartSetView,
  PeerRoundStateView,
  PeerStateView,
  RoundStateView,
  RoundVotesView,
  TypesHelpers,
  VoteSetView,
} from "../services.js";
import { encodeBlock, encodeBlockId, encodeProposal } from "./block.js";
import { encodeValidatorSet } from "./validator.js";
import { hex, i64, time } from "./wire.js";

/**
 * dump_consensus_state and consensus_state (docs/cometbft-rpc.md §3). As CometBFT's OpenAPI
 * document has them (docs/compatibility.md, "documented shape"): inside dump_consensus_state
 * `round_state.valid_round`, `votes[].round` and the peer `round_state.round` are decimal strings,
 * and the peer part-set header key is `proposal_block_parts_header`.
 */

/** libs/bits MarshalJSON: "x"/"_" per bit, no wrapper. */
export function bitString(ba: BitArrayView): string {
  let s = "";
  for (let i = 0; i < ba.size; i++) s += ba.get(i) ? "x" : "_";
  return s;
}

/** A peer bit array: null when nil or empty. */
function peerBits(ba: BitArrayView | undefined): string | null {
  return ba === undefined || ba.size === 0 ? null : bitString(ba);
}

/** `%.2f` of sum/total with round-half-even on the exact ratio (Go's strconv rounding). */
export function formatFraction(sum: bigint, total: bigint): string {
  if (total === 0n) return sum === 0n ? "NaN" : sum > 0n ? "+Inf" : "-Inf";
  const neg = sum < 0n !== total < 0n;
  const n = (sum < 0n ? -sum : sum) * 100n;
  const d = total < 0n ? -total : total;
  let q = n / d;
  const r2 = (n % d) * 2n;
  if (r2 > d || (r2 === d && q % 2n === 1n)) q += 1n;
  const whole = q / 100n;
  const frac = (q % 100n).toString().padStart(2, "0");
  return `${neg && q !== 0n ? "-" : ""}${whole}.${frac}`;
}

/** VoteSet.BitArrayString: `BA{4:xxx_} 30/40 = 0.75`. */
export function voteSetBitArrayString(vs: VoteSetView): string {
  const bits = vs.votes.map((v) => (v === undefined ? "_" : "x")).join("");
  return `BA{${vs.votes.length}:${bits}} ${vs.sum}/${vs.totalVotingPower} = ${formatFraction(vs.sum, vs.totalVotingPower)}`;
}

function voteStrings(vs: VoteSetView, formatVote: (v: Vote) => string): string[] {
  return vs.votes.map((v) => (v === undefined ? "nil-Vote" : formatVote(v)));
}

function encodeRoundVotes(rv: RoundVotesView, formatVote: (v: Vote) => string, roundAsString: boolean) {
  return {
    round: roundAsString ? i64(rv.round) : rv.round,
    prevotes: voteStrings(rv.prevotes, formatVote),
    prevotes_bit_array: voteSetBitArrayString(rv.prevotes),
    precommits: voteStrings(rv.precommits, formatVote),
    precommits_bit_array: voteSetBitArrayString(rv.precommits),
  };
}

/** types.VoteSet MarshalJSON: `{"votes":[…],"votes_bit_array":"BA{…} s/t = f","peer_maj_23s":{…}}`. */
export function encodeVoteSet(vs: VoteSetView, formatVote: (v: Vote) => string) {
  const maj23s = new Map<string, WireValue>();
  for (const [peer, id] of vs.peerMaj23s) maj23s.set(peer, encodeBlockId(id));
  return { votes: voteStrings(vs, formatVote), votes_bit_array: voteSetBitArrayString(vs), peer_maj_23s: maj23s };
}

/** types.PartSet MarshalJSON: `{"count/total":"1/1","parts_bit_array":"x"}`. */
export function encodePartSet(ps: PartSetView | undefined): WireValue {
  if (ps === undefined) return null;
  const ba = ps.bitArray();
  return { "count/total": `${ps.count()}/${ps.total}`, parts_bit_array: ba.size === 0 ? null : bitString(ba) };
}

const blockOrNull = (b: Block | undefined) => (b === undefined ? null : encodeBlock(b));

export function encodeRoundState(rs: RoundStateView, formatVote: (v: Vote) => string): WireValue {
  return {
    height: i64(rs.height),
    round: rs.round,
    step: rs.step,
    start_time: time(rs.startTime),
    commit_time: time(rs.commitTime),
    validators: encodeValidatorSet(rs.validators),
    proposal: rs.proposal === undefined ? null : encodeProposal(rs.proposal),
    proposal_block: blockOrNull(rs.proposalBlock),
    proposal_block_parts: encodePartSet(rs.proposalBlockParts),
    locked_round: rs.lockedRound,
    locked_block: blockOrNull(rs.lockedBlock),
    locked_block_parts: encodePartSet(rs.lockedBlockParts),
    valid_round: i64(rs.validRound),
    valid_block: blockOrNull(rs.validBlock),
    valid_block_parts: encodePartSet(rs.validBlockParts),
    votes: rs.votes.map((rv) => encodeRoundVotes(rv, formatVote, true)),
    commit_round: rs.commitRound,
    last_commit: rs.lastCommit === undefined ? null : encodeVoteSet(rs.lastCommit, formatVote),
    last_validators: encodeValidatorSet(rs.lastValidators),
    triggered_timeout_precommit: rs.triggeredTimeoutPrecommit,
  };
}

function encodePeerRoundState(p: PeerRoundStateView): WireValue {
  return {
    height: i64(p.height),
    round: i64(p.round),
    step: p.step,
    start_time: time(p.startTime),
    proposal: p.proposal,
    proposal_block_parts_header: {
      total: p.proposalBlockPartSetHeader.total,
      hash: hex(p.proposalBlockPartSetHeader.hash),
    },
    proposal_block_parts: peerBits(p.proposalBlockParts),
    proposal_pol_round: p.proposalPolRound,
    proposal_pol: peerBits(p.proposalPol),
    prevotes: peerBits(p.prevotes),
    precommits: peerBits(p.precommits),
    last_commit_round: p.lastCommitRound,
    last_commit: peerBits(p.lastCommit),
    catchup_commit_round: p.catchupCommitRound,
    catchup_commit: peerBits(p.catchupCommit),
  };
}

/** A peer without consensus state still takes a slot: `{"node_address":"","peer_state":null}`. */
export function encodePeerState(p: PeerStateView): WireValue {
  if (p.roundState === undefined) return { node_address: "", peer_state: null };
  return {
    node_address: p.nodeAddress,
    peer_state: {
      round_state: encodePeerRoundState(p.roundState),
      stats: { votes: i64(p.stats.votes), block_parts: i64(p.stats.blockParts) },
    },
  };
}

export function encodeDumpConsensusState(
  rs: RoundStateView,
  peers: readonly PeerStateView[],
  formatVote: (v: Vote) => string,
): WireValue {
  return { round_state: encodeRoundState(rs, formatVote), peers: peers.map(encodePeerState) };
}

/** consensus_state: RoundStateSimple (height_vote_set rounds stay numbers, as CometBFT sends them). */
export function encodeConsensusStateSimple(
  rs: RoundStateView,
  helpers: Pick<TypesHelpers, "formatVote" | "headerHash">,
): WireValue {
  const blockHash = (b: Block | undefined) => {
    if (b === undefined) return "";
    const h = helpers.headerHash(b.header);
    return h === undefined ? "" : hex(h);
  };
  const proposer = rs.validators.getProposer();
  const index =
    proposer === undefined ? -1 : rs.validators.validators.findIndex((v) => bytesEqual(v.address, proposer.address));
  return {
    round_state: {
      "height/round/step": `${rs.height}/${rs.round}/${rs.step}`,
      start_time: time(rs.startTime),
      proposal_block_hash: blockHash(rs.proposalBlock),
      locked_block_hash: blockHash(rs.lockedBlock),
      valid_block_hash: blockHash(rs.validBlock),
      height_vote_set: rs.votes.map((rv) => encodeRoundVotes(rv, helpers.formatVote, false)),
      proposer: { address: proposer === undefined ? "" : hex(proposer.address), index },
    },
  };
}
