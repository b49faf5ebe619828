import type { Clock } from "../../../util/clock.js";
import { silentLogger } from "../../../util/logger.js";
import { NAMESPACE_NAMES } from "../namespaces/index.js";
import { type EvmRpcConfig, type RunningEvmRpc, startEvmRpc } from "../transports/server.js";
import { createFakeNode, type FakeNode } from "./fakeServices.js";

/** Cosmos EVM v0.5 defaults with every namespace on, on ephemeral loopback ports. Test support only. */
export const TEST_EVM_CONFIG: EvmRpcConfig = {
  address: "127.0.0.1:0",
  wsAddress: "127.0.0.1:0",
  wsOrigins: ["127.0.0.1", "localhost"],
  api: NAMESPACE_NAMES,
  gasCap: 25_000_000n,
  evmTimeoutMs: 5000,
  txfeeCap: 1,
  filterCap: 200,
  feehistoryCap: 100,
  logsCap: 10000,
  blockRangeCap: 10000,
  httpTimeoutMs: 30_000,
  httpIdleTimeoutMs: 120_000,
  allowUnprotectedTxs: false,
  allowInsecureUnlock: true,
  maxOpenConnections: 0,
  batchRequestLimit: 1000,
  batchResponseMaxSize: 25_000_000,
  enableProfiling: true,
};

export interface FakeEvmRpc {
  readonly node: FakeNode;
  readonly rpc: RunningEvmRpc;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** ws://127.0.0.1:<port> */
  readonly wsUrl: string;
  close(): Promise<void>;
}

export async function startFakeEvmRpc(
  overrides: Partial<EvmRpcConfig> = {},
  opts: { clock?: Clock; filterTimeoutMs?: number } = {},
): Promise<FakeEvmRpc> {
  const node = createFakeNode();
  const rpc = await startEvmRpc({ ...TEST_EVM_CONFIG, ...overrides }, node.services, silentLogger(), {
    ...(opts.clock === undefined ? {} : { clock: opts.clock }),
    ...(opts.filterTimeoutMs === undefined ? {} : { filterTimeoutMs: opts.filterTimeoutMs }),
  });
  return {
    node,
    rpc,
    url: `http://${rpc.httpAddress}`,
    wsUrl: `ws://${rpc.wsAddress}`,
    close: () => rpc.close(),
  };
}
