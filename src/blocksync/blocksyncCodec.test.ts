import { describe, expect, test } from "vitest";
import { BLOCK_ID_FLAG, type Block, encodeBlock, sha256 } from "../types/index.js";
import { bytesToHex, hexToBytes, utf8ToBytes } from "../util/bytes.js";
import { type BlocksyncMessage, decodeBlocksyncMessage, encodeBlocksyncMessage } from "./blocksyncCodec.js";
import vectors from "./blocksyncVectors.json" with { type: "json" };
import { InvalidBlocksyncMessageError } from "./errors.js";

function sampleBlock(height: number): Block {
  const lastBlockId = {
    hash: sha256(utf8ToBytes("prev")),
    partSetHeader: { total: 1, hash: sha256(utf8ToBytes("p")) },
  };
  return {
    header: {
      version: { block: 11n, app: 1n },
      chainId: "test-chain",
      height,
      time: 1_700_000_000_123_456_789n,
      lastBlockId,
      lastCommitHash: sha256(utf8ToBytes("lc")),
      dataHash: sha256(utf8ToBytes("d")),
      validatorsHash: sha256(utf8ToBytes("v")),
      nextValidatorsHash: sha256(utf8ToBytes("nv")),
      consensusHash: sha256(utf8ToBytes("c")),
      appHash: utf8ToBytes("app"),
      lastResultsHash: sha256(new Uint8Array(0)),
      evidenceHash: sha256(new Uint8Array(0)),
      proposerAddress: new Uint8Array(20).fill(3),
    },
    data: { txs: [utf8ToBytes("a=1"), new Uint8Array(1000).fill(9)] },
    evidence: [],
    lastCommit: {
      height: height - 1,
      round: 0,
      blockId: lastBlockId,
      signatures: [
        {
          blockIdFlag: BLOCK_ID_FLAG.commit,
          validatorAddress: new Uint8Array(20).fill(3),
          timestamp: 1_700_000_000_000_000_000n,
          signature: new Uint8Array(64).fill(5),
        },
      ],
    },
  };
}

describe("blocksync codec", () => {
  for (const v of vectors) {
    test(`default: ${v.name} matches the Go encoding`, () => {
      const msg = v.msg as BlocksyncMessage;
      expect(bytesToHex(encodeBlocksyncMessage(msg))).toBe(v.hex);
      expect(decodeBlocksyncMessage(hexToBytes(v.hex) as Uint8Array)).toEqual(msg);
    });
  }

  test("default: block_response embeds tendermint.types.Block and round trips", () => {
    const block = sampleBlock(12);
    const blockBytes = encodeBlock(block);
    const bytes = encodeBlocksyncMessage({ kind: "blockResponse", block });
    // Message.block_response (field 3) → BlockResponse.block (field 1) → the Block bytes, unchanged.
    expect(bytes[0]).toBe(0x1a);
    expect(
      Buffer.from(bytes).includes(Buffer.concat([Buffer.from([0x0a]), varint(blockBytes.length), blockBytes])),
    ).toBe(true);
    const back = decodeBlocksyncMessage(bytes);
    expect(back).toEqual({ kind: "blockResponse", block, blockSize: blockBytes.length });
    if (back.kind !== "blockResponse") return;
    expect(encodeBlock(back.block)).toEqual(blockBytes);
  });

  test("behavior: an ext_commit from a peer is ignored", () => {
    const block = sampleBlock(3);
    const inner = Buffer.concat([
      Buffer.from([0x0a]),
      varint(encodeBlock(block).length),
      encodeBlock(block),
      Buffer.from([0x12, 0x02, 0x08, 0x03]),
    ]);
    const bytes = Buffer.concat([Buffer.from([0x1a]), varint(inner.length), inner]);
    expect(decodeBlocksyncMessage(bytes)).toMatchObject({ kind: "blockResponse", block });
  });

  test("error: negative heights and base above height are refused (ValidateMsg)", () => {
    const bad: BlocksyncMessage[] = [
      { kind: "blockRequest", height: -1 },
      { kind: "noBlockResponse", height: -5 },
      { kind: "statusResponse", height: 3, base: 4 },
      { kind: "statusResponse", height: 3, base: -1 },
    ];
    for (const m of bad) {
      expect(() => decodeBlocksyncMessage(encodeBlocksyncMessage(m)), m.kind).toThrow(InvalidBlocksyncMessageError);
    }
    expect(() =>
      decodeBlocksyncMessage(encodeBlocksyncMessage({ kind: "statusResponse", height: 3, base: 4 })),
    ).toThrowErrorMatchingInlineSnapshot(
      `[InvalidBlocksyncMessageError: invalid height 3: base 4 cannot be greater than height]`,
    );
  });

  test("error: garbage, an empty message and a block response without a block", () => {
    expect(() => decodeBlocksyncMessage(new Uint8Array([0x0a, 0x05, 0x08]))).toThrow(InvalidBlocksyncMessageError);
    expect(() => decodeBlocksyncMessage(new Uint8Array(0))).toThrowErrorMatchingInlineSnapshot(
      `[InvalidBlocksyncMessageError: unknown blocksync message type (no oneof field set)]`,
    );
    expect(() => decodeBlocksyncMessage(new Uint8Array([0x1a, 0x00]))).toThrowErrorMatchingInlineSnapshot(
      `[InvalidBlocksyncMessageError: block response without a block]`,
    );
    expect(() => decodeBlocksyncMessage(new Uint8Array([0x1a, 0x03, 0x0a, 0x01, 0xff]))).toThrow(
      /peer sent us an invalid block/,
    );
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}
