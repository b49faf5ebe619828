import type { ReadProcessSetup } from "./readProcessWire.js";

/** A read process's setup for the unit tests (readProcessWire.test.ts, readProcesses.test.ts). */
export const TEST_SETUP: ReadProcessSetup = {
  index: 1,
  dbFile: "/tmp/x/data.mdb",
  noSync: false,
  chainId: "262144",
  allowUnprotectedTxs: false,
  rpc: {
    gasCap: "25000000",
    evmTimeoutMs: 5000,
    httpTimeoutMs: 30000,
    httpIdleTimeoutMs: 120000,
    batchRequestLimit: 1000,
    batchResponseMaxSize: 25000000,
    maxBodyBytes: 5242880,
    api: ["eth", "net", "web3"],
  },
};
