/** Identifies a block: header hash plus the header of its part set. */
export interface PartSetHeader {
  total: number;
  hash: Uint8Array;
}

export interface BlockId {
  hash: Uint8Array;
  partSetHeader: PartSetHeader;
}
