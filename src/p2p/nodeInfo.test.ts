import { describe, expect, test } from "vitest";
import {
  checkCompatibleWith,
  checkNodeInfoCompatible,
  decodeNodeInfo,
  encodeNodeInfo,
  IncompatiblePeerError,
  NodeInfoInvalidError,
  validateNodeInfo,
} from "./nodeInfo.js";
import type { NodeInfo } from "./reactor.js";

const ID_A = "0123456789abcdef0123456789abcdef01234567";
const ID_B = "89abcdef0123456789abcdef0123456789abcdef";

function info(over: Partial<NodeInfo> = {}): NodeInfo {
  return {
    protocolVersion: { p2p: 8n, block: 11n, app: 1n },
    id: ID_A,
    listenAddr: "tcp://0.0.0.0:26656",
    network: "chain-a",
    version: "0.38.25",
    channels: Uint8Array.of(0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x60, 0x61, 0x00),
    moniker: "node0",
    other: { txIndex: "on", rpcAddress: "tcp://127.0.0.1:26657" },
    ...over,
  };
}

describe("nodeInfo", () => {
  test("default: encode/decode round-trips every field", () => {
    const n = info();
    expect(decodeNodeInfo(encodeNodeInfo(n))).toEqual(n);
  });

  test("default: a valid, compatible NodeInfo passes", () => {
    expect(() => checkNodeInfoCompatible(info(), info({ id: ID_B, listenAddr: "10.0.0.2:26656" }))).not.toThrow();
    expect(() =>
      validateNodeInfo(info({ listenAddr: "[::1]:26656", other: { txIndex: "", rpcAddress: "" } })),
    ).not.toThrow();
  });

  const invalid: [string, Partial<NodeInfo>, string][] = [
    ["id", { id: "abc" }, 'invalid NodeInfo: invalid ID "abc": a node ID is 40 hex characters (20 bytes)'],
    [
      "listen addr without port",
      { listenAddr: "tcp://1.2.3.4" },
      'invalid NodeInfo: invalid listen address "tcp://1.2.3.4": expected host:port',
    ],
    [
      "listen addr without host",
      { listenAddr: ":26656" },
      'invalid NodeInfo: invalid listen address ":26656": host is empty',
    ],
    [
      "listen addr port",
      { listenAddr: "1.2.3.4:70000" },
      'invalid NodeInfo: invalid listen address "1.2.3.4:70000": port must be 0-65535',
    ],
    [
      "version",
      { version: "v\t1" },
      "invalid NodeInfo: info.Version must be valid ASCII text without tabs, but got v\t1",
    ],
    [
      "channels count",
      { channels: new Uint8Array(17).map((_, i) => i) },
      "invalid NodeInfo: info.Channels is too long (17). Max is 16",
    ],
    [
      "duplicate channel",
      { channels: Uint8Array.of(0x20, 0x20) },
      "invalid NodeInfo: info.Channels contains duplicate channel id 32",
    ],
    [
      "moniker",
      { moniker: " " },
      "invalid NodeInfo: info.Moniker must be valid non-empty ASCII text without tabs, but got  ",
    ],
    [
      "tx_index",
      { other: { txIndex: "kv", rpcAddress: "" } },
      "invalid NodeInfo: info.Other.TxIndex should be either 'on', 'off', or empty string, got 'kv'",
    ],
    [
      "rpc address",
      { other: { txIndex: "on", rpcAddress: "tcp://ü" } },
      "invalid NodeInfo: info.Other.RPCAddress=tcp://ü must be valid ASCII text without tabs",
    ],
  ];
  for (const [what, over, message] of invalid) {
    test(`error: invalid ${what}`, () => {
      expect(() => validateNodeInfo(info(over))).toThrow(NodeInfoInvalidError);
      expect(() => validateNodeInfo(info(over))).toThrow(message);
    });
  }

  test("error: a different block protocol is incompatible", () => {
    const theirs = info({ id: ID_B, protocolVersion: { p2p: 8n, block: 10n, app: 1n } });
    expect(() => checkCompatibleWith(info(), theirs)).toThrow(IncompatiblePeerError);
    expect(() => checkCompatibleWith(info(), theirs)).toThrow(
      "incompatible: peer is on a different Block version. Got 10, expected 11",
    );
  });

  test("error: a different network is incompatible", () => {
    expect(() => checkNodeInfoCompatible(info(), info({ id: ID_B, network: "chain-b" }))).toThrow(
      "incompatible: peer is on a different network. Got chain-b, expected chain-a",
    );
  });

  test("behavior: no common channel is incompatible unless we have no channels at all", () => {
    const theirs = info({ id: ID_B, channels: Uint8Array.of(0x99) });
    expect(() => checkCompatibleWith(info({ channels: Uint8Array.of(0x20, 0x21) }), theirs)).toThrow(
      "incompatible: peer has no common channels. Our channels: [32 33] ; Peer channels: [153]",
    );
    expect(() => checkCompatibleWith(info({ channels: new Uint8Array(0) }), theirs)).not.toThrow();
  });

  test("error: undecodable bytes", () => {
    expect(() => decodeNodeInfo(Uint8Array.of(0x0a, 0xff))).toThrow(NodeInfoInvalidError);
  });
});
