import { JsonRpcProvider, parseEther, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type InProcessEvmNode,
  type InProcessNode,
  startInProcessEvmNode,
  startInProcessNode,
} from "./inProcessNode.js";

const METRICS = {
  "--instrumentation.prometheus": true,
  "--instrumentation.prometheus_listen_addr": "127.0.0.1:0",
} as const;

async function scrape(n: InProcessNode): Promise<string> {
  const res = await fetch(`http://${n.node.metricsAddress}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one series (`name{labels}`, labels in the order printed), or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("kvstore node", () => {
  let n: InProcessNode;
  beforeAll(async () => {
    n = await startInProcessNode(METRICS);
  });
  afterAll(async () => {
    await n?.close();
  });

  test("behavior: [instrumentation] prometheus serves CometBFT's consensus and mempool metrics", async () => {
    await n.node.consensus.waitForHeight(3);
    const text = await scrape(n);
    const height = /^cometbft_consensus_height\{chain_id="test-chain"\} (\d+)$/m.exec(text);
    expect(Number(height?.[1])).toBeGreaterThanOrEqual(4);
    expect(text).toMatch(/^cometbft_consensus_validators\{chain_id="test-chain"\} 1$/m);
    expect(text).toMatch(/^cometbft_mempool_size\{chain_id="test-chain"\} \d+$/m);
    expect(text).toMatch(/^cometbft_consensus_block_interval_seconds_count\{chain_id="test-chain"\} \d+$/m);
    expect((await fetch(`http://${n.node.metricsAddress}/other`)).status).toBe(404);
  });

  test("behavior: consensus steps, ABCI methods, FinalizeBlock time and block store accesses are timed", async () => {
    await n.node.consensus.waitForHeight(4);
    const text = await scrape(n);
    for (const step of ["NewHeight", "NewRound", "Propose", "Prevote", "Precommit", "Commit"]) {
      expect(
        value(text, `cometbft_consensus_step_duration_seconds_count{step="${step}",chain_id="test-chain"}`),
      ).toBeGreaterThan(0);
    }
    for (const method of ["prepare_proposal", "process_proposal", "finalize_block", "commit"]) {
      const series = `cometbft_abci_connection_method_timing_seconds_count{method="${method}",type="sync",chain_id="test-chain"}`;
      expect(value(text, series), method).toBeGreaterThan(0);
    }
    expect(value(text, 'cometbft_state_block_processing_time_count{chain_id="test-chain"}')).toBeGreaterThan(0);
    expect(
      value(
        text,
        'cometbft_store_block_store_access_duration_seconds_count{method="save_block",chain_id="test-chain"}',
      ),
    ).toBeGreaterThan(0);
    expect(value(text, 'cometbft_consensus_proposal_create_count{chain_id="test-chain"}')).toBeGreaterThan(0);
    expect(
      value(text, 'cometbft_consensus_proposal_receive_count{status="accepted",chain_id="test-chain"}'),
    ).toBeGreaterThan(0);
    expect(value(text, 'cometbft_consensus_missing_validators{chain_id="test-chain"}')).toBe(0);
    expect(text).toMatch(
      /^cometbft_consensus_validator_last_signed_height\{validator_address="[0-9A-F]{40}",chain_id="test-chain"\} \d+$/m,
    );
  });

  test("behavior: node RPC calls are counted and timed per method; unknown methods add no series", async () => {
    await fetch(`${n.rpcUrl}/status`);
    await fetch(`${n.rpcUrl}/status`);
    await fetch(`${n.rpcUrl}/block?height=999999`);
    await fetch(n.rpcUrl, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "no_such_method" }),
    });
    const text = await scrape(n);
    expect(value(text, 'cometh_rpc_requests_total{server="node",method="status",chain_id="test-chain"}')).toBe(2);
    expect(value(text, 'cometh_rpc_request_errors_total{server="node",method="block",chain_id="test-chain"}')).toBe(1);
    expect(
      value(text, 'cometh_rpc_request_duration_seconds_count{server="node",method="status",chain_id="test-chain"}'),
    ).toBe(2);
    expect(text).not.toContain("no_such_method");
    expect(text).not.toContain('method="tx_search"');
  });
});

describe("EVM node", () => {
  let n: InProcessEvmNode;
  beforeAll(async () => {
    n = await startInProcessEvmNode("eth,net,web3", METRICS);
  });
  afterAll(async () => {
    await n?.close();
  });

  test("behavior: gas and txs per block, CheckTx outcomes by reason, base fee, Ethereum JSON-RPC methods, subscriptions and filters", async () => {
    const provider = new JsonRpcProvider(n.evmHttpUrl, undefined, { staticNetwork: true });
    try {
      const wallet = new Wallet("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", provider);
      const tx = await wallet.sendTransaction({
        to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        value: parseEther("1"),
      });
      await tx.wait();
      // Not a tx at all: refused by the app's CheckTx (tx_decode).
      await expect(provider.send("eth_sendRawTransaction", ["0x1234"])).rejects.toThrow();
      await provider.send("eth_newBlockFilter", []);
      const text = await scrape(n);
      expect(value(text, 'cometh_checktx_total{result="accepted",reason="ok",chain_id="test-chain"}')).toBe(1);
      expect(value(text, 'cometh_evm_txs_total{chain_id="test-chain"}')).toBe(1);
      expect(value(text, 'cometh_evm_gas_used_total{chain_id="test-chain"}')).toBe(21000);
      expect(value(text, 'cometh_evm_base_fee_wei{chain_id="test-chain"}')).toBeGreaterThan(0);
      expect(value(text, 'cometh_evm_filters{chain_id="test-chain"}')).toBe(1);
      expect(
        value(text, 'cometh_rpc_requests_total{server="evm",method="eth_sendRawTransaction",chain_id="test-chain"}'),
      ).toBeGreaterThanOrEqual(2);
      expect(
        value(
          text,
          'cometh_rpc_request_errors_total{server="evm",method="eth_sendRawTransaction",chain_id="test-chain"}',
        ),
      ).toBeGreaterThanOrEqual(1);
      expect(value(text, 'cometh_rpc_subscriptions{server="evm",chain_id="test-chain"}')).toBe(0);
      expect(
        value(
          text,
          'cometbft_abci_connection_method_timing_seconds_count{method="check_tx",type="async",chain_id="test-chain"}',
        ),
      ).toBeGreaterThanOrEqual(1);
      expect(value(text, 'cometbft_mempool_tx_size_bytes_count{chain_id="test-chain"}')).toBe(1);
    } finally {
      provider.destroy();
    }
  });
});
