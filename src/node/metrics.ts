import { createServer, type Server } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ChainState } from "../types/index.js";
import type { Logger } from "../util/logger.js";

/** What the metrics read from the node when Prometheus scrapes. */
export interface MetricsSources {
  chainState(): ChainState;
  mempoolSize(): number;
  mempoolSizeBytes(): number;
  /** Current consensus round (of the height in progress). */
  round(): number;
}

/**
 * CometBFT's node metrics (`[instrumentation] prometheus = true`) under its names and the configured
 * namespace (default `cometbft`): consensus_height, consensus_rounds, consensus_validators,
 * consensus_validators_power, consensus_num_txs, consensus_total_txs, consensus_block_size_bytes,
 * consensus_block_interval_seconds, consensus_latest_block_height, mempool_size, mempool_size_bytes,
 * p2p_peers, state_block_processing_time. Served as text on `/metrics`.
 */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly #numTxs: Gauge;
  readonly #totalTxs: Counter;
  readonly #blockSize: Gauge;
  readonly #blockInterval: Histogram;
  readonly #latestHeight: Gauge;
  #lastBlockTimeNs: bigint | undefined;

  constructor(namespace: string, chainId: string, sources: MetricsSources) {
    const ns = namespace === "" ? "" : `${namespace}_`;
    this.registry.setDefaultLabels({ chain_id: chainId });
    const reg = [this.registry];
    new Gauge({
      name: `${ns}consensus_height`,
      help: "Height of the chain.",
      registers: reg,
      collect() {
        this.set(sources.chainState().lastBlockHeight + 1);
      },
    });
    new Gauge({
      name: `${ns}consensus_rounds`,
      help: "Number of rounds.",
      registers: reg,
      collect() {
        this.set(sources.round());
      },
    });
    new Gauge({
      name: `${ns}consensus_validators`,
      help: "Number of validators.",
      registers: reg,
      collect() {
        this.set(sources.chainState().validators.validators.length);
      },
    });
    new Gauge({
      name: `${ns}consensus_validators_power`,
      help: "Total power of all validators.",
      registers: reg,
      collect() {
        this.set(Number(sources.chainState().validators.totalVotingPower()));
      },
    });
    new Gauge({
      name: `${ns}mempool_size`,
      help: "Number of uncommitted transactions in the mempool.",
      registers: reg,
      collect() {
        this.set(sources.mempoolSize());
      },
    });
    new Gauge({
      name: `${ns}mempool_size_bytes`,
      help: "Total size of the mempool in bytes.",
      registers: reg,
      collect() {
        this.set(sources.mempoolSizeBytes());
      },
    });
    new Gauge({ name: `${ns}p2p_peers`, help: "Number of peers.", registers: reg }).set(0);
    this.#numTxs = new Gauge({ name: `${ns}consensus_num_txs`, help: "Number of transactions.", registers: reg });
    this.#totalTxs = new Counter({
      name: `${ns}consensus_total_txs`,
      help: "Total number of transactions.",
      registers: reg,
    });
    this.#blockSize = new Gauge({
      name: `${ns}consensus_block_size_bytes`,
      help: "Size of the block.",
      registers: reg,
    });
    this.#blockInterval = new Histogram({
      name: `${ns}consensus_block_interval_seconds`,
      help: "Time between this and the last block.",
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: reg,
    });
    this.#latestHeight = new Gauge({
      name: `${ns}consensus_latest_block_height`,
      help: "The latest block height.",
      registers: reg,
    });
  }

  /** Records a committed block (from the NewBlock event). */
  onBlock(height: number, timeNs: bigint, numTxs: number, sizeBytes: number): void {
    this.#numTxs.set(numTxs);
    this.#totalTxs.inc(numTxs);
    this.#blockSize.set(sizeBytes);
    this.#latestHeight.set(height);
    if (this.#lastBlockTimeNs !== undefined && timeNs > this.#lastBlockTimeNs) {
      this.#blockInterval.observe(Number(timeNs - this.#lastBlockTimeNs) / 1e9);
    }
    this.#lastBlockTimeNs = timeNs;
  }
}

/** Serves `/metrics` on `host:port` with at most `maxOpen` connections (0 = unlimited). */
export async function serveMetrics(
  metrics: NodeMetrics,
  host: string,
  port: number,
  maxOpen: number,
  log: Logger,
): Promise<{ address: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url !== "/metrics" && req.url?.startsWith("/metrics?") !== true) {
      res.statusCode = 404;
      res.end("404 page not found\n");
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.setHeader("Content-Type", metrics.registry.contentType);
        res.end(text);
      },
      (err: unknown) => {
        log.error({ err }, "failed to collect metrics");
        res.statusCode = 500;
        res.end();
      },
    );
  });
  if (maxOpen > 0) server.maxConnections = maxOpen;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: host === "" ? undefined : host, port }, resolve);
  });
  const a = server.address();
  const address = typeof a === "object" && a !== null ? `${a.address}:${a.port}` : `${host}:${port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
