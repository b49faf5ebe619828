import { createServer, type Server } from "node:http";
import { Registry } from "prom-client";
import type { MempoolMetricsHooks } from "../mempool/index.js";
import type { Block } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { CometbftMetrics, type CometbftMetricsSources } from "./metricsCometbft.js";
import { ComethMetrics, type ComethMetricsSources } from "./metricsCometh.js";

/** What the metrics read from the node when Prometheus scrapes. */
export interface MetricsSources extends CometbftMetricsSources, ComethMetricsSources {}

/**
 * The node's metrics (`[instrumentation] prometheus = true`), served as text on `/metrics`:
 * CometBFT's full set under its names and the configured namespace (default `cometbft`;
 * metricsCometbft.ts) and cometh's EVM and RPC metrics under `cometh_` (metricsCometh.ts), every
 * series labelled with `chain_id`. The subsystems report through hooks (consensus, mempool, p2p,
 * the RPC observers) and the wrappers of the ABCI connections and the block store made here.
 */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly cometbft: CometbftMetrics;
  readonly cometh: ComethMetrics;
  /** Mempool hooks: CometBFT's mempool metrics and cometh's CheckTx outcomes. */
  readonly mempool: MempoolMetricsHooks;

  constructor(namespace: string, chainId: string, sources: MetricsSources) {
    this.registry.setDefaultLabels({ chain_id: chainId });
    this.cometbft = new CometbftMetrics(this.registry, namespace, sources);
    this.cometh = new ComethMetrics(this.registry, sources);
    this.cometbft.onFinalizeBlock = (res) => this.cometh.onFinalizeBlock(res);
    this.mempool = this.cometh.mempoolHooks(this.cometbft);
  }

  /** Records a committed block (from the NewBlock event); `bySync` when block sync applied it. */
  onBlock(block: Block, sizeBytes: number, bySync: boolean): void {
    this.cometbft.onBlock(block, sizeBytes, bySync);
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
