import { ComethError } from "../../../util/errors.js";
import type {
  CallOptions,
  CallResult,
  ChainReader,
  EvmBlock,
  EvmServices,
  Executor,
  FeeOracle,
  MempoolAccess,
  NodeInfoSource,
  StateReader,
  TxWaitOutcome,
} from "../services.js";
import { SLOW } from "./contracts.js";

/**
 * A small fixed EvmServices for transport- and error-level tests (envelopes, batches, limits,
 * timeouts, malformed requests): it answers eth_chainId, net_version, eth_blockNumber,
 * eth_getBlockByNumber for blocks 0 and 1 (fixed objects), and an eth_call to SLOW that waits until
 * the call is aborted. Anything else fails with FakeNodeError. It has no chain rules: behaviour tests
 * run on a real chain (realChain.ts). Test support only (no vitest import here).
 */

export { SLOW };

/** A request the fake does not serve (shown to clients as a -32000 error). */
export class FakeNodeError extends ComethError {}

export const CHAIN_ID = 262144n;

function filled(length: number, byte: number): Uint8Array {
  return new Uint8Array(length).fill(byte);
}

function fixedBlock(number: number): EvmBlock {
  return {
    number,
    hash: filled(32, 0xb0 + number),
    parentHash: number === 0 ? new Uint8Array(32) : filled(32, 0xb0 + number - 1),
    timestamp: 1_700_000_000 + number,
    gasLimit: 30_000_000n,
    gasUsed: 0n,
    baseFeePerGas: 1_000_000_000n,
    miner: new Uint8Array(20),
    logsBloom: new Uint8Array(256),
    stateRoot: filled(32, 0x51),
    transactionsRoot: filled(32, 0x52),
    receiptsRoot: filled(32, 0x53),
    size: 600,
    // Makes one block's JSON alone larger than 2000 bytes (the transports test's batch-response-max-size).
    extraData: filled(256, 0xee),
    transactions: [],
  };
}

const BLOCKS = [fixedBlock(0), fixedBlock(1)];

function unserved(area: string): never {
  throw new FakeNodeError(`${area} is not served by the fake node`);
}

/** Waits until the call is aborted (the deadline of the server), or 10 s. */
function slowCall(opts: CallOptions): Promise<CallResult> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve({ status: "success", returnData: new Uint8Array(0), gasUsed: 21000n });
    };
    const timer = setTimeout(done, 10_000);
    opts.signal.addEventListener("abort", done, { once: true });
  });
}

export interface FakeNode {
  readonly services: EvmServices;
}

export function createFakeNode(): FakeNode {
  const chain: ChainReader = {
    latestHeight: () => 1,
    blockByNumber: (n) => BLOCKS[n],
    blockByHash: () => unserved("chain.blockByHash"),
    transactionByHash: () => unserved("chain.transactionByHash"),
    receiptByHash: () => unserved("chain.receiptByHash"),
    blockReceipts: () => unserved("chain.blockReceipts"),
    logs: () => unserved("chain.logs"),
  };
  const state: StateReader = {
    balance: () => unserved("state.balance"),
    nonce: () => unserved("state.nonce"),
    code: () => unserved("state.code"),
    storage: () => unserved("state.storage"),
    proof: () => unserved("state.proof"),
  };
  const execution: Executor = {
    call: (request, opts) => {
      if (request.to !== undefined && Buffer.from(request.to).equals(Buffer.from(SLOW))) return slowCall(opts);
      return unserved("execution.call");
    },
  };
  const mempool: MempoolAccess = {
    submit: () => unserved("mempool.submit"),
    content: () => unserved("mempool.content"),
    transactionByHash: () => unserved("mempool.transactionByHash"),
  };
  const fees: FeeOracle = {
    nextBaseFee: () => unserved("fees.nextBaseFee"),
    headBaseFee: () => unserved("fees.headBaseFee"),
    suggestTipCap: () => unserved("fees.suggestTipCap"),
    minGasPrice: () => unserved("fees.minGasPrice"),
  };
  const node: NodeInfoSource = {
    chainId: () => CHAIN_ID,
    version: () => "0.1.0",
    syncStatus: () => unserved("node.syncStatus"),
    peerCount: () => unserved("node.peerCount"),
    listening: () => unserved("node.listening"),
    identity: () => unserved("node.identity"),
    dataDir: () => unserved("node.dataDir"),
  };
  const services: EvmServices = {
    chain,
    state,
    execution,
    mempool,
    fees,
    events: {
      onNewBlock: () => () => undefined,
      onPendingTransaction: () => () => undefined,
      // No chain: no block ever comes, so a wait ends by its timeout (or never, without one).
      waitForTx: (_raw, opts) => {
        let timer: NodeJS.Timeout | undefined;
        const outcome = new Promise<TxWaitOutcome>((resolve) => {
          if (opts.timeoutMs !== undefined) timer = setTimeout(() => resolve({ kind: "timeout" }), opts.timeoutMs);
        });
        return { outcome, cancel: () => clearTimeout(timer) };
      },
    },
    node,
  };
  return { services };
}
