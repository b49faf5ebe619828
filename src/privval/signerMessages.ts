import { BinaryReader, BinaryWriter, WireType } from "cosmjs-types/binary";
import {
  decodeProposal,
  decodePubKey,
  decodeVote,
  encodeProposal,
  encodePubKey,
  encodeVote,
  type Proposal,
  type PubKey,
  type Vote,
} from "../types/index.js";
import { SignerProtocolError } from "./errors.js";

/**
 * The privval socket protocol's messages (proto/tendermint/privval/types.proto in CometBFT v0.38):
 * one `Message` with a oneof of eight kinds, each sent as a varint-length-delimited protobuf
 * (docs/remote-signer.md, "Messages"). Votes, proposals and keys inside are the tendermint.types /
 * tendermint.crypto encodings types/ already writes.
 */

/** RemoteSignerError: the signer's refusal (code 0 for every refusal CometBFT's signer makes). */
export interface RemoteSignerErrorInfo {
  readonly code: number;
  readonly description: string;
}

export type SignerMessage =
  | { readonly kind: "pubKeyRequest"; readonly chainId: string }
  | { readonly kind: "pubKeyResponse"; readonly pubKey?: PubKey; readonly error?: RemoteSignerErrorInfo }
  | { readonly kind: "signVoteRequest"; readonly vote?: Vote; readonly chainId: string }
  | { readonly kind: "signedVoteResponse"; readonly vote?: Vote; readonly error?: RemoteSignerErrorInfo }
  | { readonly kind: "signProposalRequest"; readonly proposal?: Proposal; readonly chainId: string }
  | { readonly kind: "signedProposalResponse"; readonly proposal?: Proposal; readonly error?: RemoteSignerErrorInfo }
  | { readonly kind: "pingRequest" }
  | { readonly kind: "pingResponse" }
  /** A Message with no field of the oneof set (what CometBFT's signer answers to a request it does not know). */
  | { readonly kind: "empty" };

export type SignerMessageKind = SignerMessage["kind"];

/** Field numbers of Message.sum. */
const FIELD = {
  pubKeyRequest: 1,
  pubKeyResponse: 2,
  signVoteRequest: 3,
  signedVoteResponse: 4,
  signProposalRequest: 5,
  signedProposalResponse: 6,
  pingRequest: 7,
  pingResponse: 8,
} as const;

/** The largest message either side reads (signer_endpoint.go maxRemoteSignerMsgSize). */
export const MAX_SIGNER_MESSAGE_BYTES = 10 * 1024;

/** Encodes a Message (without its length prefix). */
export function encodeSignerMessage(m: SignerMessage): Uint8Array {
  const body = new BinaryWriter();
  switch (m.kind) {
    case "empty":
      return new Uint8Array(0);
    case "pubKeyRequest":
      writeString(body, 1, m.chainId);
      break;
    case "pubKeyResponse":
      // pub_key is non-nullable (gogoproto): always present, empty on an error.
      body.uint32(tag(1)).bytes(m.pubKey === undefined ? new Uint8Array(0) : encodePubKey(m.pubKey));
      writeError(body, m.error);
      break;
    case "signVoteRequest":
      if (m.vote !== undefined) body.uint32(tag(1)).bytes(encodeVote(m.vote));
      writeString(body, 2, m.chainId);
      break;
    case "signedVoteResponse":
      body.uint32(tag(1)).bytes(m.vote === undefined ? new Uint8Array(0) : encodeVote(m.vote));
      writeError(body, m.error);
      break;
    case "signProposalRequest":
      if (m.proposal !== undefined) body.uint32(tag(1)).bytes(encodeProposal(m.proposal));
      writeString(body, 2, m.chainId);
      break;
    case "signedProposalResponse":
      body.uint32(tag(1)).bytes(m.proposal === undefined ? new Uint8Array(0) : encodeProposal(m.proposal));
      writeError(body, m.error);
      break;
    case "pingRequest":
    case "pingResponse":
      break;
  }
  const out = new BinaryWriter();
  out.uint32(tag(FIELD[m.kind])).bytes(body.finish());
  return out.finish();
}

/** Decodes a Message body; malformed bytes or a malformed vote, proposal or key throw SignerProtocolError. */
export function decodeSignerMessage(bytes: Uint8Array): SignerMessage {
  try {
    return decodeMessage(bytes);
  } catch (err) {
    if (err instanceof SignerProtocolError) throw err;
    throw new SignerProtocolError(`malformed privval message: ${(err as Error).message}`, { cause: err });
  }
}

function decodeMessage(bytes: Uint8Array): SignerMessage {
  const r = new BinaryReader(bytes);
  let found: SignerMessage = { kind: "empty" };
  while (r.pos < r.len) {
    const [field, wireType] = r.tag();
    const kind = kindOfField(field);
    if (kind === undefined || wireType !== WireType.Bytes) {
      r.skipType(wireType);
      continue;
    }
    // A oneof decoded twice keeps the last one, as protobuf does.
    found = decodeBody(kind, r.bytes());
  }
  return found;
}

function kindOfField(field: number): Exclude<SignerMessageKind, "empty"> | undefined {
  for (const [kind, n] of Object.entries(FIELD)) if (n === field) return kind as keyof typeof FIELD;
  return undefined;
}

function decodeBody(kind: Exclude<SignerMessageKind, "empty">, body: Uint8Array): SignerMessage {
  const f = readFields(body);
  const first = f.get(1);
  const second = f.get(2);
  switch (kind) {
    case "pubKeyRequest":
      return { kind, chainId: utf8(first) };
    case "pubKeyResponse":
      if (second !== undefined) return { kind, error: decodeRemoteSignerError(second) };
      return first === undefined ? { kind } : { kind, pubKey: decodePubKey(first) };
    case "signVoteRequest":
      return first === undefined
        ? { kind, chainId: utf8(second) }
        : { kind, chainId: utf8(second), vote: decodeVote(first) };
    case "signedVoteResponse":
      if (second !== undefined) return { kind, error: decodeRemoteSignerError(second) };
      return first === undefined ? { kind } : { kind, vote: decodeVote(first) };
    case "signProposalRequest":
      return first === undefined
        ? { kind, chainId: utf8(second) }
        : { kind, chainId: utf8(second), proposal: decodeProposal(first) };
    case "signedProposalResponse":
      if (second !== undefined) return { kind, error: decodeRemoteSignerError(second) };
      return first === undefined ? { kind } : { kind, proposal: decodeProposal(first) };
    case "pingRequest":
    case "pingResponse":
      return { kind };
  }
}

/** Every inner message has at most fields 1 and 2, both length-delimited; others are skipped. */
function readFields(body: Uint8Array): Map<number, Uint8Array> {
  const r = new BinaryReader(body);
  const fields = new Map<number, Uint8Array>();
  while (r.pos < r.len) {
    const [field, wireType] = r.tag();
    if (wireType === WireType.Bytes) fields.set(field, r.bytes());
    else r.skipType(wireType);
  }
  return fields;
}

const UTF8 = new TextDecoder();

function utf8(b: Uint8Array | undefined): string {
  return b === undefined ? "" : UTF8.decode(b);
}

function decodeRemoteSignerError(b: Uint8Array): RemoteSignerErrorInfo {
  const r = new BinaryReader(b);
  let code = 0;
  let description = "";
  while (r.pos < r.len) {
    const [field, wireType] = r.tag();
    if (field === 1 && wireType === WireType.Varint) code = r.int32();
    else if (field === 2 && wireType === WireType.Bytes) description = r.string();
    else r.skipType(wireType);
  }
  return { code, description };
}

function tag(field: number, wireType: WireType = WireType.Bytes): number {
  return (field << 3) | wireType;
}

function writeString(w: BinaryWriter, field: number, s: string): void {
  if (s !== "") w.uint32(tag(field)).string(s);
}

function writeError(w: BinaryWriter, e: RemoteSignerErrorInfo | undefined): void {
  if (e === undefined) return;
  const inner = new BinaryWriter();
  if (e.code !== 0) inner.uint32(tag(1, WireType.Varint)).int32(e.code);
  if (e.description !== "") inner.uint32(tag(2)).string(e.description);
  w.uint32(tag(2)).bytes(inner.finish());
}
