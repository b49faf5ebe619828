import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { ListenAddress } from "../../../config/index.js";
import { parseListenAddress } from "../../../config/index.js";
import { type Clock, systemClock } from "../../../util/clock.js";
import type { Logger } from "../../../util/logger.js";
import {
  type ConnectionSharing,
  createCors,
  createPostHandler,
  createWsTransport,
  DEFAULT_CORS,
  describeListenAddress,
  type FastAnswer,
  type FastHttpOptions,
  type HttpTransport,
  isPromise,
  type MaybePromise,
  type RpcObserver,
  serveHttp,
  simpleAnswer,
  socketTargetOf,
  type WsTransport,
} from "../../jsonrpc/index.js";
import { type EvmPayloads, evmPayloads, FrameSink, HTTP_REQUEST } from "../calls.js";
import type { EvmRpcSettings, EvmRuntime } from "../context.js";
import { EvmRpcConfigError } from "../errors.js";
import { FilterManager } from "../filters/filterManager.js";
import { LogsMemo } from "../filters/logsMemo.js";
import { NAMESPACE_NAMES } from "../namespaces/index.js";
import { newProfilerState } from "../namespaces/profiling.js";
import type { EvmServices } from "../services.js";
import { ChainFeed } from "../subscriptions/chainFeed.js";

/**
 * startEvmRpc: the HTTP server on `address` and the WebSocket server on `ws-address` (one server
 * when both name the same address), sharing one runtime (filters, the chain feed, settings), on
 * the shared transports (rpc/jsonrpc/http.ts, ws.ts).
 *
 * HTTP is Cosmos EVM's gorilla mux with only `POST /` and geth's rpc.Server.ServeHTTP checks
 * (createPostHandler), behind rs/cors' Default policy; each request gets http-timeout − 100 ms
 * before its unfinished calls answer -32002 (geth). JSON-RPC POSTs are answered on the fast path.
 *
 * WebSocket is served on `ws-address`, path `/`: every method is callable (geth semantics, batches
 * included, ids echoed), plus eth_subscribe/eth_unsubscribe. The upgrade checks Origin against
 * ws-origins (hostnames; "*" = any; no Origin header = allowed), as Cosmos EVM does. Frames are
 * handled concurrently; a subscription's notifications start after its id was sent. A frame over
 * the read limit, or a client that stops reading, closes the connection.
 */

/** geth's defaultBodyLimit. */
export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
/** Cosmos EVM's WebSocket read limit. */
export const DEFAULT_WS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Unsent bytes after which a slow WebSocket client is disconnected. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/**
 * Unsent bytes past which a WebSocket connection's frames are no longer read until the client
 * takes its answers (each small answer queued costs far more memory than its bytes); a client
 * that takes none for http-timeout is disconnected.
 */
const PAUSE_READING_BYTES = 1024 * 1024;
const ACCEPTED_TYPES = new Set(["application/json", "application/json-rpc", "application/jsonrequest"]);

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
  /** A filter not polled for this long is removed (geth: 5 minutes). */
  readonly filterTimeoutMs?: number;
  readonly enableProfiling?: boolean;
  /** HTTP body limit (geth: 5 MiB). */
  readonly maxBodyBytes?: number;
  /** WebSocket read limit (Cosmos EVM: 1 MiB). */
  readonly wsMaxMessageBytes?: number;
}

export interface StartEvmRpcOptions {
  /** Filter expiry runs on this clock (tests pass a ManualClock). */
  readonly clock?: Clock;
  /** Filter expiry, over the config's `filter-timeout` (tests). */
  readonly filterTimeoutMs?: number;
  /** Records each method's calls (metrics). */
  readonly observer?: RpcObserver;
  /**
   * Child processes that take some of the HTTP address's connections (`[json-rpc] read-processes`,
   * node/evm/readProcesses.ts): given the main process's side once the address listens.
   */
  readonly readProcesses?: { share(hooks: ReadProcessHooks): ConnectionSharing };
}

/** What the main process does for its read processes. */
export interface ReadProcessHooks {
  /**
   * The whole HTTP answer (status line, headers, body) to a POST body a read process passed on, whose
   * first byte arrived at `started` (ms since epoch): the fast path's answer to the same request.
   */
  answer(body: string, started: number): MaybePromise<FastAnswer>;
  /**
   * Serves a connection a read process hands back (HttpTransport.adopt): on node:http, or on the fast
   * path when `fast` (a connection whose requests the child was passing on).
   */
  adopt(socket: Socket, pending: Buffer, fast: boolean): void;
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
    requestTimeoutMs: c.httpTimeoutMs,
    namespaces: new Set(c.api),
  };
}

/** Whether a lower-cased media type (no parameters) is one geth accepts. */
function acceptedMediaType(media: string): boolean {
  return ACCEPTED_TYPES.has(media);
}

export function parseEvmAddress(key: string, text: string): ListenAddress {
  const parsed = parseListenAddress(text);
  if (typeof parsed === "string") {
    throw new EvmRpcConfigError(`[json-rpc] ${key} ${JSON.stringify(text)}: ${parsed}, as in "127.0.0.1:8545"`);
  }
  return parsed;
}

/** Allowed WebSocket Origins are hostnames; "*" = any; no Origin header = allowed. */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === "") return true;
  if (allowed.includes("*")) return true;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return false;
  }
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return allowed.some((a) => a.toLowerCase() === bare.toLowerCase());
}

function refusal(status: number, text: string): string {
  return `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${text.length + 1}\r\n\r\n${text}\n`;
}

/** The WebSocket transport on `ws-address`, path `/` (see the module comment). */
function evmWsTransport(config: EvmRpcConfig, payloads: EvmPayloads, log: Logger): WsTransport {
  const origins = config.wsOrigins ?? ["127.0.0.1", "localhost"];
  const timeout = config.httpTimeoutMs;
  return createWsTransport({
    maxMessageBytes: config.wsMaxMessageBytes ?? DEFAULT_WS_MAX_MESSAGE_BYTES,
    skipUtf8Validation: false,
    refuse: (req: IncomingMessage) => {
      const path = (req.url ?? "/").split("?")[0];
      if (path !== "/") return refusal(404, "Not Found");
      if (!originAllowed(req.headers.origin, origins)) return refusal(403, "Forbidden");
      return undefined;
    },
    pingIntervalMs: 0,
    readWaitMs: 0,
    frames: "concurrent",
    maxQueuedWrites: 0,
    writeWaitMs: 0,
    pauseReadingBytes: PAUSE_READING_BYTES,
    stallTimeoutMs: timeout > 0 ? timeout : 30_000,
    maxBufferedBytes: MAX_BUFFERED_BYTES,
    handleFrame: (text, conn, frame) =>
      payloads.answer(
        text,
        { transport: "ws", sink: new FrameSink(conn, frame) },
        timeout > 0 ? Date.now() + timeout : undefined,
      ),
    onFrameError: (err) => {
      log.error({ err }, "EVM RPC WebSocket handler failed");
      return undefined;
    },
    log,
  });
}

/** The HTTP answer (node:http and the fast path) for one POST body whose first byte arrived at `started`. */
function answerBody(payloads: EvmPayloads, httpTimeoutMs: number, body: Buffer | string, started: number) {
  return payloads.answer(
    typeof body === "string" ? body : body.toString("utf8"),
    HTTP_REQUEST,
    httpDeadline(httpTimeoutMs, started),
  );
}

/** When a request whose first byte arrived at `started` stops waiting for its calls (geth: http-timeout − 100 ms). */
export function httpDeadline(httpTimeoutMs: number, started: number): number | undefined {
  return httpTimeoutMs > 0 ? started + Math.max(httpTimeoutMs - 100, 1) : undefined;
}

/** The fast path's answer text to a POST body's JSON-RPC answer. */
export function jsonAnswer(text: string | undefined): string {
  return simpleAnswer("200 OK", "application/json", text ?? "");
}

/** The fast path's answer when its handler threw. */
export function failedAnswer(): string {
  return simpleAnswer("500 Internal Server Error", "text/plain; charset=utf-8", "internal server error\n");
}

/**
 * The HTTP address's fast path (JSON-RPC POSTs to `/`), with the server's limits: the main process's,
 * and each read process's (node/evm/readProcess.ts), so that both answer alike.
 */
export function evmFastHttp(
  config: Pick<EvmRpcConfig, "httpTimeoutMs" | "httpIdleTimeoutMs" | "maxBodyBytes">,
  handle: (body: Buffer, started: number) => MaybePromise<FastAnswer>,
  logError: (err: unknown) => void,
): Omit<FastHttpOptions, "fallback"> {
  return {
    accepts: (method, target) => method === "POST" && target === "/",
    acceptsMediaType: (media) => media !== undefined && acceptedMediaType(media),
    maxBodyBytes: config.maxBodyBytes ?? DEFAULT_BODY_LIMIT,
    requestTimeoutMs: config.httpTimeoutMs,
    idleTimeoutMs: config.httpIdleTimeoutMs,
    handle: (_method, _target, body, started) => handle(body, started),
    onError: (err) => {
      logError(err);
      return failedAnswer();
    },
  };
}

/**
 * The state a server's calls share (filters, the chain feed, memos): built once by startEvmRpc, and by
 * each read process (node/evm/readProcess.ts) for its own calls. Nothing here starts: the feed is
 * started by the server.
 */
export function createEvmRuntime(
  services: EvmServices,
  settings: EvmRpcSettings,
  log: Logger,
  opts: { clock?: Clock; filterTimeoutMs?: number; observer?: RpcObserver } = {},
): EvmRuntime {
  const clock = opts.clock ?? systemClock;
  const feed = new ChainFeed(services, log);
  const filters = new FilterManager({
    services,
    feed,
    clock,
    settings,
    ...(opts.filterTimeoutMs === undefined ? {} : { timeoutMs: opts.filterTimeoutMs }),
  });
  return {
    settings,
    filters,
    feed,
    clock,
    log,
    profiler: newProfilerState(),
    logsMemo: new LogsMemo(),
    ...(opts.observer === undefined ? {} : { observer: opts.observer }),
  };
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
  const filterTimeoutMs = opts.filterTimeoutMs ?? config.filterTimeoutMs;
  const runtime = createEvmRuntime(services, settings, log, {
    ...(opts.clock === undefined ? {} : { clock: opts.clock }),
    ...(filterTimeoutMs === undefined ? {} : { filterTimeoutMs }),
    ...(opts.observer === undefined ? {} : { observer: opts.observer }),
  });
  const { filters, feed } = runtime;

  const payloads = evmPayloads(services, runtime, {
    batchRequestLimit: config.batchRequestLimit,
    batchResponseMaxSize: config.batchResponseMaxSize,
  });
  const maxBodyBytes = config.maxBodyBytes ?? DEFAULT_BODY_LIMIT;
  const httpHandler = createPostHandler({
    cors: createCors(DEFAULT_CORS),
    maxBodyBytes,
    acceptsMediaType: acceptedMediaType,
    answer: (body, started) => answerBody(payloads, config.httpTimeoutMs, body, started),
    onError: (err) => log.error({ err }, "EVM RPC HTTP handler failed"),
  });
  const ws = evmWsTransport(config, payloads, log);
  // JSON-RPC POSTs are answered on the fast path; it hands everything else to node:http.
  const httpAnswer = (body: Buffer | string, started: number): MaybePromise<FastAnswer> => {
    const answer = answerBody(payloads, config.httpTimeoutMs, body, started);
    return isPromise(answer) ? answer.then(jsonAnswer) : jsonAnswer(answer);
  };
  const logFailure = (err: unknown) => log.error({ err }, "EVM RPC HTTP handler failed");
  const fast = evmFastHttp(config, httpAnswer, logFailure);
  // A body a read process passed on: the same answer, and the fast path's 500 when the handler fails.
  const forwarded = (body: string, started: number): MaybePromise<FastAnswer> => {
    const failed = (err: unknown) => {
      logFailure(err);
      return failedAnswer();
    };
    try {
      const answer = httpAnswer(body, started);
      return isPromise(answer) ? answer.catch(failed) : answer;
    } catch (err) {
      return failed(err);
    }
  };

  const served: HttpTransport[] = [];
  const serve = async (target: ListenAddress, role: { http: boolean; ws: boolean }): Promise<string> => {
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
    const where = describeListenAddress(target);
    // The read processes take connections once they know where to hand back what they do not serve.
    let sharing: ConnectionSharing | undefined;
    const share: ConnectionSharing | undefined =
      role.http && opts.readProcesses !== undefined
        ? { take: (s: Socket) => sharing?.take(s), close: () => sharing?.close() ?? Promise.resolve() }
        : undefined;
    let transport: HttpTransport;
    try {
      transport = await serveHttp({
        target: socketTargetOf(target),
        maxOpenConnections: config.maxOpenConnections,
        server,
        ...(role.http ? { fast } : {}),
        ...(share === undefined ? {} : { share }),
        upgrade: role.ws
          ? (req, socket, head) => ws.handleUpgrade(req, socket, head, "")
          : (_req, socket) => {
              socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
            },
      });
    } catch (err) {
      throw new EvmRpcConfigError(`failed to listen on ${where}: ${(err as Error).message}`);
    }
    served.push(transport);
    if (share !== undefined) sharing = opts.readProcesses?.share({ answer: forwarded, adopt: transport.adopt });
    const a = transport.bound;
    return a === undefined ? where : a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  };

  let stopRollback: (() => void) | undefined;
  const closeAll = async () => {
    ws.closeAll();
    await Promise.all(served.map((t) => t.close()));
    filters.close();
    feed.close();
    stopRollback?.();
  };

  const sameAddress = config.address === config.wsAddress && !(httpTarget.protocol === "tcp" && httpTarget.port === 0);
  let httpAddress: string;
  let wsAddress: string;
  try {
    httpAddress = await serve(httpTarget, { http: true, ws: sameAddress });
    wsAddress = sameAddress ? httpAddress : await serve(wsTarget, { http: false, ws: true });
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
