import { decodePart, decodeProposal, decodeVote, encodePart, encodeProposal, encodeVote } from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import { WalCorruptionError } from "./errors.js";
import type { StateMachineMessage } from "./messages.js";
import { isRoundStep, type RoundStep } from "./roundStep.js";
import type { TimeoutInfo } from "./ticker.js";

/**
 * WAL records (consensus/wal.go TimedWALMessage) and their binary form. The framing follows
 * CometBFT (4-byte checksum, 4-byte length, data, big-endian); the data is this project's own compact
 * encoding (not CometBFT's protobuf), with votes, proposals and parts in their types/ protobuf bytes.
 */
export type WalMessage =
  | { kind: "roundState"; height: number; round: number; step: RoundStep }
  | { kind: "msgInfo"; peerId: string; msg: StateMachineMessage }
  | { kind: "timeout"; timeout: TimeoutInfo }
  | { kind: "endHeight"; height: number };

export interface TimedWalMessage {
  time: Timestamp;
  msg: WalMessage;
}

/** maxMsgSizeBytes in wal.go: 1 MiB plus the TimedWALMessage overhead. */
export const MAX_WAL_MSG_BYTES = 1024 * 1024 + 24;

const KIND = { roundState: 1, msgInfo: 2, timeout: 3, endHeight: 4 } as const;
const MSG_KIND = { proposal: 1, blockPart: 2, vote: 3 } as const;

/**
 * Writes a record into one buffer (grown by doubling), starting after `reserve` bytes the caller fills
 * (frameWalRecord's checksum and length): a height writes several records, each once.
 */
class Writer {
  #buf: Buffer;
  #len: number;
  constructor(reserve: number) {
    this.#buf = Buffer.allocUnsafe(Math.max(256, reserve + 64));
    this.#len = reserve;
  }
  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(grown, 0, 0, this.#len);
    this.#buf = grown;
  }
  u8(n: number): this {
    this.#room(1);
    this.#buf[this.#len++] = n & 0xff;
    return this;
  }
  u32(n: number): this {
    this.#room(4);
    this.#buf.writeUInt32BE(n >>> 0, this.#len);
    this.#len += 4;
    return this;
  }
  i64(n: bigint): this {
    this.#room(8);
    this.#buf.writeBigInt64BE(n, this.#len);
    this.#len += 8;
    return this;
  }
  int(n: number): this {
    return this.i64(BigInt(n));
  }
  bytes(b: Uint8Array): this {
    this.u32(b.length);
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
    return this;
  }
  str(s: string): this {
    return this.bytes(Buffer.from(s, "utf8"));
  }
  /** The bytes written, reserved ones included (a view of this writer's own buffer). */
  done(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }
}

class Reader {
  #off = 0;
  readonly #buf: Buffer;
  constructor(data: Uint8Array) {
    this.#buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
  #need(n: number): void {
    if (this.#off + n > this.#buf.length)
      throw new WalCorruptionError("WAL record ends early. Repair drops the torn tail");
  }
  u8(): number {
    this.#need(1);
    return this.#buf.readUInt8(this.#off++);
  }
  u32(): number {
    this.#need(4);
    const v = this.#buf.readUInt32BE(this.#off);
    this.#off += 4;
    return v;
  }
  i64(): bigint {
    this.#need(8);
    const v = this.#buf.readBigInt64BE(this.#off);
    this.#off += 8;
    return v;
  }
  int(): number {
    return Number(this.i64());
  }
  bytes(): Uint8Array {
    const n = this.u32();
    this.#need(n);
    const out = new Uint8Array(this.#buf.subarray(this.#off, this.#off + n));
    this.#off += n;
    return out;
  }
  str(): string {
    return Buffer.from(this.bytes()).toString("utf8");
  }
  end(): void {
    if (this.#off !== this.#buf.length) throw new WalCorruptionError("WAL record has trailing bytes");
  }
}

function step(n: number): RoundStep {
  if (!isRoundStep(n)) throw new WalCorruptionError(`WAL record has an unknown round step ${n}`);
  return n;
}

/** The record's bytes, after `reserve` bytes left for the caller to fill (frameWalRecord's header). */
export function encodeWalMessage(m: TimedWalMessage, reserve = 0): Buffer {
  const w = new Writer(reserve).i64(m.time);
  const msg = m.msg;
  switch (msg.kind) {
    case "roundState":
      w.u8(KIND.roundState).int(msg.height).int(msg.round).u8(msg.step);
      break;
    case "timeout":
      w.u8(KIND.timeout)
        .int(msg.timeout.durationMs)
        .int(msg.timeout.height)
        .int(msg.timeout.round)
        .u8(msg.timeout.step);
      break;
    case "endHeight":
      w.u8(KIND.endHeight).int(msg.height);
      break;
    case "msgInfo": {
      w.u8(KIND.msgInfo).str(msg.peerId);
      const inner = msg.msg;
      if (inner.kind === "proposal") w.u8(MSG_KIND.proposal).bytes(encodeProposal(inner.proposal));
      else if (inner.kind === "vote") w.u8(MSG_KIND.vote).bytes(encodeVote(inner.vote));
      else w.u8(MSG_KIND.blockPart).int(inner.height).int(inner.round).bytes(encodePart(inner.part));
      break;
    }
  }
  return w.done();
}

export function decodeWalMessage(data: Uint8Array): TimedWalMessage {
  const r = new Reader(data);
  const time = r.i64();
  const kind = r.u8();
  let msg: WalMessage;
  try {
    switch (kind) {
      case KIND.roundState:
        msg = { kind: "roundState", height: r.int(), round: r.int(), step: step(r.u8()) };
        break;
      case KIND.timeout:
        msg = {
          kind: "timeout",
          timeout: { durationMs: r.int(), height: r.int(), round: r.int(), step: step(r.u8()) },
        };
        break;
      case KIND.endHeight:
        msg = { kind: "endHeight", height: r.int() };
        break;
      case KIND.msgInfo: {
        const peerId = r.str();
        const mk = r.u8();
        if (mk === MSG_KIND.proposal)
          msg = { kind: "msgInfo", peerId, msg: { kind: "proposal", proposal: decodeProposal(r.bytes()) } };
        else if (mk === MSG_KIND.vote)
          msg = { kind: "msgInfo", peerId, msg: { kind: "vote", vote: decodeVote(r.bytes()) } };
        else if (mk === MSG_KIND.blockPart) {
          const height = r.int();
          const round = r.int();
          msg = { kind: "msgInfo", peerId, msg: { kind: "blockPart", height, round, part: decodePart(r.bytes()) } };
        } else throw new WalCorruptionError(`WAL record has an unknown message kind ${mk}`);
        break;
      }
      default:
        throw new WalCorruptionError(`WAL record has an unknown kind ${kind}`);
    }
  } catch (err) {
    if (err instanceof WalCorruptionError) throw err;
    throw new WalCorruptionError(`WAL record does not decode: ${(err as Error).message}`, { cause: err });
  }
  r.end();
  return { time, msg };
}
