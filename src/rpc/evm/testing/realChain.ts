import {
  type InProcessEvmNode,
  nodeEvmServices,
  startInProcessDevNode,
} from "../../../../test/integration/inProcessNode.js";
import type { Clock } from "../../../util/clock.js";
import { silentLogger } from "../../../util/logger.js";
import { toData } from "../encode/hex.js";
import type {
  CallOptions,
  CallRequest,
  CallResult,
  EvmBlock,
  EvmServices,
  Executor,
  NodeInfoSource,
  SubmitResult,
} from "../services.js";
import { type EvmRpcConfig, type RunningEvmRpc, startEvmRpc } from "../transports/server.js";
import {
  ECHO,
  ECHO_CODE,
  FAILER,
  FAILER_CODE,
  LOGGER,
  LOGGER_CODE,
  PANICKER,
  PANICKER_CODE,
  REVERTER,
  REVERTER_CODE,
  SLOW,
  SLOW_CODE,
  STORING_INITCODE,
  word,
} from "./contracts.js";
import { GWEI, keyFromPrivate, signTx, type TestKey } from "./signing.js";
import { TEST_EVM_CONFIG } from "./startFakeEvmRpc.js";

/**
 * A real EVM chain for the RPC's behaviour tests: an in-process `cometh dev` node (the real EVM app,
 * mempool, consensus and stores; automine off, so txs wait until `mine()` as on a busy chain) whose
 * genesis holds a few small contracts at fixed addresses, and the real node's services
 * (node/evmServices.ts) behind Ethereum JSON-RPC servers the tests start with the settings they
 * need. Every answer comes from the real chain; the test hooks only watch calls (`lastCall`) and can
 * report catching up (`syncing`), which a lone node never does. Test support only.
 */

export * from "./contracts.js";

const GENESIS_EVM = {
  alloc: {
    [toData(ECHO)]: { code: toData(ECHO_CODE) },
    [toData(REVERTER)]: { code: toData(REVERTER_CODE) },
    [toData(PANICKER)]: { code: toData(PANICKER_CODE) },
    [toData(FAILER)]: { code: toData(FAILER_CODE) },
    [toData(SLOW)]: { code: toData(SLOW_CODE) },
    [toData(LOGGER)]: { code: toData(LOGGER_CODE), storage: { [toData(new Uint8Array(32))]: toData(word(42n)) } },
  },
};

export interface EvmTestRpc {
  readonly rpc: RunningEvmRpc;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** ws://127.0.0.1:<port> */
  readonly wsUrl: string;
  close(): Promise<void>;
}

export interface StartTestRpcOptions {
  readonly clock?: Clock;
  readonly filterTimeoutMs?: number;
  /** Other services than the chain's (e.g. the chain's without a keyring). */
  readonly services?: EvmServices;
}

export interface EvmTestChain {
  readonly node: InProcessEvmNode;
  /** The real node's services, watched (lastCall) and with `syncing` applied. */
  readonly services: EvmServices;
  /** The funded dev accounts (their keys are in the node's keyring). */
  readonly keys: readonly TestKey[];
  /** eth_syncing reports catching up while true. */
  syncing: boolean;
  /** The last request and options the execution services were asked to run. */
  lastCall: { request: CallRequest; opts: CallOptions } | undefined;
  /** Block `n` as the services see it (throws when there is none). */
  block(n: number): EvmBlock;
  /** Commits one block with the txs waiting in the mempool; resolves once the feed announced it. */
  mine(): Promise<EvmBlock>;
  /** Submits signed tx bytes to the node's mempool (CheckTx). */
  submit(raw: Uint8Array): Promise<SubmitResult>;
  /** Starts Ethereum JSON-RPC servers (HTTP and WebSocket) over the chain: TEST_EVM_CONFIG + overrides. */
  startRpc(overrides?: Partial<EvmRpcConfig>, opts?: StartTestRpcOptions): Promise<EvmTestRpc>;
  close(): Promise<void>;
}

/** `target` with some members replaced; the others are target's own, bound to it. */
function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(overrides, key)) return (overrides as Record<string | symbol, unknown>)[key];
      const v = Reflect.get(t, key, t) as unknown;
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}

export interface EvmTestChainOptions {
  /**
   * Seed blocks 1-3 (default true): block 1 holds a legacy transfer k0→k1 of 1 ether, an EIP-2930
   * call k1→ECHO and an EIP-1559 call k2→LOGGER (value 5, to k1); block 2 an EIP-1559 creation by k0
   * (STORING_INITCODE) and a legacy call k1→LOGGER (value 7, to k2); block 3 is empty.
   */
  readonly seed?: boolean;
  /** The node's `[json-rpc] allow-unprotected-txs` (its CheckTx then admits pre-EIP-155 txs); default false. */
  readonly allowUnprotectedTxs?: boolean;
}

export async function startEvmTestChain(opts: EvmTestChainOptions = {}): Promise<EvmTestChain> {
  const node = await startInProcessDevNode(
    opts.allowUnprotectedTxs === true ? { "--json-rpc.allow-unprotected-txs": true } : {},
    { automine: false },
    undefined,
    GENESIS_EVM,
  );
  const dev = node.node.dev;
  if (dev === undefined) {
    await node.close();
    throw new TypeError("the in-process node is not a dev chain");
  }
  const built = nodeEvmServices(node.node);
  const real = built.services;
  const keys = node.node.devAccounts.map((a) => keyFromPrivate(Buffer.from(a.privateKey.slice(2), "hex")));
  const servers = new Set<EvmTestRpc>();

  const chain: EvmTestChain = {
    node,
    services: real,
    keys,
    syncing: false,
    lastCall: undefined,
    block(n) {
      const b = real.chain.blockByNumber(n);
      if (b === undefined || b instanceof Promise) throw new TypeError(`no block ${n}`);
      return b;
    },
    async mine() {
      await dev.mine(1n);
      built.deliver();
      return chain.block(real.chain.latestHeight() as number);
    },
    submit: (raw) => real.mempool.submit(raw),
    async startRpc(overrides = {}, o = {}) {
      const rpc = await startEvmRpc(
        { ...TEST_EVM_CONFIG, ...overrides },
        o.services ?? chain.services,
        silentLogger(),
        {
          ...(o.clock === undefined ? {} : { clock: o.clock }),
          ...(o.filterTimeoutMs === undefined ? {} : { filterTimeoutMs: o.filterTimeoutMs }),
        },
      );
      const server: EvmTestRpc = {
        rpc,
        url: `http://${rpc.httpAddress}`,
        wsUrl: `ws://${rpc.wsAddress}`,
        close: async () => {
          servers.delete(server);
          await rpc.close();
        },
      };
      servers.add(server);
      return server;
    },
    async close() {
      for (const s of [...servers]) await s.close();
      await node.close();
    },
  };

  const execution: Executor = withOverrides(real.execution, {
    call: (request, o) => {
      chain.lastCall = { request, opts: o };
      return real.execution.call(request, o);
    },
    ...(real.execution.callNow === undefined
      ? {}
      : {
          callNow: (request: CallRequest, o: CallOptions) => {
            chain.lastCall = { request, opts: o };
            return real.execution.callNow?.(request, o) as CallResult;
          },
        }),
    ...(real.execution.peekCall === undefined
      ? {}
      : {
          peekCall: (request: CallRequest, o: CallOptions) => {
            chain.lastCall = { request, opts: o };
            return real.execution.peekCall?.(request, o);
          },
        }),
  });
  const info: NodeInfoSource = withOverrides(real.node, {
    syncStatus: async () => {
      const s = await real.node.syncStatus();
      return chain.syncing ? { ...s, catchingUp: true } : s;
    },
  });
  (chain as { services: EvmServices }).services = { ...real, execution, node: info };

  if (opts.seed !== false) {
    try {
      await seed(chain);
    } catch (err) {
      await chain.close();
      throw err;
    }
  }
  return chain;
}

async function submitAll(chain: EvmTestChain, raws: Uint8Array[]): Promise<void> {
  for (const raw of raws) {
    const r = await chain.submit(raw);
    if (!r.accepted) throw new TypeError(`seed tx refused: ${r.log}`);
  }
}

async function seed(chain: EvmTestChain): Promise<void> {
  const [k0, k1, k2] = chain.keys as [TestKey, TestKey, TestKey];
  await submitAll(chain, [
    signTx({ type: 0, nonce: 0n, gasPrice: 2n * GWEI, gasLimit: 21000n, to: k1.address, value: 10n ** 18n }, k0).raw,
    signTx(
      {
        type: 1,
        nonce: 0n,
        gasPrice: 2n * GWEI,
        gasLimit: 50000n,
        to: ECHO,
        value: 0n,
        data: Uint8Array.from([1, 2, 3]),
        accessList: [[ECHO, [new Uint8Array(32)]]],
      },
      k1,
    ).raw,
    signTx(
      {
        type: 2,
        nonce: 0n,
        maxFeePerGas: 3n * GWEI,
        maxPriorityFeePerGas: GWEI,
        gasLimit: 60000n,
        to: LOGGER,
        value: 5n,
        data: k1.address,
      },
      k2,
    ).raw,
  ]);
  await chain.mine();
  await submitAll(chain, [
    signTx(
      {
        type: 2,
        nonce: 1n,
        maxFeePerGas: 3n * GWEI,
        maxPriorityFeePerGas: 2n * GWEI,
        gasLimit: 200000n,
        value: 0n,
        data: STORING_INITCODE,
      },
      k0,
    ).raw,
    signTx({ type: 0, nonce: 1n, gasPrice: 3n * GWEI, gasLimit: 60000n, to: LOGGER, value: 7n, data: k2.address }, k1)
      .raw,
  ]);
  await chain.mine();
  await chain.mine();
}
