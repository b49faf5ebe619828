import { JsonRpcProvider, parseEther, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { rpcGet } from "./testNode.js";
import { makeTestnet, type Testnet, type TestnetProcess } from "./testnetHarness.js";

// The EVM application on two validators (both needed for +2/3): execution must be deterministic
// across nodes, so every height has the same app hash everywhere, and transactions sent to either
// node's Ethereum JSON-RPC are gossiped, included once and readable on both.

const KEY0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("the EVM app on a two-validator network", () => {
  let net: Testnet;

  beforeAll(async () => {
    net = await makeTestnet(2, {}, { proxyApp: "evm" });
    await Promise.all(net.nodes.map((n) => n.start()));
    await Promise.all(net.nodes.map((n) => n.waitForHeight(2)));
  }, 60_000);
  afterAll(async () => {
    await net?.close();
  });

  test("behavior: transfers sent to one node are mined once, and both nodes agree on every app hash", async () => {
    const [a, b] = net.nodes as [TestnetProcess, TestnetProcess];
    // Sent to node1: node0 learns them through mempool gossip or the blocks.
    const provider = new JsonRpcProvider(b.evmUrl, undefined, {
      staticNetwork: true,
      polling: true,
      pollingInterval: 50,
    });
    try {
      const wallet = new Wallet(KEY0, provider);
      let nonce = await provider.getTransactionCount(wallet.address);
      const before = await provider.getBalance(TO);
      const hashes: string[] = [];
      for (let i = 0; i < 10; i++) {
        const tx = await wallet.sendTransaction({ to: TO, value: parseEther("1"), nonce: nonce++ });
        hashes.push(tx.hash);
      }
      const last = await provider.waitForTransaction(hashes.at(-1) as string, 1, 30_000);
      expect(last?.status).toBe(1);
      const top = Math.max(await a.height(), await b.height());
      await Promise.all(net.nodes.map((n) => n.waitForHeight(top)));
      for (let h = 1; h <= top; h++) {
        const [ha, hb] = await Promise.all(
          [a, b].map((n) =>
            rpcGet<{ block: { header: { app_hash: string } } }>(n.rpcUrl, "block", { height: String(h) }),
          ),
        );
        expect(ha?.block.header.app_hash, `app hash at ${h}`).toBe(hb?.block.header.app_hash);
      }
      // Both Ethereum JSON-RPC servers see the same balance and the same receipt.
      const other = new JsonRpcProvider(a.evmUrl, undefined, { staticNetwork: true });
      try {
        expect(await other.getBalance(TO, top)).toBe(await provider.getBalance(TO, top));
        expect((await provider.getBalance(TO, top)) - before).toBe(parseEther("10"));
        const r = await other.getTransactionReceipt(hashes[0] as string);
        expect(r?.status).toBe(1);
      } finally {
        other.destroy();
      }
    } finally {
      provider.destroy();
    }
  }, 90_000);
});
