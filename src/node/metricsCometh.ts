import type { Registry } from "prom-client";
import type { MempoolMetricsHooks } from "../mempool/index.js";
import type { RpcMethodObserver, RpcObserver } from "../rpc/jsonrpc/index.js";
import type { FinalizeBlockResponse } from "../types/index.js";
import { type HistogramChild, HistogramFamily, type ScalarChild, ScalarFamily } from "./metricsKit.js";

/**
 * cometh's own metrics beside CometBFT's (always under the `cometh_` prefix): the EVM's gas and txs
 * per block, CheckTx outcomes by reason, the base fee, and per-method request counts and latencies of
 * both RPC servers (geth's rpc/duration/... and rpc/requests, in Prometheus naming), their open
 * subscriptions and the EVM filters.
 */

export interface ComethMetricsSources {
  /** The base fee (wei) of the latest block; undefined when the app is not the EVM. */
  baseFee?(): bigint | undefined;
  /** Live node RPC event subscriptions (WebSocket `subscribe`, broadcast_tx_commit waits). */
  nodeSubscriptions(): number;
  /** Live eth_subscribe subscriptions and installed filters; undefined without the EVM JSON-RPC. */
  evmSubscriptions?(): { subscriptions: number; filters: number } | undefined;
}

/** ABCI codes of the EVM app's CheckTx (app/evm/errors.ts CHECK_TX_CODES, codespace "sdk"). */
const EVM_REASONS: Readonly<Record<number, string>> = {
  2: "tx_decode",
  3: "invalid_sequence",
  5: "insufficient_funds",
  11: "out_of_gas",
  13: "insufficient_fee",
  24: "invalid_signer",
  28: "invalid_chain_id",
  29: "invalid_type",
};

const MEMPOOL_REASONS = {
  full: "mempool_full",
  too_large: "tx_too_large",
  in_cache: "tx_in_cache",
  duplicate: "already_in_mempool",
} as const;

/** Latency buckets for RPC calls: 50 µs to 10 s. */
const RPC_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
];

/** One method's series, made on its first call (a method nobody calls adds no series). */
class MethodRecorder implements RpcMethodObserver {
  readonly #make: () => { requests: ScalarChild; errors: ScalarChild; duration: HistogramChild };
  #children: { requests: ScalarChild; errors: ScalarChild; duration: HistogramChild } | undefined;

  constructor(make: () => { requests: ScalarChild; errors: ScalarChild; duration: HistogramChild }) {
    this.#make = make;
  }

  done(startMs: number, failed: boolean): void {
    this.#children ??= this.#make();
    const c = this.#children;
    c.requests.value++;
    if (failed) c.errors.value++;
    c.duration.observe((performance.now() - startMs) / 1000);
  }
}

class ServerObserver implements RpcObserver {
  readonly #server: string;
  readonly #metrics: ComethMetrics;
  readonly #methods = new Map<string, MethodRecorder>();

  constructor(server: string, metrics: ComethMetrics) {
    this.#server = server;
    this.#metrics = metrics;
  }

  method(name: string): RpcMethodObserver {
    let m = this.#methods.get(name);
    if (m === undefined) {
      m = this.#metrics.recorder(this.#server, name);
      this.#methods.set(name, m);
    }
    return m;
  }
}

export class ComethMetrics {
  readonly #requests: ScalarFamily;
  readonly #errors: ScalarFamily;
  readonly #duration: HistogramFamily;
  readonly #checkTx: ScalarFamily;
  readonly #checkTxAccepted: ScalarChild;
  readonly #checkTxByReason = new Map<string, ScalarChild>();
  readonly #blockGas: ScalarFamily;
  readonly #gasTotal: ScalarFamily;
  readonly #blockTxs: ScalarFamily;
  readonly #txsTotal: ScalarFamily;
  readonly #failedTxs: ScalarFamily;
  /** The node RPC's observer (`server="node"`). */
  readonly nodeRpc: RpcObserver;
  /** The Ethereum JSON-RPC's observer (`server="evm"`). */
  readonly evmRpc: RpcObserver;

  constructor(registry: Registry, sources: ComethMetricsSources) {
    this.#requests = new ScalarFamily(registry, {
      name: "cometh_rpc_requests_total",
      help: "RPC calls answered, per server (node: CometBFT RPC, evm: Ethereum JSON-RPC) and method.",
      type: "counter",
      labelNames: ["server", "method"],
    });
    this.#errors = new ScalarFamily(registry, {
      name: "cometh_rpc_request_errors_total",
      help: "RPC calls that ended in an error, per server and method.",
      type: "counter",
      labelNames: ["server", "method"],
    });
    this.#duration = new HistogramFamily(registry, {
      name: "cometh_rpc_request_duration_seconds",
      help: "Time from a call's dispatch to its result, per server and method.",
      buckets: RPC_BUCKETS,
      labelNames: ["server", "method"],
    });
    new ScalarFamily(registry, {
      name: "cometh_rpc_subscriptions",
      help: "Open event subscriptions (node: WebSocket subscribe and broadcast_tx_commit waits; evm: eth_subscribe).",
      type: "gauge",
      labelNames: ["server"],
      collect: (f) => {
        f.child("node").value = sources.nodeSubscriptions();
        const evm = sources.evmSubscriptions?.();
        if (evm !== undefined) f.child("evm").value = evm.subscriptions;
      },
    });
    new ScalarFamily(registry, {
      name: "cometh_evm_filters",
      help: "Installed eth_newFilter, eth_newBlockFilter and eth_newPendingTransactionFilter filters.",
      type: "gauge",
      collect: (f) => f.set(sources.evmSubscriptions?.()?.filters ?? 0),
    });
    this.#checkTx = new ScalarFamily(registry, {
      name: "cometh_checktx_total",
      help: 'New txs offered to the mempool, by result ("accepted", "rejected") and reason (the app\'s rejection, or the mempool\'s: mempool_full, tx_too_large, tx_in_cache, already_in_mempool).',
      type: "counter",
      labelNames: ["result", "reason"],
    });
    this.#checkTxAccepted = this.#checkTx.child("accepted", "ok");
    this.#blockGas = new ScalarFamily(registry, {
      name: "cometh_evm_block_gas_used",
      help: "Gas used by the txs of the latest block.",
      type: "gauge",
    });
    this.#gasTotal = new ScalarFamily(registry, {
      name: "cometh_evm_gas_used_total",
      help: "Gas used by every tx since the node started.",
      type: "counter",
    });
    this.#blockTxs = new ScalarFamily(registry, {
      name: "cometh_evm_block_txs",
      help: "Txs in the latest block.",
      type: "gauge",
    });
    this.#txsTotal = new ScalarFamily(registry, {
      name: "cometh_evm_txs_total",
      help: "Txs executed since the node started.",
      type: "counter",
    });
    this.#failedTxs = new ScalarFamily(registry, {
      name: "cometh_evm_failed_txs_total",
      help: "Txs executed with a non-zero result code (reverted, out of gas) since the node started.",
      type: "counter",
    });
    if (sources.baseFee !== undefined) {
      const baseFee = sources.baseFee;
      new ScalarFamily(registry, {
        name: "cometh_evm_base_fee_wei",
        help: "Base fee per gas of the latest block, in wei.",
        type: "gauge",
        collect: (f) => f.set(Number(baseFee() ?? 0n)),
      });
    }
    this.nodeRpc = new ServerObserver("node", this);
    this.evmRpc = new ServerObserver("evm", this);
  }

  /** @internal The recorder of one server's method. */
  recorder(server: string, method: string): MethodRecorder {
    return new MethodRecorder(() => ({
      requests: this.#requests.child(server, method),
      errors: this.#errors.child(server, method),
      duration: this.#duration.child(server, method),
    }));
  }

  /** A FinalizeBlock response: gas and txs of the block. */
  onFinalizeBlock(res: FinalizeBlockResponse): void {
    let gas = 0n;
    let failed = 0;
    for (const r of res.txResults) {
      gas += r.gasUsed;
      if (r.code !== 0) failed++;
    }
    this.#blockGas.set(Number(gas));
    this.#gasTotal.inc(Number(gas));
    this.#blockTxs.set(res.txResults.length);
    this.#txsTotal.inc(res.txResults.length);
    this.#failedTxs.inc(failed);
  }

  /** The CheckTx outcomes, fed by the mempool's hooks (chained after CometBFT's mempool metrics). */
  mempoolHooks(next: MempoolMetricsHooks): MempoolMetricsHooks {
    return {
      added: (size) => {
        this.#checkTxAccepted.value++;
        next.added(size);
      },
      failed: (code, codespace) => {
        this.#rejected(codespace === "sdk" ? (EVM_REASONS[code] ?? `code_${code}`) : `code_${code}`);
        next.failed(code, codespace);
      },
      rejected: (reason) => {
        this.#rejected(MEMPOOL_REASONS[reason]);
        next.rejected(reason);
      },
      evicted: () => next.evicted(),
      rechecked: () => next.rechecked(),
    };
  }

  #rejected(reason: string): void {
    let child = this.#checkTxByReason.get(reason);
    if (child === undefined) {
      child = this.#checkTx.child("rejected", reason);
      this.#checkTxByReason.set(reason, child);
    }
    child.value++;
  }
}
