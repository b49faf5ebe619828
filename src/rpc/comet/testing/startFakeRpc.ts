import { silentLogger } from "../../../util/logger.js";
import { type CometRpcConfig, type RunningCometRpc, startCometRpc } from "../transports/server.js";
import { createFakeNode, type FakeNode } from "./fakeServices.js";
import { RpcTestClient } from "./rpcTestClient.js";

/** The [rpc] defaults of CometBFT v0.38 (src/config/settingsTable.ts), listening on an ephemeral loopback port. */
export const TEST_RPC_CONFIG: CometRpcConfig = {
  laddr: "tcp://127.0.0.1:0",
  corsAllowedOrigins: [],
  corsAllowedMethods: ["HEAD", "GET", "POST"],
  corsAllowedHeaders: ["Origin", "Accept", "Content-Type", "X-Requested-With", "X-Server-Time"],
  unsafe: false,
  maxOpenConnections: 900,
  maxSubscriptionClients: 100,
  maxSubscriptionsPerClient: 5,
  experimentalSubscriptionBufferSize: 200,
  experimentalWebsocketWriteBufferSize: 200,
  experimentalCloseOnSlowClient: false,
  timeoutBroadcastTxCommitMs: 10_000,
  maxRequestBatchSize: 10,
  maxBodyBytes: 1_000_000,
  maxHeaderBytes: 1_048_576,
};

export interface FakeRpc {
  node: FakeNode;
  rpc: RunningCometRpc;
  /** http://127.0.0.1:<port> */
  base: string;
  client: RpcTestClient;
  close(): Promise<void>;
}

/** Starts the node RPC over fake services on 127.0.0.1:0. */
export async function startFakeRpc(
  overrides: Partial<CometRpcConfig> = {},
  nodeOpts: { txIndex?: boolean; unboundedBus?: boolean; customize?: (node: FakeNode) => void } = {},
): Promise<FakeRpc> {
  const node = createFakeNode(nodeOpts);
  nodeOpts.customize?.(node);
  const rpc = await startCometRpc({ ...TEST_RPC_CONFIG, ...overrides }, node.services, silentLogger());
  const base = (rpc.addresses[0] ?? "").replace(/^tcp:/, "http:");
  const client = new RpcTestClient(base);
  return {
    node,
    rpc,
    base,
    client,
    async close() {
      await client.close();
      await rpc.close();
    },
  };
}
