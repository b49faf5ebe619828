import { describe, expect, test } from "vitest";
import { bytesToHex, hexToBytes, utf8ToBytes } from "../util/bytes.js";
import { InvalidStatesyncMessageError } from "./errors.js";
import { decodeStatesyncMessage, encodeStatesyncMessage, type StatesyncMessage } from "./statesyncCodec.js";
import vectors from "./statesyncVectors.json" with { type: "json" };

/** The vectors name byte fields as text (CometBFT's statesync/messages_test.go TestStateSyncVectors). */
function fromVector(msg: Record<string, unknown>): StatesyncMessage {
  const out: Record<string, unknown> = { ...msg };
  for (const k of ["hash", "metadata", "chunk"]) if (typeof out[k] === "string") out[k] = utf8ToBytes(out[k] as string);
  return out as unknown as StatesyncMessage;
}

describe("statesync codec", () => {
  for (const v of vectors) {
    test(`default: ${v.name} encodes as CometBFT does`, () => {
      const msg = fromVector(v.msg);
      expect(bytesToHex(encodeStatesyncMessage(msg))).toBe(v.hex);
      expect(decodeStatesyncMessage(hexToBytes(v.hex) as Uint8Array)).toEqual(msg);
    });
  }

  test("behavior: a missing chunk round-trips", () => {
    const msg: StatesyncMessage = {
      kind: "chunkResponse",
      height: 9,
      format: 1,
      index: 0,
      chunk: new Uint8Array(0),
      missing: true,
    };
    expect(decodeStatesyncMessage(encodeStatesyncMessage(msg))).toEqual(msg);
  });

  test("error: messages that validateMsg refuses", () => {
    const bad: [StatesyncMessage, string][] = [
      [
        {
          kind: "snapshotsResponse",
          height: 0,
          format: 1,
          chunks: 1,
          hash: utf8ToBytes("h"),
          metadata: new Uint8Array(0),
        },
        "snapshot height cannot be 0",
      ],
      [
        {
          kind: "snapshotsResponse",
          height: 1,
          format: 1,
          chunks: 1,
          hash: new Uint8Array(0),
          metadata: new Uint8Array(0),
        },
        "snapshot has no hash",
      ],
      [
        {
          kind: "snapshotsResponse",
          height: 1,
          format: 1,
          chunks: 0,
          hash: utf8ToBytes("h"),
          metadata: new Uint8Array(0),
        },
        "snapshot has no chunks",
      ],
      [{ kind: "chunkRequest", height: 0, format: 1, index: 0 }, "height cannot be 0"],
      [
        { kind: "chunkResponse", height: 1, format: 1, index: 0, chunk: utf8ToBytes("x"), missing: true },
        "missing chunk cannot have contents",
      ],
    ];
    for (const [msg, text] of bad) {
      expect(() => decodeStatesyncMessage(encodeStatesyncMessage(msg))).toThrow(new InvalidStatesyncMessageError(text));
    }
    expect(() => decodeStatesyncMessage(Uint8Array.of(0x0a, 0x05))).toThrow(InvalidStatesyncMessageError);
    expect(() => decodeStatesyncMessage(new Uint8Array(0))).toThrow("unknown statesync message type");
  });
});
