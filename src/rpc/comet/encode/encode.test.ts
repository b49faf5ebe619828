import { describe, expect, test } from "vitest";
import type { Vote } from "../../../types/vote.js";
import { encodeJson, parseJson } from "../../jsonrpc/index.js";
import { blockIdAt, CONSENSUS_PARAMS, formatVote, GENESIS, VALIDATORS } from "../testing/fakeServices.js";
import {
  encodeConsensusParamsProto,
  encodeExecTxResultJsonpb,
  encodeExecTxResultOmitEmpty,
  encodeInfoResponse,
  encodeValidatorUpdate,
} from "./abci.js";
import { encodeEvidence, encodeProposal } from "./block.js";
import { encodePartSet, formatFraction, voteSetBitArrayString } from "./consensus.js";
import { encodeEventData } from "./events.js";
import { decodeEvidence } from "./evidence.js";
import { genesisChunks } from "./genesis.js";
import { encodeNetInfo } from "./status.js";

const vote = (over: Partial<Vote> = {}): Vote => ({
  type: 2,
  height: 12345,
  round: 2,
  blockId: blockIdAt(1),
  timestamp: 1_514_170_801_234_000_000n,
  validatorAddress: VALIDATORS[0]?.address ?? new Uint8Array(20),
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

  test("default: vote text of the test helper matches CometBFT's upstream example layout", () => {
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
