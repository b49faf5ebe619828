/**
 * The block's plain shapes (Header, Data, CommitSig, Commit, Block, BlockMeta) and the BlockIDFlag
 * values. Declarations only: protoCodec.ts and the hashing and validation in block.ts and commit.ts
 * import them, never the other way.
 */
import type { Timestamp } from "../util/time.js";
import type { BlockId } from "./blockId.js";
import type { Evidence } from "./evidenceTypes.js";

export const BLOCK_ID_FLAG = { absent: 1, commit: 2, nil: 3 } as const;
export type BlockIdFlag = (typeof BLOCK_ID_FLAG)[keyof typeof BLOCK_ID_FLAG];

export interface Header {
  version: { block: bigint; app: bigint };
  chainId: string;
  height: number;
  time: Timestamp;
  lastBlockId: BlockId;
  lastCommitHash: Uint8Array;
  dataHash: Uint8Array;
  validatorsHash: Uint8Array;
  nextValidatorsHash: Uint8Array;
  consensusHash: Uint8Array;
  appHash: Uint8Array;
  lastResultsHash: Uint8Array;
  evidenceHash: Uint8Array;
  proposerAddress: Uint8Array;
}

export interface Data {
  txs: Uint8Array[];
}

export interface CommitSig {
  blockIdFlag: BlockIdFlag;
  validatorAddress: Uint8Array;
  timestamp: Timestamp;
  signature: Uint8Array;
}

export interface Commit {
  height: number;
  round: number;
  blockId: BlockId;
  signatures: CommitSig[];
}

export interface Block {
  header: Header;
  data: Data;
  evidence: Evidence[];
  lastCommit: Commit;
}

/** What the block store keeps per height besides the block itself. */
export interface BlockMeta {
  blockId: BlockId;
  blockSize: number;
  header: Header;
  numTxs: number;
}
