import { describe, expect, test } from "vitest";
import type { EvmReader } from "../../app/evm/index.js";
import type { NodeConfig, NodeKey } from "../../config/index.js";
import type { GenesisDoc } from "../../types/index.js";
import { EvmNodeInfoAdapter, type EvmSyncView } from "./nodeInfo.js";

const reader = { latestHeight: () => 40 } as unknown as EvmReader;
const config = { base: { moniker: "m" }, p2p: { externalAddress: "", laddr: "tcp://0.0.0.0:26656" } } as NodeConfig;
const nodeKey = { id: "aa".repeat(20) } as NodeKey;
const genesis = { chainId: "c" } as GenesisDoc;

function adapter(syncing: boolean): EvmNodeInfoAdapter {
  const view: EvmSyncView = { isSyncing: () => syncing, status: () => ({ maxPeerHeight: 90 }) };
  return new EvmNodeInfoAdapter(reader, config, nodeKey, genesis, undefined, { view, earliestHeight: () => 3 });
}

describe("EvmNodeInfoAdapter.syncStatus (eth_syncing)", () => {
  test("default: not catching up once block sync is done", () => {
    expect(adapter(false).syncStatus()).toEqual({
      catchingUp: false,
      startingBlock: 0,
      currentBlock: 40,
      highestBlock: 40,
    });
  });

  test("behavior: catching up while block sync runs, from the earliest stored block to the best peer's height", () => {
    expect(adapter(true).syncStatus()).toEqual({
      catchingUp: true,
      startingBlock: 3,
      currentBlock: 40,
      highestBlock: 90,
    });
  });

  test("default: without a p2p switch, no peers and not listening", () => {
    const a = adapter(false);
    expect(a.peerCount()).toBe(0);
    expect(a.listening()).toBe(false);
  });
});
