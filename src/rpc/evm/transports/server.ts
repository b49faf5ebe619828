import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type Clock, systemClock } from "../../../util/clock.js";
import type { Logger } from "../../../util/logger.js";
import { type FastHttpOptions, type RpcObserver, serveFastHttp } from "../../jsonrpc/index.js";
import type { EvmRpcSettings, EvmRuntime } from "../context.js";
import { EvmRpcConfigError } from "../errors.js";
import { FilterManager } from "../filters/filterManager.js";
import { LogsMemo } from "../filters/logsMemo.js";
import { NAMESPACE_NAMES } from "../namespaces/index.js";
import { newProfilerState } from "../namespaces/profiling.js";
import type { EvmServices } from "../services.js";
import { ChainFeed } from "../subscriptions/chainFeed.js";
import { acceptedMediaType, answerBody, createHttpHandler, DEFAULT_BODY_LIMIT, type HttpHandlerDeps } from "./http.js";
import { type Listener, listen, parseEvmAddress } from "./listen.js";
import { createWsTransport, DEFAULT_WS_MAX_MESSAGE_BYTES, type WsTransport } from "./ws.js";

/**
 * startEvmRpc: the HTTP server on `address` and the WebSocket server on `ws-address` (one server
 * when both name the same address), sharing one runtime (filters, the chain feed, settings).
 */

/** The `[json-rpc]` settings the servers use (config's JsonRpcConfig satisfies it). */
export interface EvmRpcConfig {
  /** host:port (tcp:// and unix:// also accepted); port 0 picks a free port. */
  readonly address: string;
  readonly wsAddress: string;
  /** Allowed WebSocket Origin hostnames ("*" = any). */
  readonly wsOrigins?: readonly string[];
  readonly api: readonly string[];
  readonly gasCap: bigint;
  readonly evmTimeoutMs: number;
  /** Ether (float); 0 = no cap. */
  readonly txfeeCap: number;
  readonly filterCap: number;
  readonly feehistoryCap: number;
  readonly logsCap: number;
  readonly blockRangeCap: number;
  readonly httpTimeoutMs: number;
  readonly httpIdleTimeoutMs: number;
  readonly allowUnprotectedTxs: boolean;
  readonly allowInsecureUnlock?: boolean;
  readonly maxOpenConnections: number;
  readonly batchRequestLimit: number;
  readonly batchResponseMaxSize: number;
  readonly enableProfiling?: boolean;
  /** HTTP body limit (geth: 5 MiB). */
  readonly maxBodyBytes?: number;
  /** WebSocket read limit (Cosmos EVM: 1 MiB). */
  readonly wsMaxMessageBytes?: number;
}

export interface StartEvmRpcOptions {
  /** Filter expiry runs on this clock (tests pass a ManualClock). */
  readonly clock?: Clock;
  /** Filter expiry (geth: 5 minutes). */
  readonly filterTimeoutMs?: number;
  /** Records each method's calls (metrics). */
  readonly observer?: RpcObserver;
}

export interface RunningEvmRpc {
  /** The bound HTTP address, host:port (the real port when 0 was asked for). */
  readonly httpAddress: string;
  readonly wsAddress: string;
  /** Shared state, for tests and the node (live filter count, feed). */
  readonly runtime: EvmRuntime;
  close(): Promise<void>;
}

function validate(c: EvmRpcConfig): void {
  for (const ns of c.api) {
    if (!(NAMESPACE_NAMES as readonly string[]).includes(ns)) {
      throw new EvmRpcConfigError(
        `[json-rpc] api has unknown namespace ${JSON.stringify(ns)}; valid namespaces: ${NAMESPACE_NAMES.join(", ")}`,
      );
    }
  }
  const nonNegative = [
    ["evm-timeout", c.evmTimeoutMs],
    ["txfee-cap", c.txfeeCap],
    ["filter-cap", c.filterCap],
    ["logs-cap", c.logsCap],
    ["block-range-cap", c.blockRangeCap],
    ["http-timeout", c.httpTimeoutMs],
    ["http-idle-timeout", c.httpIdleTimeoutMs],
    ["max-open-connections", c.maxOpenConnections],
    ["batch-request-limit", c.batchRequestLimit],
    ["batch-response-max-size", c.batchResponseMaxSize],
  ] as const;
  for (const [key, v] of nonNegative) {
    if (!Number.isFinite(v) || v < 0) throw new EvmRpcConfigError(`[json-rpc] ${key} can't be negative (got ${v})`);
  }
  if (c.gasCap < 0n) throw new EvmRpcConfigError(`[json-rpc] gas-cap can't be negative (got ${c.gasCap})`);
  if (c.feehistoryCap <= 0) {
    throw new EvmRpcConfigError(`[json-rpc] feehistory-cap must be positive (got ${c.feehistoryCap})`);
  }
}

/** txfee-cap (ether, float) in wei. */
function etherToWei(ether: number): bigint {
  return BigInt(Math.round(ether * 1e9)) * 1_000_000_000n;
}

export function settingsFromConfig(c: EvmRpcConfig): EvmRpcSettings {
  return {
    gasCap: c.gasCap,
    evmTimeoutMs: c.evmTimeoutMs,
    txFeeCapWei: etherToWei(c.txfeeCap),
    filterCap: c.filterCap,
    feeHistoryCap: c.feehistoryCap,
    logsCap: c.logsCap,
    blockRangeCap: c.blockRangeCap,
    allowUnprotectedTxs: c.allowUnprotectedTxs,
    allowInsecureUnlock: c.allowInsecureUnlock ?? true,
    enableProfiling: c.enableProfiling ?? false,
    namespaces: new Set(c.api),
  };
}

interface Served {
  readonly http: Server;
  readonly listener: Listener;
  readonly sockets: Set<Socket>;
}

/** Starts the EVM JSON-RPC servers. The caller checks `[json-rpc] enable`. */
export async function startEvmRpc(
  config: EvmRpcConfig,
  services: EvmServices,
  log: Logger,
  opts: StartEvmRpcOptions = {},
): Promise<RunningEvmRpc> {
  validate(config);
  const httpTarget = parseEvmAddress("address", config.address);
  const wsTarget = parseEvmAddress("ws-address", config.wsAddress);
  const settings = settingsFromConfig(config);
  const clock = opts.clock ?? systemClock;
  const feed = new ChainFeed(services, log);
  const filters = new FilterManager({
    services,
    feed,
    clock,
    settings,
    ...(opts.filterTimeoutMs === undefined ? {} : { timeoutMs: opts.filterTimeoutMs }),
  });
  const runtime: EvmRuntime = {
    settings,
    filters,
    feed,
    clock,
    log,
    profiler: newProfilerState(),
    logsMemo: new LogsMemo(),
    ...(opts.observer === undefined ? {} : { observer: opts.observer }),
  };

  const httpDeps: HttpHandlerDeps = {
    services,
    runtime,
    maxBodyBytes: config.maxBodyBytes ?? DEFAULT_BODY_LIMIT,
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
    httpTimeoutMs: config.httpTimeoutMs,
  };
  const httpHandler = createHttpHandler(httpDeps);
  const ws: WsTransport = createWsTransport({
    services,
    runtime,
    origins: config.wsOrigins ?? ["127.0.0.1", "localhost"],
    maxMessageBytes: config.wsMaxMessageBytes ?? DEFAULT_WS_MAX_MESSAGE_BYTES,
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
    callTimeoutMs: config.httpTimeoutMs,
  });

  const upgraded = new WeakSet<Socket>();
  const served: Served[] = [];
  const serve = async (
    target: ReturnType<typeof parseEvmAddress>,
    role: { http: boolean; ws: boolean },
  ): Promise<Served> => {
    const server = createHttpServer(
      {
        requestTimeout: config.httpTimeoutMs,
        headersTimeout: config.httpTimeoutMs > 0 ? Math.min(config.httpTimeoutMs, 60_000) : 60_000,
        keepAliveTimeout: config.httpIdleTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      role.http
        ? httpHandler
        : (_req, res) => {
            res.statusCode = 400;
            res.setHeader("Content-Type", "text/plain; charset=utf-8");
            res.end("Bad Request: this address serves JSON-RPC over WebSocket only\n");
          },
    );
    if (role.ws) {
      server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        upgraded.add(req.socket);
        ws.handleUpgrade(req, socket, head);
      });
    } else {
      server.on("upgrade", (_req: IncomingMessage, socket: Duplex) => {
        socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      });
    }
    // Connections come from our listener (max-open-connections); 'listening' starts the timeout checks.
    server.emit("listening");
    const sockets = new Set<Socket>();
    // JSON-RPC POSTs are answered on the fast path; it hands everything else to `server`.
    const fast: FastHttpOptions | undefined = role.http
      ? {
          path: "/",
          acceptsMediaType: acceptedMediaType,
          maxBodyBytes: httpDeps.maxBodyBytes,
          requestTimeoutMs: config.httpTimeoutMs,
          idleTimeoutMs: config.httpIdleTimeoutMs,
          handle: (body, started) => answerBody(httpDeps, body, started),
          onError: (err) => log.error({ err }, "EVM RPC HTTP handler failed"),
          fallback: server,
        }
      : undefined;
    const listener = await listen(target, config.maxOpenConnections, (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      if (fast !== undefined) serveFastHttp(socket, fast);
      else server.emit("connection", socket);
      socket.resume();
    });
    const s = { http: server, listener, sockets };
    served.push(s);
    return s;
  };

  let stopRollback: (() => void) | undefined;
  const closeAll = async () => {
    ws.closeAll();
    await Promise.all(
      served.map(async (s) => {
        const closing = s.listener.close();
        for (const socket of s.sockets) if (!upgraded.has(socket)) socket.destroy();
        s.http.close(() => undefined);
        await closing;
      }),
    );
    filters.close();
    feed.close();
    stopRollback?.();
  };

  const sameAddress = config.address === config.wsAddress && !(httpTarget.protocol === "tcp" && httpTarget.port === 0);
  let httpAddress: string;
  let wsAddress: string;
  try {
    const httpServed = await serve(httpTarget, { http: true, ws: sameAddress });
    httpAddress = httpServed.listener.address;
    wsAddress = sameAddress ? httpAddress : (await serve(wsTarget, { http: false, ws: true })).listener.address;
  } catch (err) {
    await closeAll();
    throw err;
  }
  feed.start();
  stopRollback = services.events.onRollback?.(() => {
    runtime.logsMemo.clear();
    filters.forgetCollected();
  });
  log.info({ address: httpAddress }, "Starting EVM JSON-RPC HTTP server");
  log.info({ address: wsAddress }, "Starting EVM JSON-RPC WebSocket server");

  let closing: Promise<void> | undefined;
  return {
    httpAddress,
    wsAddress,
    runtime,
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}
