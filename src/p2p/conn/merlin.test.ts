import { describe, expect, test } from "vitest";
import { bytesToHex, utf8ToBytes } from "../../util/bytes.js";
import { MerlinTranscript } from "./merlin.js";

describe("MerlinTranscript", () => {
  test("default: merlin's published simple-transcript vector", () => {
    const t = new MerlinTranscript("test protocol");
    t.appendMessage("some label", utf8ToBytes("some data"));
    expect(bytesToHex(t.extractBytes("challenge", 32))).toBe(
      "d5a21972d0d5fe320c0d263fac7fffb8145aa640af6e9bca177c03c7efcf0615",
    );
  });

  test("behavior: messages longer than the STROBE rate and repeated challenges (merlin complex vector)", () => {
    const t = new MerlinTranscript("test protocol");
    t.appendMessage("step1", utf8ToBytes("some data"));
    const data = new Uint8Array(1024).fill(0x63);
    let chl: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < 32; i++) {
      chl = t.extractBytes("challenge", 32);
      t.appendMessage("bigdata", data);
      t.appendMessage("challengedata", chl);
    }
    expect(bytesToHex(chl)).toBe("a8c933f54fae76e3f9bea93648c1308e7dfa2152dd51674ff3ca438351cf003c");
  });
});
