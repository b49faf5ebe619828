import type { WireValue } from "../../jsonrpc/index.js";
import type { EventMessage, EventPayloads } from "../services.js";
import {
  encodeEvent,
  encodeExecTxResultOmitEmpty,
  encodeFinalizeBlockEvent,
  encodeResultBeginBlock,
  encodeResultEndBlock,
} from "./abci.js";
import { encodeBlock, encodeBlockId, encodeEvidence, encodeHeader, encodeVote } from "./block.js";
import { encodeValidatorPriority } from "./validator.js";
import { b64, hex, i64 } from "./wire.js";

/**
 * Event payloads as pushed to subscribers (docs/cometbft-rpc.md §4.2): `{type: "tendermint/event/<Name>", value}`.
 * The payload sits in an interface, so ExecTxResult directly inside a value uses the omitempty
 * form while tx_results (reached through pointers) use jsonpb.
 */

/** Events whose payload is EventDataRoundState. */
const ROUND_STATE_EVENTS = new Set([
  "NewRoundStep",
  "Polka",
  "Lock",
  "Unlock",
  "Relock",
  "TimeoutPropose",
  "TimeoutWait",
  "ValidBlock",
]);

const STEP_NAMES = [
  "RoundStepUnknown",
  "RoundStepNewHeight",
  "RoundStepNewRound",
  "RoundStepPropose",
  "RoundStepPrevote",
  "RoundStepPrevoteWait",
  "RoundStepPrecommit",
  "RoundStepPrecommitWait",
  "RoundStepCommit",
];

/** In event payloads the step is its name (RoundStepType.String()). */
function stepName(step: string | number): string {
  if (typeof step === "string") return step;
  return STEP_NAMES[step] ?? "RoundStepUnknown";
}

function encodeValue(type: string, data: unknown): WireValue {
  switch (type) {
    case "NewBlock": {
      const d = data as EventPayloads["NewBlock"];
      return {
        block: encodeBlock(d.block),
        block_id: encodeBlockId(d.blockId),
        result_finalize_block: encodeFinalizeBlockEvent(d.resultFinalizeBlock),
        // cometh's additions (docs/cometbft-rpc.md §4.2): the 0.37 fields, derived from the FinalizeBlock result.
        result_begin_block: encodeResultBeginBlock(d.resultFinalizeBlock),
        result_end_block: encodeResultEndBlock(d.resultFinalizeBlock),
      };
    }
    case "NewBlockHeader":
      return { header: encodeHeader((data as EventPayloads["NewBlockHeader"]).header) };
    case "NewBlockEvents": {
      const d = data as EventPayloads["NewBlockEvents"];
      return {
        height: i64(d.height),
        events: d.events.length === 0 ? null : d.events.map(encodeEvent),
        num_txs: i64(d.numTxs),
      };
    }
    case "Tx": {
      const d = data as EventPayloads["Tx"];
      return {
        TxResult: {
          height: d.height === 0 ? undefined : i64(d.height),
          index: d.index === 0 ? undefined : d.index,
          tx: d.tx.length === 0 ? undefined : b64(d.tx),
          result: encodeExecTxResultOmitEmpty(d.result),
        },
      };
    }
    case "ValidatorSetUpdates":
      return {
        validator_updates: (data as EventPayloads["ValidatorSetUpdates"]).validatorUpdates.map(encodeValidatorPriority),
      };
    case "NewEvidence": {
      const d = data as EventPayloads["NewEvidence"];
      return { height: i64(d.height), evidence: encodeEvidence(d.evidence) };
    }
    case "Vote":
      return { Vote: encodeVote((data as EventPayloads["Vote"]).vote) };
    case "NewRound": {
      const d = data as EventPayloads["NewRound"];
      return {
        height: i64(d.height),
        round: d.round,
        step: stepName(d.step),
        proposer: { address: hex(d.proposer.address), index: d.proposer.index },
      };
    }
    case "CompleteProposal": {
      const d = data as EventPayloads["CompleteProposal"];
      return { height: i64(d.height), round: d.round, step: stepName(d.step), block_id: encodeBlockId(d.blockId) };
    }
    default: {
      const d = data as EventPayloads["RoundState"];
      return { height: i64(d.height), round: d.round, step: stepName(d.step) };
    }
  }
}

/** `data` of a pushed event: `{"type":"tendermint/event/NewBlock","value":{…}}`. */
export function encodeEventData(msg: Pick<EventMessage, "type" | "data">): WireValue {
  const wireType = ROUND_STATE_EVENTS.has(msg.type) ? "RoundState" : msg.type;
  return { type: `tendermint/event/${wireType}`, value: encodeValue(msg.type, msg.data) };
}

/** The `events` map of a pushed event, keys in the order the bus gave them. */
export function encodeEventsMap(events: EventMessage["events"]): WireValue {
  const out = new Map<string, WireValue>();
  for (const [k, v] of Object.entries(events)) out.set(k, [...v]);
  return out;
}
