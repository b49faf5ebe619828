import { Request as PbRequest } from "cosmjs-types/tendermint/abci/types";
import { describe, expect, test } from "vitest";
import { encodeFrame, FrameDecoder } from "./codec.js";
import { AbciFrameError } from "./errors.js";

function bytesOf(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

function decodeAll(chunks: Uint8Array[], maxBytes?: number): Uint8Array[] {
  const d = new FrameDecoder(maxBytes);
  return chunks.flatMap((c) => d.push(c));
}

describe("ABCI socket framing", () => {
  test("default: the length prefix is an unsigned varint, as Go's protoio writes it", () => {
    // Request{echo: {message: "hi"}} = 0a 04 0a 02 68 69, behind its length 6.
    const echo = PbRequest.encode({ echo: { message: "hi" } }).finish();
    expect(Buffer.from(encodeFrame(echo)).toString("hex")).toBe("060a040a026869");
    // Request{flush: {}} = 12 00.
    expect(Buffer.from(encodeFrame(PbRequest.encode({ flush: {} }).finish())).toString("hex")).toBe("021200");
    expect(Buffer.from(encodeFrame(bytesOf(300)).subarray(0, 2)).toString("hex")).toBe("ac02");
    expect(Buffer.from(encodeFrame(bytesOf(16_384)).subarray(0, 3)).toString("hex")).toBe("808001");
  });

  test("behavior: round trip over lengths that take 1 to 3 prefix bytes", () => {
    for (const n of [0, 1, 127, 128, 255, 300, 16_383, 16_384, 70_000]) {
      const msg = bytesOf(n, n);
      const out = decodeAll([encodeFrame(msg)]);
      expect(out).toHaveLength(1);
      expect(Buffer.from(out[0] as Uint8Array).equals(Buffer.from(msg))).toBe(true);
    }
  });

  test("behavior: several messages in one chunk come back in order", () => {
    const msgs = [bytesOf(3, 1), bytesOf(0), bytesOf(200, 2), bytesOf(1, 3)];
    const joined = Buffer.concat(msgs.map((m) => encodeFrame(m)));
    const out = decodeAll([joined]);
    expect(out.map((m) => Buffer.from(m).toString("hex"))).toEqual(msgs.map((m) => Buffer.from(m).toString("hex")));
  });

  test("behavior: split at every byte (inside the prefix and inside the body)", () => {
    const msgs = [bytesOf(130, 7), bytesOf(5, 8), bytesOf(300, 9)];
    const joined = Buffer.concat(msgs.map((m) => encodeFrame(m)));
    const want = msgs.map((m) => Buffer.from(m).toString("hex"));
    for (let cut = 0; cut <= joined.length; cut++) {
      const out = decodeAll([joined.subarray(0, cut), joined.subarray(cut)]);
      expect(out.map((m) => Buffer.from(m).toString("hex"))).toEqual(want);
    }
    // One byte at a time.
    const d = new FrameDecoder();
    const out: Uint8Array[] = [];
    for (const b of joined) {
      out.push(...d.push(Uint8Array.of(b)));
    }
    expect(out.map((m) => Buffer.from(m).toString("hex"))).toEqual(want);
    expect(d.pendingBytes).toBe(0);
  });

  test("behavior: a long message in many chunks is held until whole", () => {
    const msg = bytesOf(1_000_000, 5);
    const frame = encodeFrame(msg);
    const d = new FrameDecoder();
    const out: Uint8Array[] = [];
    for (let i = 0; i < frame.length; i += 65_536) {
      out.push(...d.push(frame.subarray(i, i + 65_536)));
      if (i + 65_536 < frame.length) expect(out).toHaveLength(0);
    }
    expect(out).toHaveLength(1);
    expect(Buffer.from(out[0] as Uint8Array).equals(Buffer.from(msg))).toBe(true);
  });

  test("error: a length above the maximum is refused, and the decoder stays failed", () => {
    const d = new FrameDecoder(1000);
    expect(() => d.push(encodeFrame(bytesOf(1001)).subarray(0, 2))).toThrow(AbciFrameError);
    expect(() => d.push(Uint8Array.of(0))).toThrowErrorMatchingInlineSnapshot(
      `[AbciFrameError: message length exceeds the maximum (more than 1000 bytes): the peer does not speak the ABCI socket protocol]`,
    );
    // Go's limit (math.MaxInt32) by default: a 2^31 length is refused before any body arrives.
    expect(() => new FrameDecoder().push(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x08))).toThrow(AbciFrameError);
  });

  test("error: a varint longer than 10 bytes is refused", () => {
    const d = new FrameDecoder();
    expect(() => d.push(new Uint8Array(11).fill(0x80))).toThrowErrorMatchingInlineSnapshot(
      `[AbciFrameError: malformed length prefix (a varint longer than 10 bytes)]`,
    );
  });
});
