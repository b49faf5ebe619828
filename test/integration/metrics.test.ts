import { afterAll, beforeAll, expect, test } from "vitest";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

let n: InProcessNode;
beforeAll(async () => {
  n = await startInProcessNode({
    "--instrumentation.prometheus": true,
    "--instrumentation.prometheus_listen_addr": "127.0.0.1:0",
  });
});
afterAll(async () => {
  await n?.close();
});

test("behavior: [instrumentation] prometheus serves CometBFT's consensus and mempool metrics", async () => {
  await n.node.consensus.waitForHeight(3);
  const res = await fetch(`http://${n.node.metricsAddress}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const height = /^cometbft_consensus_height\{chain_id="test-chain"\} (\d+)$/m.exec(text);
  expect(Number(height?.[1])).toBeGreaterThanOrEqual(4);
  expect(text).toMatch(/^cometbft_consensus_validators\{chain_id="test-chain"\} 1$/m);
  expect(text).toMatch(/^cometbft_mempool_size\{chain_id="test-chain"\} \d+$/m);
  expect(text).toMatch(/^cometbft_consensus_block_interval_seconds_count\{chain_id="test-chain"\} \d+$/m);
  expect((await fetch(`http://${n.node.metricsAddress}/other`)).status).toBe(404);
});
