/** Test chains for the block store tests and the kill -9 child process. Not used by production code. */
import {
  BLOCK_ID_FLAG,
  type Block,
  type BlockId,
  blockId,
  type Commit,
  commitHash,
  dataHash,
  emptyCommit,
  makePartSet,
  type PartSet,
  zeroBlockId,
} from "../../types/index.js";

export interface TestBlock {
  block: Block;
  parts: PartSet;
  id: BlockId;
  seenCommit: Commit;
}

function filled(n: number, byte: number): Uint8Array {
  return new Uint8Array(n).fill(byte);
}

export function makeTestCommit(height: number, id: BlockId, round = 0): Commit {
  return {
    height,
    round,
    blockId: id,
    signatures: [
      {
        blockIdFlag: BLOCK_ID_FLAG.commit,
        validatorAddress: filled(20, 0xaa),
        timestamp: 1_700_000_000_000_000_000n + BigInt(height) * 1_000_000_000n,
        signature: filled(64, height % 256),
      },
      {
        blockIdFlag: BLOCK_ID_FLAG.absent,
        validatorAddress: new Uint8Array(),
        timestamp: 0n,
        signature: new Uint8Array(),
      },
    ],
  };
}

/** Builds a block on top of `prev` (or the first block); `txs` defaults to one small tx. */
export function makeTestBlock(height: number, prev: TestBlock | undefined, txs?: Uint8Array[]): TestBlock {
  const blockTxs = txs ?? [new TextEncoder().encode(`tx-${height}`)];
  const lastCommit = prev === undefined ? emptyCommit() : prev.seenCommit;
  const block: Block = {
    header: {
      version: { block: 11n, app: 1n },
      chainId: "test-chain",
      height,
      time: 1_700_000_000_000_000_000n + BigInt(height) * 1_000_000_000n,
      lastBlockId: prev === undefined ? zeroBlockId() : prev.id,
      lastCommitHash: commitHash(lastCommit),
      dataHash: dataHash(blockTxs),
      validatorsHash: filled(32, 1),
      nextValidatorsHash: filled(32, 1),
      consensusHash: filled(32, 2),
      appHash: filled(32, height % 256),
      lastResultsHash: prev === undefined ? new Uint8Array() : filled(32, 3),
      evidenceHash: dataHash([]),
      proposerAddress: filled(20, 0xaa),
    },
    data: { txs: blockTxs },
    evidence: [],
    lastCommit,
  };
  const parts = makePartSet(block);
  const id = blockId(block, parts);
  return { block, parts, id, seenCommit: makeTestCommit(height, id, 1) };
}

/** Blocks first..last, chained. */
export function makeTestChain(last: number, first = 1): TestBlock[] {
  const out: TestBlock[] = [];
  let prev: TestBlock | undefined;
  for (let h = first; h <= last; h++) {
    prev = makeTestBlock(h, prev);
    out.push(prev);
  }
  return out;
}
