import type {
  AbciEvent,
  CheckTxResponse,
  ExecTxResult,
  FinalizeBlockResponse,
  InfoResponse,
  QueryResponse,
  ValidatorUpdate,
} from "../../../types/abci.js";
import type { ConsensusParams } from "../../../types/params.js";
import type { WireValue } from "../../jsonrpc/index.js";
import { b64, i64 } from "./wire.js";

/**
 * ABCI results. Two forms exist on the wire (docs/cometbft-rpc.md §1.6): gogoproto jsonpb with
 * EmitDefaults (every field, empty bytes null, proto json names) where CometBFT marshals an
 * addressable value, and cmtjson with the omitempty gogoproto tags inside event payloads.
 */

function attribute(a: AbciEvent["attributes"][number]) {
  return { key: a.key, value: a.value, index: a.index };
}

/** cmtjson abci.Event: type and attributes left out when empty; attributes always carry key, value, index. */
export function encodeEvent(e: AbciEvent) {
  return {
    type: e.type === "" ? undefined : e.type,
    attributes: e.attributes.length === 0 ? undefined : e.attributes.map(attribute),
  };
}

/** jsonpb abci.Event (EmitDefaults). */
function encodeEventJsonpb(e: AbciEvent) {
  return { type: e.type, attributes: e.attributes.map(attribute) };
}

/** jsonpb ExecTxResult: `{"code":0,"data":null,"log":"","info":"","gas_wanted":"0","gas_used":"0","events":[],"codespace":""}`. */
export function encodeExecTxResultJsonpb(r: ExecTxResult) {
  return {
    code: r.code,
    data: b64(r.data),
    log: r.log,
    info: r.info,
    gas_wanted: i64(r.gasWanted),
    gas_used: i64(r.gasUsed),
    events: r.events.map(encodeEventJsonpb),
    codespace: r.codespace,
  };
}

/** The default ExecTxResult (what broadcast_tx_commit returns when the tx never made a block). */
export const EMPTY_EXEC_TX_RESULT: ExecTxResult = {
  code: 0,
  data: new Uint8Array(0),
  log: "",
  info: "",
  gasWanted: 0n,
  gasUsed: 0n,
  events: [],
  codespace: "",
};

/** cmtjson ExecTxResult with omitempty tags (inside the Tx event): zero fields are left out. */
export function encodeExecTxResultOmitEmpty(r: ExecTxResult) {
  return {
    code: r.code === 0 ? undefined : r.code,
    data: r.data.length === 0 ? undefined : b64(r.data),
    log: r.log === "" ? undefined : r.log,
    info: r.info === "" ? undefined : r.info,
    gas_wanted: r.gasWanted === 0n ? undefined : i64(r.gasWanted),
    gas_used: r.gasUsed === 0n ? undefined : i64(r.gasUsed),
    events: r.events.length === 0 ? undefined : r.events.map(encodeEvent),
    codespace: r.codespace === "" ? undefined : r.codespace,
  };
}

/** jsonpb ResponseCheckTx (same fields as ExecTxResult in ABCI 2.0). */
export function encodeCheckTxJsonpb(r: CheckTxResponse) {
  return encodeExecTxResultJsonpb(r);
}

/** jsonpb ResponseQuery: proof_ops is written `proofOps`. */
export function encodeQueryResponseJsonpb(r: QueryResponse) {
  return {
    code: r.code,
    log: r.log,
    info: r.info,
    index: i64(r.index),
    key: b64(r.key),
    value: b64(r.value),
    proofOps:
      r.proofOps === undefined
        ? null
        : { ops: r.proofOps.map((op) => ({ type: op.type, key: b64(op.key), data: b64(op.data) })) },
    height: i64(r.height),
    codespace: r.codespace,
  };
}

/** cmtjson ResponseInfo: every field omitempty. */
export function encodeInfoResponse(r: InfoResponse) {
  return {
    data: r.data === "" ? undefined : r.data,
    version: r.version === "" ? undefined : r.version,
    app_version: r.appVersion === 0n ? undefined : i64(r.appVersion),
    last_block_height: r.lastBlockHeight === 0 ? undefined : i64(r.lastBlockHeight),
    last_block_app_hash: r.lastBlockAppHash.length === 0 ? undefined : b64(r.lastBlockAppHash),
  };
}

const PROTO_PUB_KEY: Readonly<Record<ValidatorUpdate["pubKey"]["type"], { type: string; field: string }>> = {
  ed25519: { type: "tendermint.crypto.PublicKey_Ed25519", field: "ed25519" },
  secp256k1: { type: "tendermint.crypto.PublicKey_Secp256K1", field: "secp256k1" },
};

/** abci.ValidatorUpdate: the proto PublicKey oneof as `{"Sum":{"type":…,"value":{"ed25519":"b64"}}}`; power omitempty. */
export function encodeValidatorUpdate(u: ValidatorUpdate) {
  const k = PROTO_PUB_KEY[u.pubKey.type];
  return {
    pub_key: { Sum: { type: k.type, value: { [k.field]: b64(u.pubKey.bytes) } } },
    power: u.power === 0n ? undefined : i64(u.power),
  };
}

/** types.ConsensusParams (genesis, consensus_params): every field present. */
export function encodeConsensusParams(cp: ConsensusParams) {
  return {
    block: { max_bytes: i64(cp.block.maxBytes), max_gas: i64(cp.block.maxGas) },
    evidence: {
      max_age_num_blocks: i64(cp.evidence.maxAgeNumBlocks),
      max_age_duration: i64(cp.evidence.maxAgeDurationNs),
      max_bytes: i64(cp.evidence.maxBytes),
    },
    validator: { pub_key_types: [...cp.validator.pubKeyTypes] },
    version: { app: i64(cp.version.app) },
    abci: { vote_extensions_enable_height: i64(cp.abci.voteExtensionsEnableHeight) },
  };
}

const omitZero = (v: bigint) => (v === 0n ? undefined : i64(v));

/** proto ConsensusParams (updates): omitempty everywhere except evidence.max_age_duration. */
export function encodeConsensusParamsProto(cp: ConsensusParams) {
  return {
    block: { max_bytes: omitZero(cp.block.maxBytes), max_gas: omitZero(cp.block.maxGas) },
    evidence: {
      max_age_num_blocks: omitZero(cp.evidence.maxAgeNumBlocks),
      max_age_duration: i64(cp.evidence.maxAgeDurationNs),
      max_bytes: omitZero(cp.evidence.maxBytes),
    },
    validator: { pub_key_types: cp.validator.pubKeyTypes.length === 0 ? undefined : [...cp.validator.pubKeyTypes] },
    version: { app: omitZero(cp.version.app) },
    abci: { vote_extensions_enable_height: omitZero(cp.abci.voteExtensionsEnableHeight) },
  };
}

/** block_results (docs/cometbft-rpc.md §2.1): nil lists are null; tx results in jsonpb form. */
export function encodeBlockResults(height: bigint | number, r: FinalizeBlockResponse): WireValue {
  return {
    height: i64(height),
    txs_results: r.txResults.length === 0 ? null : r.txResults.map(encodeExecTxResultJsonpb),
    finalize_block_events: r.events.length === 0 ? null : r.events.map(encodeEvent),
    validator_updates: r.validatorUpdates.length === 0 ? null : r.validatorUpdates.map(encodeValidatorUpdate),
    consensus_param_updates:
      r.consensusParamUpdates === undefined ? null : encodeConsensusParamsProto(r.consensusParamUpdates),
    app_hash: b64(r.appHash),
  };
}

/**
 * ResponseFinalizeBlock inside the NewBlock event (cmtjson, omitempty tags): events, tx_results,
 * consensus_param_updates and app_hash left out when empty; validator_updates always present, `null`
 * when empty unless the app answered an empty list (`validatorUpdatesEmptyList`: v0.38's kvstore).
 */
export function encodeFinalizeBlockEvent(r: FinalizeBlockResponse): WireValue {
  return {
    events: r.events.length === 0 ? undefined : r.events.map(encodeEvent),
    tx_results: r.txResults.length === 0 ? undefined : r.txResults.map(encodeExecTxResultJsonpb),
    validator_updates:
      r.validatorUpdates.length === 0
        ? r.validatorUpdatesEmptyList === true
          ? []
          : null
        : r.validatorUpdates.map(encodeValidatorUpdate),
    consensus_param_updates:
      r.consensusParamUpdates === undefined ? undefined : encodeConsensusParamsProto(r.consensusParamUpdates),
    app_hash: r.appHash.length === 0 ? undefined : b64(r.appHash),
  };
}

/** Whether a FinalizeBlock event belongs to the end phase (Cosmos SDK tags events with mode=EndBlock). */
function isEndBlockEvent(e: AbciEvent): boolean {
  return e.attributes.some((a) => a.key === "mode" && a.value === "EndBlock");
}

/**
 * cometh's addition (docs/cometbft-rpc.md §4.2): the 0.37-style `result_begin_block` ({events})
 * derived from FinalizeBlock: every block-level event not tagged mode=EndBlock.
 */
export function encodeResultBeginBlock(r: FinalizeBlockResponse): WireValue {
  const events = r.events.filter((e) => !isEndBlockEvent(e));
  return { events: events.length === 0 ? undefined : events.map(encodeEvent) };
}

/**
 * cometh's addition (docs/cometbft-rpc.md §4.2): the 0.37-style `result_end_block`
 * ({validator_updates, consensus_param_updates, events}) derived from FinalizeBlock: the updates and
 * the events tagged mode=EndBlock.
 */
export function encodeResultEndBlock(r: FinalizeBlockResponse): WireValue {
  const events = r.events.filter(isEndBlockEvent);
  return {
    validator_updates: r.validatorUpdates.length === 0 ? null : r.validatorUpdates.map(encodeValidatorUpdate),
    consensus_param_updates:
      r.consensusParamUpdates === undefined ? undefined : encodeConsensusParamsProto(r.consensusParamUpdates),
    events: events.length === 0 ? undefined : events.map(encodeEvent),
  };
}
