import { describe, expect, test } from "vitest";
import { utf8ToBytes } from "../util/bytes.js";
import { parseRfc3339, type Timestamp } from "../util/time.js";
import {
  BLOCK_ID_FLAG,
  type Block,
  blockId,
  commitHash,
  commitSigToVote,
  type DuplicateVoteEvidence,
  dataHash,
  decodeBlock,
  decodeCommit,
  decodeEvidence,
  decodePart,
  defaultConsensusParams,
  emptyCommit,
  encodeBlock,
  encodeCommit,
  encodeEvidence,
  encodePart,
  evidenceHash,
  generateEd25519PrivKey,
  hashConsensusParams,
  headerHash,
  headerHashLeaves,
  IncompletePartSetError,
  InvalidBlockError,
  InvalidEvidenceError,
  InvalidPartError,
  makePartSet,
  maxDataBytes,
  newDuplicateVoteEvidence,
  PartSet,
  ProtoDecodeError,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  sha256,
  signBytes,
  txHash,
  txHashHex,
  ValidatorSet,
  type Vote,
  validateBlockBasic,
  validateEvidenceBasic,
  voteSignBytes,
  zeroBlockId,
} from "./index.js";
import { addressFromPubKey } from "./keys.js";
import { hashFromByteSlices } from "./merkle.js";

const CHAIN = "test-chain";
const T0 = parseRfc3339("2024-01-01T00:00:00Z") as Timestamp;

const priv = generateEd25519PrivKey(sha256(utf8ToBytes("block-test")));
const pub = pubKeyFromPrivKey(priv);
const vals = ValidatorSet.create([
  { address: addressFromPubKey(pub), pubKey: pub, votingPower: 10n, proposerPriority: 0n },
]);

function vote(blockHash: string, sign = true): Vote {
  const v: Vote = {
    type: SIGNED_MSG_TYPE.prevote,
    height: 3,
    round: 0,
    blockId: { hash: sha256(utf8ToBytes(blockHash)), partSetHeader: { total: 1, hash: sha256(utf8ToBytes("p")) } },
    timestamp: T0,
    validatorAddress: addressFromPubKey(pub),
    validatorIndex: 0,
    signature: new Uint8Array(0),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
  if (sign) v.signature = signBytes(priv, voteSignBytes(CHAIN, v));
  return v;
}

/** A height-4 block with txs, one piece of evidence and a signed last commit. */
function sampleBlock(txs: Uint8Array[]): Block {
  const lastBlockId = {
    hash: sha256(utf8ToBytes("prev")),
    partSetHeader: { total: 2, hash: sha256(utf8ToBytes("prev-parts")) },
  };
  const lastCommit = {
    height: 3,
    round: 1,
    blockId: lastBlockId,
    signatures: [
      {
        blockIdFlag: BLOCK_ID_FLAG.commit,
        validatorAddress: addressFromPubKey(pub),
        timestamp: T0 + 5n,
        signature: new Uint8Array(0),
      },
    ],
  } as Block["lastCommit"];
  const sig = lastCommit.signatures[0];
  if (sig) sig.signature = signBytes(priv, voteSignBytes(CHAIN, commitSigToVote(lastCommit, 0)));
  const evidence = [newDuplicateVoteEvidence(vote("a"), vote("b"), T0, vals)];
  return {
    header: {
      version: { block: 11n, app: 1n },
      chainId: CHAIN,
      height: 4,
      time: T0 + 1_000_000_123n,
      lastBlockId,
      lastCommitHash: commitHash(lastCommit),
      dataHash: dataHash(txs),
      validatorsHash: vals.hash(),
      nextValidatorsHash: vals.hash(),
      consensusHash: hashConsensusParams(defaultConsensusParams()),
      appHash: utf8ToBytes("app-hash-of-any-length"),
      lastResultsHash: sha256(new Uint8Array(0)),
      evidenceHash: evidenceHash(evidence),
      proposerAddress: addressFromPubKey(pub),
    },
    data: { txs },
    evidence,
    lastCommit,
  };
}

describe("block encoding", () => {
  test("default: encode/decode round trip", () => {
    const b = sampleBlock([utf8ToBytes("a=1"), new Uint8Array(300).fill(7), utf8ToBytes("")]);
    const bytes = encodeBlock(b);
    const back = decodeBlock(bytes);
    expect(back).toEqual(b);
    expect(encodeBlock(back)).toEqual(bytes);
    expect(headerHash(back.header)).toEqual(headerHash(b.header));
  });

  test("behavior: large txs survive the round trip byte for byte", () => {
    const big = new Uint8Array(200_000).map((_, i) => i % 253);
    const bytes = encodeBlock(sampleBlock([big, utf8ToBytes("x")]));
    const back = decodeBlock(bytes);
    expect(Buffer.compare(back.data.txs[0] as Uint8Array, big)).toBe(0);
    expect(Buffer.compare(encodeBlock(back), bytes)).toBe(0);
  });

  test("default: commit and evidence round trip", () => {
    const b = sampleBlock([]);
    expect(decodeCommit(encodeCommit(b.lastCommit))).toEqual(b.lastCommit);
    const ev = b.evidence[0] as DuplicateVoteEvidence;
    expect(decodeEvidence(encodeEvidence(ev))).toEqual(ev);
  });

  test("behavior: the block's part set rebuilds the block and names its id", () => {
    const b = sampleBlock([new Uint8Array(150_000).fill(1)]);
    const parts = makePartSet(b);
    const bytes = encodeBlock(b);
    expect(parts.total).toBe(3);
    const id = blockId(b, parts);
    expect(id.hash).toEqual(headerHash(b.header));
    const receiver = PartSet.fromHeader(id.partSetHeader);
    for (let i = parts.total - 1; i >= 0; i--) {
      expect(
        receiver.addPart(decodePart(encodePart(parts.getPart(i) as NonNullable<ReturnType<PartSet["getPart"]>>))),
      ).toBe(true);
    }
    expect(receiver.isComplete()).toBe(true);
    expect(Buffer.compare(receiver.bytes(), bytes)).toBe(0);
    expect(decodeBlock(receiver.bytes()).header).toEqual(b.header);
  });

  test("behavior: header hash follows field changes", () => {
    const b = sampleBlock([]);
    const h1 = headerHash(b.header);
    expect(headerHash(b.header)).toEqual(h1);
    b.header.height = 5;
    expect(headerHash(b.header)).not.toEqual(h1);
    b.header.height = 4;
    expect(headerHash(b.header)).toEqual(h1);
    b.header.lastBlockId = zeroBlockId();
    expect(headerHash(b.header)).not.toEqual(h1);
  });

  test("behavior: header hashes reuse unchanged leaves by value, never a stale one", () => {
    // Reference: the merkle root over the 14 leaves, computed without any memo.
    const plainHash = (h: Block["header"]) => hashFromByteSlices(headerHashLeaves(h));
    const b = sampleBlock([]);
    const byteFields = [
      "lastCommitHash",
      "dataHash",
      "validatorsHash",
      "nextValidatorsHash",
      "consensusHash",
      "appHash",
      "lastResultsHash",
      "evidenceHash",
      "proposerAddress",
    ] as const;
    const next = (i: number) => {
      // A new header object per step, each changing one field (or none), as consecutive blocks do.
      const h = { ...b.header, lastBlockId: { ...b.header.lastBlockId } };
      if (i % 12 === 0) h.height += i;
      if (i % 12 === 1) h.time += BigInt(i);
      if (i % 12 === 2) h.chainId = `chain-${i}`;
      if (i % 12 === 3) h.version = { block: 11n, app: BigInt(i) };
      if (i % 12 === 4)
        h.lastBlockId = {
          hash: sha256(Uint8Array.of(i)),
          partSetHeader: { total: i, hash: sha256(Uint8Array.of(i, 1)) },
        };
      if (i % 12 >= 5) {
        const f = byteFields[(i * 7) % byteFields.length] as (typeof byteFields)[number];
        h[f] = sha256(Uint8Array.of(i, 2)).subarray(0, f === "proposerAddress" ? 20 : 32);
      }
      return h;
    };
    for (let i = 0; i < 40; i++) {
      const h = next(i);
      expect(headerHash(h)).toEqual(plainHash(h));
      expect(headerHash({ ...h })).toEqual(plainHash(h));
    }
    // The bytes of a field hashed before, changed in place and hashed in a new header, are new bytes.
    const h = next(100);
    const first = headerHash(h);
    h.appHash.fill(0xee);
    const again = { ...h };
    expect(headerHash(again)).toEqual(plainHash(again));
    expect(headerHash(again)).not.toEqual(first);
  });

  test("error: garbage bytes", () => {
    expect(() => decodeBlock(new Uint8Array([0x0a, 0xff, 0xff, 0x01]))).toThrow(ProtoDecodeError);
  });
});

describe("tx and data hashes (memoized per object)", () => {
  test("txHash is sha256 of the bytes, the same for equal bytes in another object", () => {
    const a = utf8ToBytes("tx-a");
    expect(txHash(a)).toEqual(sha256(a));
    expect(txHash(a)).toBe(txHash(a));
    expect(txHash(utf8ToBytes("tx-a"))).toEqual(txHash(a));
    // the hex key (mempool, EVM app) is the same hash
    expect(txHashHex(a)).toBe(Buffer.from(sha256(a)).toString("hex"));
    expect(txHashHex(utf8ToBytes("tx-b"))).not.toBe(txHashHex(a));
  });

  test("dataHash follows the array's current txs: appended, replaced and removed txs change it", () => {
    const txs = [utf8ToBytes("1"), utf8ToBytes("2")];
    const merkle = (list: Uint8Array[]) => hashFromByteSlices(list.map(sha256));
    expect(dataHash(txs)).toEqual(merkle(txs));
    txs[1] = utf8ToBytes("3");
    expect(dataHash(txs)).toEqual(merkle([utf8ToBytes("1"), utf8ToBytes("3")]));
    txs.push(utf8ToBytes("4"));
    expect(dataHash(txs)).toEqual(merkle(txs));
    txs.length = 0;
    expect(dataHash(txs)).toEqual(sha256(new Uint8Array(0)));
  });

  test("commitHash follows the commit's current signatures: an added, replaced or changed one changes it", () => {
    const commit = sampleBlock([]).lastCommit;
    const first = commitHash(commit);
    expect(commitHash(commit)).toEqual(first);
    const sig = commit.signatures[0] as (typeof commit.signatures)[number];
    sig.timestamp += 1n;
    const second = commitHash(commit);
    expect(second).not.toEqual(first);
    commit.signatures[0] = { ...sig, signature: new Uint8Array(64).fill(1) };
    const third = commitHash(commit);
    expect(third).not.toEqual(second);
    commit.signatures.push({ ...sig, blockIdFlag: BLOCK_ID_FLAG.absent, signature: new Uint8Array(0) });
    expect(commitHash(commit)).not.toEqual(third);
    // The same signatures in a fresh array hash the same, memo or not.
    expect(commitHash({ ...commit, signatures: [...commit.signatures] })).toEqual(commitHash(commit));
  });
});

describe("validateBlockBasic", () => {
  test("default: a well-formed block passes", () => {
    expect(() => validateBlockBasic(sampleBlock([utf8ToBytes("tx")]))).not.toThrow();
  });

  test("default: the genesis-height shape passes (empty last commit)", () => {
    const b = sampleBlock([]);
    b.lastCommit = emptyCommit();
    b.header.lastCommitHash = commitHash(b.lastCommit);
    b.header.lastBlockId = zeroBlockId();
    expect(() => validateBlockBasic(b)).not.toThrow();
  });

  test("error: data hash does not match the txs", () => {
    const b = sampleBlock([utf8ToBytes("tx")]);
    b.data.txs.push(utf8ToBytes("extra"));
    expect(() => validateBlockBasic(b)).toThrow(/^wrong Header.DataHash. Expected [0-9A-F]{64}, got [0-9A-F]{64}$/);
  });

  test("error: last commit hash does not match", () => {
    const b = sampleBlock([]);
    b.header.lastCommitHash = sha256(utf8ToBytes("x"));
    expect(() => validateBlockBasic(b)).toThrow(/^wrong Header.LastCommitHash/);
  });

  test("error: evidence hash does not match", () => {
    const b = sampleBlock([]);
    b.evidence = [];
    expect(() => validateBlockBasic(b)).toThrow(/^wrong Header.EvidenceHash/);
  });

  test("error: header field sizes", () => {
    const cases: [(b: Block) => void, string][] = [
      [(b) => (b.header.version.block = 10n), "invalid header: block protocol is incorrect: got: 10, want: 11 "],
      [(b) => (b.header.chainId = "c".repeat(51)), "invalid header: chainID is too long; got: 51, max: 50"],
      [(b) => (b.header.height = 0), "invalid header: zero Height"],
      [
        (b) => (b.header.proposerAddress = new Uint8Array(19)),
        "invalid header: invalid ProposerAddress length; got: 19, expected: 20",
      ],
      [
        (b) => (b.header.validatorsHash = new Uint8Array(31)),
        "invalid header: wrong ValidatorsHash: expected size to be 32 bytes, got 31 bytes",
      ],
    ];
    for (const [mutate, message] of cases) {
      const b = sampleBlock([]);
      mutate(b);
      expect(() => validateBlockBasic(b)).toThrow(new InvalidBlockError(message));
    }
  });

  test("error: malformed last commit", () => {
    const b = sampleBlock([]);
    const sig = b.lastCommit.signatures[0];
    if (sig) sig.timestamp = T0;
    b.lastCommit.signatures.push({
      blockIdFlag: BLOCK_ID_FLAG.absent,
      validatorAddress: new Uint8Array(0),
      timestamp: T0,
      signature: new Uint8Array(0),
    });
    b.header.lastCommitHash = commitHash(b.lastCommit);
    expect(() => validateBlockBasic(b)).toThrow("wrong LastCommit: wrong CommitSig #1: time is present");
  });

  test("error: evidence votes out of order", () => {
    const b = sampleBlock([]);
    const ev = b.evidence[0] as DuplicateVoteEvidence;
    b.evidence = [{ ...ev, voteA: ev.voteB, voteB: ev.voteA }];
    b.header.evidenceHash = evidenceHash(b.evidence);
    expect(() => validateBlockBasic(b)).toThrow("invalid evidence (#0): duplicate votes in invalid order");
    expect(() => validateEvidenceBasic(b.evidence[0] as DuplicateVoteEvidence)).toThrow(InvalidEvidenceError);
  });
});

describe("PartSet", () => {
  const data = new Uint8Array(10_000).map((_, i) => i % 251);

  test("default: fromData splits, proves and reassembles", () => {
    const ps = PartSet.fromData(data, 1024);
    expect(ps.total).toBe(10);
    expect(ps.isComplete()).toBe(true);
    expect(ps.bitArray().toCompactString()).toBe("xxxxxxxxxx");
    const rx = PartSet.fromHeader(ps.header(), 1024);
    expect(rx.isComplete()).toBe(false);
    for (let i = 0; i < ps.total; i++)
      expect(rx.addPart(ps.getPart(i) as NonNullable<ReturnType<PartSet["getPart"]>>)).toBe(true);
    expect(rx.count()).toBe(10);
    expect(rx.byteSize()).toBe(data.length);
    expect(rx.bytes()).toEqual(data);
  });

  test("behavior: a duplicate part returns false", () => {
    const ps = PartSet.fromData(data, 1024);
    const rx = PartSet.fromHeader(ps.header(), 1024);
    const p = ps.getPart(3) as NonNullable<ReturnType<PartSet["getPart"]>>;
    expect(rx.addPart(p)).toBe(true);
    expect(rx.addPart(p)).toBe(false);
    expect(rx.bitArray().toCompactString()).toBe("___x______");
  });

  test("error: tampered bytes, bad proof, wrong index", () => {
    const ps = PartSet.fromData(data, 1024);
    const rx = PartSet.fromHeader(ps.header(), 1024);
    const p = ps.getPart(2) as NonNullable<ReturnType<PartSet["getPart"]>>;
    const tampered = { ...p, bytes: p.bytes.map((b, i) => (i === 0 ? b ^ 1 : b)) };
    expect(() => rx.addPart(tampered)).toThrow(InvalidPartError);
    const badAunt = { ...p, proof: { ...p.proof, aunts: p.proof.aunts.map((a, i) => (i === 0 ? sha256(a) : a)) } };
    expect(() => rx.addPart(badAunt)).toThrow(InvalidPartError);
    const other = PartSet.fromData(new Uint8Array(10_000), 1024).getPart(2) as typeof p;
    expect(() => rx.addPart(other)).toThrow(InvalidPartError);
    expect(() => rx.addPart({ ...p, index: 10 })).toThrow(/unexpected index/);
    expect(() => rx.addPart({ ...p, index: 3 })).toThrow(/part index 3 != proof index 2/);
    expect(rx.count()).toBe(0);
  });

  test("error: bytes before complete", () => {
    const rx = PartSet.fromHeader(PartSet.fromData(data, 1024).header(), 1024);
    expect(() => rx.bytes()).toThrow(IncompletePartSetError);
  });
});

describe("maxDataBytes", () => {
  test("default: default params, one validator", () => {
    // 22020096 - 11 - 626 - (94 + 111) - 0
    expect(maxDataBytes(22020096, 0, 1)).toBe(22019254);
  });
  test("error: too small", () => {
    expect(() => maxDataBytes(100, 0, 1)).toThrow(InvalidBlockError);
  });
});
