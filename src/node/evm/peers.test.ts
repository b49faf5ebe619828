import { describe, expect, test } from "vitest";
import type { Peer } from "../../p2p/index.js";
import { EvmPeerAdapter, type EvmSwitchView, InvalidPeerUrlError } from "./peers.js";

const ID_A = "aa".repeat(20);
const ID_B = "bb".repeat(20);

function peer(id: string, moniker: string, host: string, port: number, isOutbound: boolean): Peer {
  return { id, nodeInfo: { moniker }, remoteHost: host, remotePort: port, isOutbound } as unknown as Peer;
}

/** The switch calls the adapter makes, recorded. */
function recordingSwitch(peers: Peer[]) {
  const dials: { addrs: readonly string[]; persistent: boolean | undefined }[] = [];
  const stopped: string[] = [];
  const sw: EvmSwitchView = {
    isListening: () => true,
    peers: () => peers,
    peer: (id) => peers.find((p) => p.id === id),
    listenAddress: () => ({ host: "127.0.0.1", port: 26656 }),
    dialPeersAsync: (addrs, opts) => dials.push({ addrs, persistent: opts?.persistent }),
    stopPeerGracefully: (p) => stopped.push(p.id),
  };
  return { sw, dials, stopped };
}

describe("EvmPeerAdapter (admin_* and net_* over the p2p switch)", () => {
  test("default: peers with their moniker, remote address and direction", () => {
    const { sw } = recordingSwitch([
      peer(ID_A, "alice", "10.0.0.1", 40000, true),
      peer(ID_B, "bob", "::1", 26656, false),
    ]);
    const a = new EvmPeerAdapter(sw);
    expect(a.peers()).toEqual([
      { id: ID_A, name: "alice", remoteAddress: "10.0.0.1:40000", inbound: false },
      { id: ID_B, name: "bob", remoteAddress: "[::1]:26656", inbound: true },
    ]);
    expect(a.peerCount()).toBe(2);
    expect(a.listening()).toBe(true);
    expect(a.boundListenAddr()).toBe("tcp://127.0.0.1:26656");
    // Not listening yet (port 0): the configured address stands.
    expect(
      new EvmPeerAdapter({ ...sw, listenAddress: () => ({ host: "", port: 0 }) }).boundListenAddr(),
    ).toBeUndefined();
  });

  test("behavior: addPeer dials (persistent for trusted peers); removePeer stops a connected peer", () => {
    const { sw, dials, stopped } = recordingSwitch([peer(ID_A, "alice", "10.0.0.1", 40000, true)]);
    const a = new EvmPeerAdapter(sw);
    expect(a.addPeer(`${ID_B}@127.0.0.1:26656`, false)).toBe(true);
    expect(a.addPeer(`${ID_B}@127.0.0.1:26656`, true)).toBe(true);
    expect(dials).toEqual([
      { addrs: [`${ID_B}@127.0.0.1:26656`], persistent: false },
      { addrs: [`${ID_B}@127.0.0.1:26656`], persistent: true },
    ]);
    expect(a.removePeer(`${ID_B}@127.0.0.1:26656`)).toBe(true);
    expect(stopped).toEqual([]);
    expect(a.removePeer(`${ID_A}@10.0.0.1:26656`)).toBe(true);
    expect(stopped).toEqual([ID_A]);
  });

  test("error: a malformed url is refused before anything is dialed", () => {
    const { sw, dials } = recordingSwitch([]);
    const a = new EvmPeerAdapter(sw);
    expect(() => a.addPeer("nope", false)).toThrow(InvalidPeerUrlError);
    expect(() => a.addPeer("ff@10.0.0.3:26656", false)).toThrow(/invalid peer url "ff@10.0.0.3:26656"/);
    expect(() => a.removePeer(`${ID_A}@host`)).toThrow(InvalidPeerUrlError);
    expect(dials).toEqual([]);
  });
});
