import { describe, expect, test } from "vitest";
import type { BlockId } from "../../../types/blockId.js";
import type { GenesisDoc } from "../../../types/genesis.js";
import type { Header } from "../../../types/index.js";
import { formatVote } from "../../../types/index.js";
import type { ConsensusParams } from "../../../types/params.js";
import type { Vote } from "../../../types/vote.js";
import { encodeJson, parseJson } from "../../jsonrpc/index.js";
import type { PeerStateView, RoundStateView, ValidatorSetView, VoteSetView } from "../services.js";
import {
  encodeBlockResults,
  encodeConsensusParamsProto,
  encodeExecTxResultJsonpb,
  encodeExecTxResultOmitEmpty,
  encodeFinalizeBlockEvent,
  encodeInfoResponse,
  encodeQueryResponseJsonpb,
  encodeValidatorUpdate,
} from "./abci.js";
import { encodeEvidence, encodeHeader, encodeProposal } from "./block.js";
import { encodeDumpConsensusState, encodePartSet, formatFraction, voteSetBitArrayString } from "./consensus.js";
import { encodeEventData } from "./events.js";
import { decodeEvidence } from "./evidence.js";
import { genesisChunks } from "./genesis.js";
import { encodeNetInfo } from "./status.js";

/** Small fixed domain objects: these tests check encoders, not a chain. */
const blockIdAt = (n: number): BlockId => ({
  hash: new Uint8Array(32).fill(n),
  partSetHeader: { total: 1, hash: new Uint8Array(32).fill(0x80 + n) },
});
const ADDRESS = new Uint8Array(20).fill(0xaa);
const CONSENSUS_PARAMS: ConsensusParams = {
  block: { maxBytes: 22020096n, maxGas: -1n },
  evidence: { maxAgeNumBlocks: 100000n, maxAgeDurationNs: 172800000000000n, maxBytes: 1048576n },
  validator: { pubKeyTypes: ["ed25519"] },
  version: { app: 0n },
  abci: { voteExtensionsEnableHeight: 0n },
};
const GENESIS: GenesisDoc = {
  genesisTime: 1_704_067_200_000_000_000n,
  chainId: "test-chain",
  initialHeight: 1,
  consensusParams: CONSENSUS_PARAMS,
  validators: [0, 1, 2].map((i) => ({
    address: new Uint8Array(20).fill(i),
    pubKey: { type: "ed25519" as const, bytes: new Uint8Array(32).fill(i) },
    power: 10n,
    name: `val${i}`,
  })),
  appHash: new Uint8Array(0),
  appState: '{ "accounts": [ {"name": "<alice>", "balance": "100"} ], "2": 1, "1": 2 }',
};

const vote = (over: Partial<Vote> = {}): Vote => ({
  type: 2,
  height: 12345,
  round: 2,
  blockId: blockIdAt(1),
  timestamp: 1_514_170_801_234_000_000n,
  validatorAddress: ADDRESS,
  validatorIndex: 56789,
  signature: new Uint8Array(64).fill(7),
  extension: new Uint8Array(0),
  extensionSignature: new Uint8Array(0),
  ...over,
});

describe("consensus text", () => {
  test("default: %.2f fractions round half to even like Go", () => {
    expect(formatFraction(30n, 40n)).toBe("0.75");
    expect(formatFraction(0n, 20n)).toBe("0.00");
    expect(formatFraction(1n, 8n)).toBe("0.12");
    expect(formatFraction(3n, 8n)).toBe("0.38");
    expect(formatFraction(2n, 3n)).toBe("0.67");
    expect(formatFraction(10n, 10n)).toBe("1.00");
    expect(formatFraction(0n, 0n)).toBe("NaN");
  });

  test("default: vote-set bit array string", () => {
    const votes = [vote(), vote(), vote(), undefined];
    expect(voteSetBitArrayString({ votes, sum: 30n, totalVotingPower: 40n, peerMaj23s: new Map() })).toBe(
      "BA{4:xxx_} 30/40 = 0.75",
    );
    expect(voteSetBitArrayString({ votes: [], sum: 0n, totalVotingPower: 0n, peerMaj23s: new Map() })).toBe(
      "BA{0:} 0/0 = NaN",
    );
  });

  test("default: part sets", () => {
    expect(encodePartSet({ total: 3, count: () => 2, bitArray: () => ({ size: 3, get: (i) => i !== 1 }) })).toEqual({
      "count/total": "2/3",
      parts_bit_array: "x_x",
    });
    expect(encodePartSet(undefined)).toBeNull();
  });

  test("default: vote text (types/ formatVote) matches CometBFT's upstream example layout", () => {
    expect(formatVote(vote({ signature: new Uint8Array(0) }))).toMatch(
      /^Vote\{56789:[0-9A-F]{12} 12345\/02\/SIGNED_MSG_TYPE_PRECOMMIT\(Precommit\) [0-9A-F]{12} 000000000000 000000000000 @ 2017-12-25T03:00:01.234Z\}$/,
    );
  });
});

describe("ABCI encodings", () => {
  const result = {
    code: 0,
    data: new Uint8Array(0),
    log: "",
    info: "",
    gasWanted: 0n,
    gasUsed: 0n,
    events: [{ type: "", attributes: [] }],
    codespace: "",
  };

  test("default: jsonpb emits every field, omitempty leaves zeros out", () => {
    expect(encodeJson(encodeExecTxResultJsonpb(result))).toBe(
      '{"code":0,"data":null,"log":"","info":"","gas_wanted":"0","gas_used":"0","events":[{"type":"","attributes":[]}],"codespace":""}',
    );
    expect(encodeJson(encodeExecTxResultOmitEmpty(result))).toBe('{"events":[{}]}');
    expect(encodeJson(encodeExecTxResultOmitEmpty({ ...result, code: 3, events: [] }))).toBe('{"code":3}');
  });

  test("default: NewBlock's result_finalize_block: no validator updates are null, or [] when the app answered an empty list", () => {
    const r = { events: [], txResults: [], validatorUpdates: [], appHash: new Uint8Array([1]) };
    expect(encodeJson(encodeFinalizeBlockEvent(r))).toBe('{"validator_updates":null,"app_hash":"AQ=="}');
    expect(encodeJson(encodeFinalizeBlockEvent({ ...r, validatorUpdatesEmptyList: true }))).toBe(
      '{"validator_updates":[],"app_hash":"AQ=="}',
    );
  });

  test("default: abci_info omits zero fields", () => {
    expect(
      encodeJson(
        encodeInfoResponse({
          data: "",
          version: "",
          appVersion: 0n,
          lastBlockHeight: 0,
          lastBlockAppHash: new Uint8Array(0),
        }),
      ),
    ).toBe("{}");
  });

  test("default: validator updates and proto consensus params", () => {
    expect(
      encodeValidatorUpdate({ pubKey: { type: "secp256k1", bytes: new Uint8Array(33).fill(2) }, power: 0n }),
    ).toEqual({
      pub_key: {
        Sum: {
          type: "tendermint.crypto.PublicKey_Secp256K1",
          value: { secp256k1: Buffer.alloc(33, 2).toString("base64") },
        },
      },
    });
    const zero = {
      block: { maxBytes: 0n, maxGas: 0n },
      evidence: { maxAgeNumBlocks: 0n, maxAgeDurationNs: 0n, maxBytes: 0n },
      validator: { pubKeyTypes: [] },
      version: { app: 0n },
      abci: { voteExtensionsEnableHeight: 0n },
    };
    expect(encodeJson(encodeConsensusParamsProto(zero))).toBe(
      '{"block":{},"evidence":{"max_age_duration":"0"},"validator":{},"version":{},"abci":{}}',
    );
    expect(encodeConsensusParamsProto(CONSENSUS_PARAMS).block).toEqual({ max_bytes: "22020096", max_gas: "-1" });
  });
});

describe("event payloads", () => {
  test("default: Vote, CompleteProposal, NewEvidence", () => {
    const v = vote();
    expect(encodeEventData({ type: "Vote", data: { vote: v } })).toEqual({
      type: "tendermint/event/Vote",
      value: {
        Vote: {
          type: 2,
          height: "12345",
          round: 2,
          block_id: expect.any(Object),
          timestamp: "2017-12-25T03:00:01.234Z",
          validator_address: expect.stringMatching(/^[0-9A-F]{40}$/),
          validator_index: 56789,
          signature: Buffer.alloc(64, 7).toString("base64"),
          extension: null,
          extension_signature: null,
        },
      },
    });
    expect(
      encodeEventData({ type: "CompleteProposal", data: { height: 3, round: 0, step: 3, blockId: blockIdAt(3) } }),
    ).toMatchObject({
      type: "tendermint/event/CompleteProposal",
      value: { height: "3", round: 0, step: "RoundStepPropose" },
    });
    const ev = {
      type: "duplicateVote" as const,
      voteA: v,
      voteB: vote({ blockId: blockIdAt(2) }),
      totalVotingPower: 20n,
      validatorPower: 10n,
      timestamp: 1_514_170_801_000_000_000n,
    };
    const data = encodeEventData({ type: "NewEvidence", data: { height: 8, evidence: ev } }) as {
      value: { height: string; evidence: { type: string; value: Record<string, unknown> } };
    };
    expect(data.value.height).toBe("8");
    expect(data.value.evidence.type).toBe("tendermint/DuplicateVoteEvidence");
    expect(Object.keys(data.value.evidence.value)).toEqual([
      "vote_a",
      "vote_b",
      "TotalVotingPower",
      "ValidatorPower",
      "Timestamp",
    ]);
    // The wire form decodes back to the same evidence.
    expect(decodeEvidence(parseJson(encodeJson(encodeEvidence(ev))))).toEqual(ev);
  });

  test("default: a proposal's type key is `Type`", () => {
    expect(
      Object.keys(
        encodeProposal({
          type: 32,
          height: 1,
          round: 0,
          polRound: -1,
          blockId: blockIdAt(1),
          timestamp: 0n,
          signature: new Uint8Array(1),
        }),
      ),
    ).toEqual(["Type", "height", "round", "pol_round", "block_id", "timestamp", "signature"]);
  });
});

describe("net_info", () => {
  test("default: a peer with Go field names in connection_status", () => {
    const flow = {
      start: 1_704_067_200_000_000_000n,
      bytes: 10n,
      samples: 2n,
      instRate: 1n,
      curRate: 1n,
      avgRate: 1n,
      peakRate: 3n,
      bytesRem: 0n,
      durationNs: 5_000_000_000n,
      idleNs: 0n,
      timeRemNs: 0n,
      progress: 0,
      active: true,
    };
    const nodeInfo = {
      protocolVersion: { p2p: 8n, block: 11n, app: 0n },
      id: "ab".repeat(20),
      listenAddr: "tcp://0.0.0.0:26656",
      network: "c",
      version: "0.38.25",
      channels: Uint8Array.from([0x40, 0x20]),
      moniker: "peer",
      other: { txIndex: "on", rpcAddress: "tcp://0.0.0.0:26657" },
    };
    const wire = encodeNetInfo(
      true,
      ["Listener(@1.2.3.4:26656)"],
      [
        {
          nodeInfo,
          isOutbound: true,
          remoteIp: "1.2.3.4",
          connectionStatus: {
            durationNs: 5_000_000_000n,
            sendMonitor: flow,
            recvMonitor: flow,
            channels: [{ id: 64, sendQueueCapacity: 1, sendQueueSize: 0, priority: 5, recentlySent: 7n }],
          },
        },
      ],
    );
    expect(encodeJson(wire)).toBe(
      '{"listening":true,"listeners":["Listener(@1.2.3.4:26656)"],"n_peers":"1","peers":[{"node_info":{"protocol_version":{"p2p":"8","block":"11","app":"0"},"id":"abababababababababababababababababababab","listen_addr":"tcp://0.0.0.0:26656","network":"c","version":"0.38.25","channels":"4020","moniker":"peer","other":{"tx_index":"on","rpc_address":"tcp://0.0.0.0:26657"}},"is_outbound":true,"connection_status":{"Duration":"5000000000","SendMonitor":{"Start":"2024-01-01T00:00:00Z","Bytes":"10","Samples":"2","InstRate":"1","CurRate":"1","AvgRate":"1","PeakRate":"3","BytesRem":"0","Duration":"5000000000","Idle":"0","TimeRem":"0","Progress":0,"Active":true},"RecvMonitor":{"Start":"2024-01-01T00:00:00Z","Bytes":"10","Samples":"2","InstRate":"1","CurRate":"1","AvgRate":"1","PeakRate":"3","BytesRem":"0","Duration":"5000000000","Idle":"0","TimeRem":"0","Progress":0,"Active":true},"Channels":[{"ID":64,"SendQueueCapacity":"1","SendQueueSize":"0","Priority":"5","RecentlySent":"7"}]},"remote_ip":"1.2.3.4"}]}',
    );
  });
});

describe("genesis chunks", () => {
  test("default: chunks reassemble to the compact document", () => {
    const whole = genesisChunks(GENESIS)[0] ?? "";
    const pieces = genesisChunks(GENESIS, 100);
    expect(pieces.length).toBeGreaterThan(5);
    expect(Buffer.concat(pieces.map((p) => Buffer.from(p, "base64"))).toString()).toBe(
      Buffer.from(whole, "base64").toString(),
    );
  });
});

/**
 * Wire forms a single kvstore node never produces (routes.test.ts runs on one): tx data, consensus
 * param updates, app version 0 in a header, query proof ops, peers in dump_consensus_state.
 */
describe("encodings of what a single kvstore node does not produce", () => {
  const oneValidator: ValidatorSetView = {
    validators: [
      {
        address: ADDRESS,
        pubKey: { type: "ed25519", bytes: new Uint8Array(32) },
        votingPower: 10n,
        proposerPriority: 0n,
      },
    ],
    getProposer() {
      return this.validators[0];
    },
  };

  test("default: block_results with tx data and consensus param updates", () => {
    const tx = {
      code: 0,
      data: Buffer.from("ok"),
      log: "",
      info: "",
      gasWanted: 10n,
      gasUsed: 2n,
      events: [],
      codespace: "",
    };
    const r = JSON.parse(
      encodeJson(
        encodeBlockResults(3, {
          events: [],
          txResults: [tx],
          validatorUpdates: [{ pubKey: { type: "ed25519", bytes: new Uint8Array(32).fill(4) }, power: 7n }],
          consensusParamUpdates: CONSENSUS_PARAMS,
          appHash: new Uint8Array(8),
        }),
      ),
    ) as {
      txs_results: { data: string }[];
      validator_updates: { power: string }[];
      consensus_param_updates: Record<string, unknown>;
    };
    expect(r.txs_results[0]?.data).toBe("b2s=");
    expect(r.validator_updates[0]?.power).toBe("7");
    expect(r.consensus_param_updates.block).toEqual({ max_bytes: "22020096", max_gas: "-1" });
    expect(r.consensus_param_updates.version).toEqual({});
  });

  test("default: a header's version leaves app out when it is 0", () => {
    const header: Header = {
      version: { block: 11n, app: 0n },
      chainId: "test-chain",
      height: 2,
      time: 1_704_067_202_100_000_000n,
      lastBlockId: blockIdAt(1),
      lastCommitHash: new Uint8Array(32),
      dataHash: new Uint8Array(32),
      validatorsHash: new Uint8Array(32),
      nextValidatorsHash: new Uint8Array(32),
      consensusHash: new Uint8Array(32),
      appHash: new Uint8Array(8),
      lastResultsHash: new Uint8Array(0),
      evidenceHash: new Uint8Array(32),
      proposerAddress: ADDRESS,
    };
    expect(encodeHeader(header).version).toEqual({ block: "11" });
    expect(encodeHeader({ ...header, version: { block: 11n, app: 1n } }).version).toEqual({ block: "11", app: "1" });
  });

  test("default: abci_query proof ops, and a failed query's empty fields", () => {
    const base = { log: "", info: "", index: 0n, height: 6, codespace: "" };
    expect(
      encodeQueryResponseJsonpb({
        ...base,
        code: 0,
        log: "exists",
        key: Uint8Array.from([0xab, 0xcd]),
        value: Buffer.from("value"),
        proofOps: [{ type: "ics23", key: Uint8Array.from([0xab, 0xcd]), data: Buffer.from("proof") }],
      }),
    ).toEqual({
      code: 0,
      log: "exists",
      info: "",
      index: "0",
      key: "q80=",
      value: "dmFsdWU=",
      proofOps: { ops: [{ type: "ics23", key: "q80=", data: "cHJvb2Y=" }] },
      height: "6",
      codespace: "",
    });
    expect(
      encodeQueryResponseJsonpb({
        ...base,
        code: 1,
        log: "not found",
        key: new Uint8Array(0),
        value: new Uint8Array(0),
        proofOps: undefined,
      }),
    ).toMatchObject({ code: 1, key: null, value: null, proofOps: null });
  });

  test("default: dump_consensus_state peers and a last commit's peer_maj_23s", () => {
    const bits = (s: string) => ({ size: s.length, get: (i: number) => s[i] === "x" });
    const none: VoteSetView = { votes: [undefined], sum: 0n, totalVotingPower: 10n, peerMaj23s: new Map() };
    const rs: RoundStateView = {
      height: 7,
      round: 0,
      step: 1,
      startTime: 1_704_067_208_000_000_000n,
      commitTime: 1_704_067_207_000_000_000n,
      validators: oneValidator,
      proposal: undefined,
      proposalBlock: undefined,
      proposalBlockParts: undefined,
      lockedRound: -1,
      lockedBlock: undefined,
      lockedBlockParts: undefined,
      validRound: -1,
      validBlock: undefined,
      validBlockParts: undefined,
      votes: [{ round: 0, prevotes: none, precommits: none }],
      commitRound: -1,
      lastCommit: { ...none, peerMaj23s: new Map([["aa".repeat(20), blockIdAt(6)]]) },
      lastValidators: oneValidator,
      triggeredTimeoutPrecommit: false,
    };
    const peers: PeerStateView[] = [
      {
        nodeAddress: `${"bb".repeat(20)}@127.0.0.1:26656`,
        roundState: {
          height: 7,
          round: 0,
          step: 3,
          startTime: 1_704_067_208_000_000_000n,
          proposal: false,
          proposalBlockPartSetHeader: { total: 0, hash: new Uint8Array(0) },
          proposalBlockParts: undefined,
          proposalPolRound: -1,
          proposalPol: undefined,
          prevotes: bits("x__"),
          precommits: bits("___"),
          lastCommitRound: 0,
          lastCommit: bits("xx_"),
          catchupCommitRound: -1,
          catchupCommit: undefined,
        },
        stats: { votes: 12, blockParts: 3 },
      },
      { nodeAddress: `${"cc".repeat(20)}@127.0.0.1:40000`, roundState: undefined, stats: { votes: 0, blockParts: 0 } },
    ];
    // biome-ignore lint/suspicious/noExplicitAny: the wire value is inspected freely
    const r = JSON.parse(encodeJson(encodeDumpConsensusState(rs, peers, formatVote))) as any;
    expect(r.round_state.last_commit.peer_maj_23s["aa".repeat(20)].hash).toBe("06".repeat(32));
    const peer = r.peers[0];
    expect(peer.node_address).toBe(`${"bb".repeat(20)}@127.0.0.1:26656`);
    expect(peer.peer_state.round_state).toMatchObject({
      height: "7",
      round: "0",
      step: 3,
      proposal: false,
      proposal_block_parts_header: { total: 0, hash: "" },
      proposal_pol_round: -1,
      proposal_pol: null,
      prevotes: "x__",
      last_commit: "xx_",
      catchup_commit: null,
    });
    expect(peer.peer_state.stats).toEqual({ votes: "12", block_parts: "3" });
    expect(r.peers[1]).toEqual({ node_address: "", peer_state: null });
  });
});
