/**
 * Binary records for what has no protobuf encoder in types/: block metas, chain state, validator sets,
 * consensus params and FinalizeBlock responses. Each record starts with a format version byte.
 */
import type {
  AbciEvent,
  BlockId,
  BlockMeta,
  ChainState,
  ConsensusParams,
  ExecTxResult,
  FinalizeBlockResponse,
  Header,
  KeyType,
  PubKey,
  Validator,
  ValidatorUpdate,
} from "../types/index.js";
import { ValidatorSet } from "../types/index.js";
import { BinaryReader, BinaryWriter } from "./binaryCodec.js";

const FORMAT_V1 = 1;

function writeBlockId(w: BinaryWriter, id: BlockId): void {
  w.bytes(id.hash).uint(id.partSetHeader.total).bytes(id.partSetHeader.hash);
}

function readBlockId(r: BinaryReader): BlockId {
  const hash = r.bytes();
  const total = r.uint();
  return { hash, partSetHeader: { total, hash: r.bytes() } };
}

function writeHeader(w: BinaryWriter, h: Header): void {
  w.bigint(h.version.block).bigint(h.version.app).string(h.chainId).uint(h.height).bigint(h.time);
  writeBlockId(w, h.lastBlockId);
  w.bytes(h.lastCommitHash).bytes(h.dataHash).bytes(h.validatorsHash).bytes(h.nextValidatorsHash);
  w.bytes(h.consensusHash).bytes(h.appHash).bytes(h.lastResultsHash).bytes(h.evidenceHash).bytes(h.proposerAddress);
}

function readHeader(r: BinaryReader): Header {
  const block = r.bigint();
  const app = r.bigint();
  const chainId = r.string();
  const height = r.uint();
  const time = r.bigint();
  const lastBlockId = readBlockId(r);
  return {
    version: { block, app },
    chainId,
    height,
    time,
    lastBlockId,
    lastCommitHash: r.bytes(),
    dataHash: r.bytes(),
    validatorsHash: r.bytes(),
    nextValidatorsHash: r.bytes(),
    consensusHash: r.bytes(),
    appHash: r.bytes(),
    lastResultsHash: r.bytes(),
    evidenceHash: r.bytes(),
    proposerAddress: r.bytes(),
  };
}

export function encodeBlockMeta(m: BlockMeta): Uint8Array {
  const w = new BinaryWriter(512).u8(FORMAT_V1);
  writeBlockId(w, m.blockId);
  w.uint(m.blockSize).uint(m.numTxs);
  writeHeader(w, m.header);
  return w.finish();
}

export function decodeBlockMeta(b: Uint8Array): BlockMeta {
  const r = new BinaryReader(b, "block meta");
  r.version(FORMAT_V1);
  const blockId = readBlockId(r);
  const blockSize = r.uint();
  const numTxs = r.uint();
  const header = readHeader(r);
  r.end();
  return { blockId, blockSize, header, numTxs };
}

function writePubKey(w: BinaryWriter, k: PubKey): void {
  w.string(k.type).bytes(k.bytes);
}

function readPubKey(r: BinaryReader): PubKey {
  const type = r.string();
  if (type !== "ed25519" && type !== "secp256k1") r.fail(`unknown key type "${type}"`);
  return { type: type satisfies KeyType, bytes: r.bytes() };
}

function writeValidatorSet(w: BinaryWriter, vs: ValidatorSet): void {
  w.uint(vs.validators.length);
  for (const v of vs.validators) {
    w.bytes(v.address);
    writePubKey(w, v.pubKey);
    w.bigint(v.votingPower).bigint(v.proposerPriority);
  }
  const proposer = vs.isEmpty() ? undefined : vs.getProposer();
  w.bool(proposer !== undefined);
  if (proposer !== undefined) w.bytes(proposer.address);
}

function readValidatorSet(r: BinaryReader): ValidatorSet {
  const n = r.uint();
  const vals: Validator[] = [];
  for (let i = 0; i < n; i++) {
    const address = r.bytes();
    const pubKey = readPubKey(r);
    const votingPower = r.bigint();
    vals.push({ address, pubKey, votingPower, proposerPriority: r.bigint() });
  }
  const proposer = r.bool() ? r.bytes() : undefined;
  if (vals.length === 0) return ValidatorSet.empty();
  try {
    return ValidatorSet.restore(vals, proposer);
  } catch (err) {
    return r.fail(err);
  }
}

export function encodeValidatorSetRecord(vs: ValidatorSet): Uint8Array {
  const w = new BinaryWriter(64 + vs.size() * 96).u8(FORMAT_V1);
  writeValidatorSet(w, vs);
  return w.finish();
}

export function decodeValidatorSetRecord(b: Uint8Array): ValidatorSet {
  const r = new BinaryReader(b, "validator set");
  r.version(FORMAT_V1);
  const vs = readValidatorSet(r);
  r.end();
  return vs;
}

function writeParams(w: BinaryWriter, p: ConsensusParams): void {
  w.bigint(p.block.maxBytes).bigint(p.block.maxGas);
  w.bigint(p.evidence.maxAgeNumBlocks).bigint(p.evidence.maxAgeDurationNs).bigint(p.evidence.maxBytes);
  w.uint(p.validator.pubKeyTypes.length);
  for (const t of p.validator.pubKeyTypes) w.string(t);
  w.bigint(p.version.app).bigint(p.abci.voteExtensionsEnableHeight);
}

function readParams(r: BinaryReader): ConsensusParams {
  const maxBytes = r.bigint();
  const maxGas = r.bigint();
  const maxAgeNumBlocks = r.bigint();
  const maxAgeDurationNs = r.bigint();
  const evidenceMaxBytes = r.bigint();
  const n = r.uint();
  const pubKeyTypes: string[] = [];
  for (let i = 0; i < n; i++) pubKeyTypes.push(r.string());
  const app = r.bigint();
  return {
    block: { maxBytes, maxGas },
    evidence: { maxAgeNumBlocks, maxAgeDurationNs, maxBytes: evidenceMaxBytes },
    validator: { pubKeyTypes },
    version: { app },
    abci: { voteExtensionsEnableHeight: r.bigint() },
  };
}

export function encodeConsensusParams(p: ConsensusParams): Uint8Array {
  const w = new BinaryWriter(64).u8(FORMAT_V1);
  writeParams(w, p);
  return w.finish();
}

export function decodeConsensusParams(b: Uint8Array): ConsensusParams {
  const r = new BinaryReader(b, "consensus params");
  r.version(FORMAT_V1);
  const p = readParams(r);
  r.end();
  return p;
}

export function encodeChainState(s: ChainState): Uint8Array {
  const w = new BinaryWriter(1024).u8(FORMAT_V1);
  w.string(s.chainId).uint(s.initialHeight).uint(s.lastBlockHeight);
  writeBlockId(w, s.lastBlockId);
  w.bigint(s.lastBlockTime);
  writeValidatorSet(w, s.nextValidators);
  writeValidatorSet(w, s.validators);
  writeValidatorSet(w, s.lastValidators);
  w.uint(s.lastHeightValidatorsChanged);
  writeParams(w, s.consensusParams);
  w.uint(s.lastHeightConsensusParamsChanged).bytes(s.lastResultsHash).bytes(s.appHash).bigint(s.appVersion);
  return w.finish();
}

export function decodeChainState(b: Uint8Array): ChainState {
  const r = new BinaryReader(b, "chain state");
  r.version(FORMAT_V1);
  const chainId = r.string();
  const initialHeight = r.uint();
  const lastBlockHeight = r.uint();
  const lastBlockId = readBlockId(r);
  const lastBlockTime = r.bigint();
  const nextValidators = readValidatorSet(r);
  const validators = readValidatorSet(r);
  const lastValidators = readValidatorSet(r);
  const lastHeightValidatorsChanged = r.uint();
  const consensusParams = readParams(r);
  const s: ChainState = {
    chainId,
    initialHeight,
    lastBlockHeight,
    lastBlockId,
    lastBlockTime,
    nextValidators,
    validators,
    lastValidators,
    lastHeightValidatorsChanged,
    consensusParams,
    lastHeightConsensusParamsChanged: r.uint(),
    lastResultsHash: r.bytes(),
    appHash: r.bytes(),
    appVersion: r.bigint(),
  };
  r.end();
  return s;
}

function writeEvents(w: BinaryWriter, events: AbciEvent[]): void {
  w.uint(events.length);
  for (const e of events) {
    w.string(e.type).uint(e.attributes.length);
    for (const a of e.attributes) w.string(a.key).string(a.value).bool(a.index);
  }
}

function readEvents(r: BinaryReader): AbciEvent[] {
  const n = r.uint();
  const events: AbciEvent[] = [];
  for (let i = 0; i < n; i++) {
    const type = r.string();
    const m = r.uint();
    const attributes = [];
    for (let j = 0; j < m; j++) {
      const key = r.string();
      const value = r.string();
      attributes.push({ key, value, index: r.bool() });
    }
    events.push({ type, attributes });
  }
  return events;
}

function writeTxResult(w: BinaryWriter, t: ExecTxResult): void {
  w.uint(t.code).bytes(t.data).string(t.log).string(t.info).bigint(t.gasWanted).bigint(t.gasUsed);
  writeEvents(w, t.events);
  w.string(t.codespace);
}

function readTxResult(r: BinaryReader): ExecTxResult {
  const code = r.uint();
  const data = r.bytes();
  const log = r.string();
  const info = r.string();
  const gasWanted = r.bigint();
  const gasUsed = r.bigint();
  const events = readEvents(r);
  return { code, data, log, info, gasWanted, gasUsed, events, codespace: r.string() };
}

export function encodeFinalizeBlockResponse(res: FinalizeBlockResponse): Uint8Array {
  const w = new BinaryWriter(256 + res.txResults.length * 128).u8(FORMAT_V1);
  writeEvents(w, res.events);
  w.uint(res.txResults.length);
  for (const t of res.txResults) writeTxResult(w, t);
  w.uint(res.validatorUpdates.length);
  for (const u of res.validatorUpdates) {
    writePubKey(w, u.pubKey);
    w.bigint(u.power);
  }
  w.bool(res.consensusParamUpdates !== undefined);
  if (res.consensusParamUpdates !== undefined) writeParams(w, res.consensusParamUpdates);
  w.bytes(res.appHash);
  return w.finish();
}

export function decodeFinalizeBlockResponse(b: Uint8Array): FinalizeBlockResponse {
  const r = new BinaryReader(b, "FinalizeBlock response");
  r.version(FORMAT_V1);
  const events = readEvents(r);
  const nTx = r.uint();
  const txResults: ExecTxResult[] = [];
  for (let i = 0; i < nTx; i++) txResults.push(readTxResult(r));
  const nUpd = r.uint();
  const validatorUpdates: ValidatorUpdate[] = [];
  for (let i = 0; i < nUpd; i++) {
    const pubKey = readPubKey(r);
    validatorUpdates.push({ pubKey, power: r.bigint() });
  }
  const consensusParamUpdates = r.bool() ? readParams(r) : undefined;
  const appHash = r.bytes();
  r.end();
  const res: FinalizeBlockResponse = { events, txResults, validatorUpdates, appHash };
  if (consensusParamUpdates !== undefined) res.consensusParamUpdates = consensusParamUpdates;
  return res;
}
