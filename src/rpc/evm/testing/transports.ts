import { rpcCall, WsClient } from "./evmClient.js";

/** One call API over either transport, so suites run unchanged over HTTP and WebSocket. */

export type EvmTransport = "http" | "ws";
export const EVM_TRANSPORTS: readonly EvmTransport[] = ["http", "ws"];

export interface Caller {
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  call(method: string, params?: unknown[]): Promise<any>;
  close(): Promise<void>;
}

/** Where a server listens: `http://host:port` and `ws://host:port`. */
export interface EvmEndpoints {
  readonly url: string;
  readonly wsUrl: string;
}

export async function callerFor(f: EvmEndpoints, transport: EvmTransport): Promise<Caller> {
  if (transport === "http") return { call: (m, p = []) => rpcCall(f.url, m, p), close: async () => undefined };
  const ws = await WsClient.connect(f.wsUrl);
  return { call: (m, p = []) => ws.call(m, p), close: () => ws.close() };
}
