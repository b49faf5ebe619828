import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ListenAddress } from "../../../config/index.js";
import { ComethError } from "../../../util/errors.js";
import type { Logger } from "../../../util/logger.js";
import {
  type Cors,
  createCors,
  describeListenAddress,
  type HttpTransport,
  observeTable,
  type RpcObserver,
  serveHttp,
  socketTargetOf,
  type WsTransport,
} from "../../jsonrpc/index.js";
import type { ActiveSubscription, CometCallContext, CometRuntime } from "../context.js";
import { genesisChunks } from "../encode/genesis.js";
import { cometRoutes } from "../routes.js";
import type { CometServices } from "../services.js";
import { createCometWsTransport } from "../session.js";
import type { RouteTable } from "../table.js";
import {
  createHttpHandler,
  fastPathOptions,
  type HttpCalls,
  type HttpHandlerDeps,
  httpCalls,
  KEEP_ALIVE_MS,
  type PageHandler,
} from "./http.js";

/** The `[rpc]` settings (config.toml keys in camelCase; durations in ms). */
export interface CometRpcConfig {
  /** One or more comma-separated `tcp://host:port` / `unix:///path` addresses; port 0 picks a free port. */
  laddr: string;
  corsAllowedOrigins: readonly string[];
  corsAllowedMethods: readonly string[];
  corsAllowedHeaders: readonly string[];
  /** Registers dial_seeds, dial_peers and unsafe_flush_mempool. */
  unsafe: boolean;
  /** 0 = unlimited; extra connections wait until one closes. */
  maxOpenConnections: number;
  maxSubscriptionClients: number;
  maxSubscriptionsPerClient: number;
  experimentalSubscriptionBufferSize: number;
  experimentalWebsocketWriteBufferSize: number;
  experimentalCloseOnSlowClient: boolean;
  timeoutBroadcastTxCommitMs: number;
  /** 0 = unlimited. */
  maxRequestBatchSize: number;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** Accepted for config completeness; the deprecated gRPC broadcast API is not served. */
  grpcLaddr?: string;
  grpcMaxOpenConnections?: number;
  /** Accepted for config completeness; Go's pprof has no equivalent here. */
  pprofLaddr?: string;
  /** http.Server ReadTimeout (CometBFT: 10 s). */
  readTimeoutMs?: number;
  /** http.Server WriteTimeout (CometBFT: 10 s, raised to timeout_broadcast_tx_commit + 1 s). */
  writeTimeoutMs?: number;
  /** WebSocket ping period (CometBFT: 27 s). */
  wsPingIntervalMs?: number;
  /** WebSocket read deadline (CometBFT: 30 s). */
  wsReadWaitMs?: number;
  /** WebSocket write deadline per frame and pushed-event wait (CometBFT: 10 s). */
  wsWriteWaitMs?: number;
}

/** What the node adds to the RPC server besides the `[rpc]` settings. */
export interface StartCometRpcOptions {
  /** Records each route's calls (metrics). */
  readonly observer?: RpcObserver;
  /** Pages served on their exact path (`/dashboard`). */
  readonly pages?: ReadonlyMap<string, PageHandler>;
}

export interface RunningCometRpc {
  /** The bound addresses, e.g. `tcp://127.0.0.1:26657` (the real port when 0 was asked for). */
  readonly addresses: string[];
  close(): Promise<void>;
}

/**
 * `[rpc] laddr`: comma-separated `tcp://host:port` or `unix:///path` addresses, with
 * max_open_connections applied like Go's netutil.LimitListener (connections beyond the limit wait
 * unread until one closes; they are not refused).
 */

/** A malformed laddr or a listen failure; names the address and the accepted forms. */
export class ListenAddressError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

/**
 * An `[rpc] laddr` entry. Stricter than config's parseListenAddress, as CometBFT's RPC server is: the
 * protocol prefix is required, and tcp4/tcp6 are accepted.
 */
export function parseRpcListenAddress(laddr: string): ListenAddress {
  const sep = laddr.indexOf("://");
  if (sep < 0) {
    throw new ListenAddressError(
      `invalid listening address ${laddr} (use fully formed addresses, including the tcp:// or unix:// prefix)`,
    );
  }
  const proto = laddr.slice(0, sep);
  const addr = laddr.slice(sep + 3);
  if (proto === "unix") {
    if (addr === "") throw new ListenAddressError(`invalid listening address ${laddr}: the unix socket path is empty`);
    return { protocol: "unix", path: addr };
  }
  if (proto !== "tcp" && proto !== "tcp4" && proto !== "tcp6") {
    throw new ListenAddressError(`invalid listening address ${laddr}: protocol ${proto} is not one of tcp, unix`);
  }
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d+)$/.exec(addr);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || !Number.isInteger(port) || port > 65535) {
    throw new ListenAddressError(
      `invalid listening address ${laddr}: expected tcp://host:port, e.g. tcp://127.0.0.1:26657`,
    );
  }
  return { protocol: "tcp", host: m[1] ?? m[2] ?? "", port };
}

/** Splits the `[rpc] laddr` value on commas. */
export function splitListenAddresses(laddr: string): string[] {
  return laddr
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
}

/** A setting outside its valid range; names the setting and the valid values. */
export class CometRpcConfigError extends ComethError {}

function validate(c: CometRpcConfig): void {
  const nonNegative = [
    ["max_open_connections", c.maxOpenConnections],
    ["max_subscription_clients", c.maxSubscriptionClients],
    ["max_subscriptions_per_client", c.maxSubscriptionsPerClient],
    ["timeout_broadcast_tx_commit", c.timeoutBroadcastTxCommitMs],
    ["max_request_batch_size", c.maxRequestBatchSize],
    ["max_body_bytes", c.maxBodyBytes],
    ["max_header_bytes", c.maxHeaderBytes],
  ] as const;
  for (const [key, value] of nonNegative) {
    if (!Number.isFinite(value) || value < 0)
      throw new CometRpcConfigError(`[rpc] ${key} can't be negative (got ${value})`);
  }
  if (c.experimentalSubscriptionBufferSize < 1) {
    throw new CometRpcConfigError(
      `[rpc] experimental_subscription_buffer_size must be positive (got ${c.experimentalSubscriptionBufferSize})`,
    );
  }
  if (c.experimentalWebsocketWriteBufferSize < 1) {
    throw new CometRpcConfigError(
      `[rpc] experimental_websocket_write_buffer_size must be positive (got ${c.experimentalWebsocketWriteBufferSize})`,
    );
  }
  if ((c.tlsCertFile ?? "") !== "" && (c.tlsKeyFile ?? "") === "") {
    throw new CometRpcConfigError("[rpc] tls_cert_file is set but tls_key_file is empty: set both or neither");
  }
}

/** The route table for a config: unsafe routes only when enabled. */
export function routesFor(unsafe: boolean): RouteTable<CometServices, CometCallContext> {
  if (unsafe) return cometRoutes;
  return Object.fromEntries(Object.entries(cometRoutes).filter(([, r]) => r.unsafe !== true));
}

/** How Go's http.Server answers a request it cannot read (net/http server.go, conn.serve). */
const GO_ERROR_HEADERS = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n";
const GO_HEADER_TOO_LARGE = `HTTP/1.1 431 Request Header Fields Too Large${GO_ERROR_HEADERS}431 Request Header Fields Too Large`;
const GO_BAD_REQUEST = `HTTP/1.1 400 Bad Request${GO_ERROR_HEADERS}400 Bad Request`;
const GO_MISSING_HOST = `HTTP/1.1 400 Bad Request: missing required Host header${GO_ERROR_HEADERS}400 Bad Request: missing required Host header`;
/** Go's rstAvoidanceDelay: close the write side, then wait before closing so the client reads the answer. */
const CLOSE_DELAY_MS = 500;

/**
 * An HTTP/1.1 request without a Host header gets Go's refusal (net/http readRequest: "missing
 * required Host header" in the status line and the body) and a close.
 */
function requireHost(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) {
      handler(req, res);
      return;
    }
    const socket = req.socket;
    socket.end(GO_MISSING_HOST);
    setTimeout(() => socket.destroy(), CLOSE_DELAY_MS).unref();
  };
}

/** Sockets already answered by {@link onClientError}; the failed parser reports every later chunk again. */
const answeredClientErrors = new WeakSet<Duplex>();

/**
 * http.Server 'clientError': a request that does not parse (headers over max_header_bytes, a
 * malformed request line) gets Go's plain-text answer instead of Node's bodiless one. Request
 * timeouts keep Node's 408; anything else cuts the socket.
 */
function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (answeredClientErrors.has(socket)) return;
  // Node's own handler (socketOnError) answers only when no response has started on the socket.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  const code = err.code ?? "";
  if (inFlight !== undefined && !inFlight.writableFinished && code.startsWith("HPE_")) {
    // Bytes that do not parse after a whole request (a GET with a body it did not declare): Go's
    // server answers that request first, then refuses the bytes (or just closes, when the request
    // asked for it). Answering now would cut the request's answer off.
    answeredClientErrors.add(socket);
    inFlight.once("finish", () => {
      if (!socket.writable) return;
      socket.end(GO_BAD_REQUEST);
      setTimeout(() => socket.destroy(), CLOSE_DELAY_MS).unref();
    });
    inFlight.once("close", () => {
      if (!inFlight.writableFinished) socket.destroy();
    });
    return;
  }
  const canAnswer = socket.writable && inFlight?.headersSent !== true;
  if (canAnswer && code.startsWith("HPE_")) {
    answeredClientErrors.add(socket);
    socket.end(code === "HPE_HEADER_OVERFLOW" ? GO_HEADER_TOO_LARGE : GO_BAD_REQUEST);
    setTimeout(() => socket.destroy(), CLOSE_DELAY_MS).unref();
    return;
  }
  if (canAnswer && code === "ERR_HTTP_REQUEST_TIMEOUT")
    socket.write("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
  socket.destroy();
}

/** Go's `ip:port` form: IPv6 in brackets, IPv4-mapped IPv6 written as plain IPv4. */
function remoteAddrOf(socket: Socket, fallback: string): string {
  const raw = socket.remoteAddress;
  if (raw === undefined) return fallback;
  const ip = /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(raw) ? raw.slice(7) : raw;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return `${host}:${socket.remotePort ?? 0}`;
}

/**
 * Starts the CometBFT node RPC on every `[rpc] laddr` address: one route table, runtime and CORS
 * policy ({@link serving}), and per address a WebSocket transport, an HTTP handler and a listener
 * ({@link serveAddress}). Fails as a whole: what started before a failing address is closed.
 */
export async function startCometRpc(
  config: CometRpcConfig,
  services: CometServices,
  log: Logger,
  opts: StartCometRpcOptions = {},
): Promise<RunningCometRpc> {
  validate(config);
  const targets = splitListenAddresses(config.laddr).map(parseRpcListenAddress);
  if (targets.length === 0) throw new ListenAddressError(`invalid listening address "${config.laddr}": it is empty`);
  const shared = serving(config, services, log, opts);
  const servers: AddressServer[] = [];
  const closeAll = () => closeServers(servers);
  try {
    for (const target of targets) {
      const server = await serveAddress(target, shared);
      servers.push(server);
      log.info({ address: server.address }, "Starting RPC HTTP server");
    }
  } catch (err) {
    await closeAll();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    addresses: servers.map((s) => s.address),
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}

/** What the servers of every address share. */
interface Serving {
  readonly config: CometRpcConfig;
  readonly services: CometServices;
  readonly log: Logger;
  readonly opts: StartCometRpcOptions;
  readonly runtime: CometRuntime;
  readonly routes: RouteTable<CometServices, CometCallContext>;
  /** The JSON-RPC and URI calls over HTTP, on the shared core. */
  readonly calls: HttpCalls;
  readonly cors: Cors | undefined;
  readonly wsWriteWaitMs: number;
  readonly writeTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly tls: { cert: Buffer; key: Buffer } | undefined;
  /** The `ip:port` (or `@n` for a Unix socket peer) a connection is known by, named once per socket. */
  readonly addrOf: (socket: Socket) => string;
}

/** One address's servers. */
interface AddressServer {
  readonly transport: HttpTransport;
  readonly ws: WsTransport<ActiveSubscription>;
  /** `tcp://host:port` with the bound port, or `unix://path`. */
  readonly address: string;
}

/** The runtime, routes, CORS policy, timeouts and TLS keys the servers of every address share. */
function serving(config: CometRpcConfig, services: CometServices, log: Logger, opts: StartCometRpcOptions): Serving {
  const wsWriteWaitMs = config.wsWriteWaitMs ?? 10_000;
  const runtime: CometRuntime = {
    settings: {
      maxSubscriptionClients: config.maxSubscriptionClients,
      maxSubscriptionsPerClient: config.maxSubscriptionsPerClient,
      subscriptionBufferSize: config.experimentalSubscriptionBufferSize,
      closeOnSlowClient: config.experimentalCloseOnSlowClient,
      timeoutBroadcastTxCommitMs: config.timeoutBroadcastTxCommitMs,
      subscriptionWriteWaitMs: wsWriteWaitMs,
    },
    genesisChunks: genesisChunks(services.genesis),
    log,
  };
  const routes =
    opts.observer === undefined ? routesFor(config.unsafe) : observeTable(routesFor(config.unsafe), opts.observer);
  const cors = createCors({
    allowedOrigins: config.corsAllowedOrigins,
    allowedMethods: config.corsAllowedMethods,
    allowedHeaders: config.corsAllowedHeaders,
    allowHeadersAs: "echo",
    actualOptionsAllowed: true,
  });
  // node/node.go: WriteTimeout is raised above timeout_broadcast_tx_commit so that the commit can answer.
  let writeTimeoutMs = config.writeTimeoutMs ?? 10_000;
  if (writeTimeoutMs <= config.timeoutBroadcastTxCommitMs) writeTimeoutMs = config.timeoutBroadcastTxCommitMs + 1000;
  const readTimeoutMs = config.readTimeoutMs ?? 10_000;
  const tls =
    (config.tlsCertFile ?? "") !== "" && (config.tlsKeyFile ?? "") !== ""
      ? { cert: readFileSync(config.tlsCertFile as string), key: readFileSync(config.tlsKeyFile as string) }
      : undefined;
  return {
    config,
    services,
    log,
    opts,
    runtime,
    routes,
    calls: httpCalls(routes, services, runtime),
    cors,
    wsWriteWaitMs,
    writeTimeoutMs,
    readTimeoutMs,
    tls,
    addrOf: remoteAddrNamer(),
  };
}

/** Names each socket once by its remote address; Unix socket peers, which have none, are `@1`, `@2`, ... */
function remoteAddrNamer(): (socket: Socket) => string {
  let unixPeer = 0;
  const remoteAddr = new WeakMap<Socket, string>();
  return (socket: Socket) => {
    let a = remoteAddr.get(socket);
    if (a === undefined) {
      a = remoteAddrOf(socket, `@${++unixPeer}`);
      remoteAddr.set(socket, a);
    }
    return a;
  };
}

/**
 * Serves one address: the WebSocket transport, the HTTP handler on an http(s).Server that never
 * listens itself, and the shared HTTP transport (listener with max_open_connections, fast path).
 */
async function serveAddress(target: ListenAddress, shared: Serving): Promise<AddressServer> {
  const { config, services, log, opts, runtime, routes, addrOf, readTimeoutMs, tls } = shared;
  const ws = createCometWsTransport({
    routes,
    services,
    runtime,
    maxBodyBytes: config.maxBodyBytes,
    writeBufferSize: config.experimentalWebsocketWriteBufferSize,
    pingIntervalMs: config.wsPingIntervalMs ?? 27_000,
    readWaitMs: config.wsReadWaitMs ?? 30_000,
    writeWaitMs: shared.wsWriteWaitMs,
    log,
  });
  const handlerDeps: HttpHandlerDeps = {
    routes,
    services,
    runtime,
    cors: shared.cors,
    maxBodyBytes: config.maxBodyBytes,
    maxRequestBatchSize: config.maxRequestBatchSize,
    writeTimeoutMs: shared.writeTimeoutMs,
    log,
    calls: shared.calls,
    remoteAddr: (req: IncomingMessage) => addrOf(req.socket),
    ...(opts.pages === undefined ? {} : { pages: opts.pages }),
  };
  const handler = requireHost(createHttpHandler(handlerDeps));
  const serverOptions = {
    // requireHost answers a missing Host as Go does (node:http's own check sends a bare 400).
    requireHostHeader: false,
    keepAliveTimeout: KEEP_ALIVE_MS,
    maxHeaderSize: config.maxHeaderBytes,
    requestTimeout: readTimeoutMs,
    headersTimeout: readTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(readTimeoutMs / 4))),
  };
  const http: HttpServer =
    tls === undefined
      ? createHttpServer(serverOptions, handler)
      : createHttpsServer({ ...serverOptions, ...tls }, handler);
  http.on("clientError", onClientError);
  let transport: HttpTransport;
  try {
    transport = await serveHttp({
      target: socketTargetOf(target),
      maxOpenConnections: config.maxOpenConnections,
      server: http,
      // Plain-text HTTP: JSON-RPC POSTs and URI GETs are answered on the fast path, which hands
      // everything else to `http`. TLS connections are node:https's.
      ...(tls === undefined
        ? {
            fast: fastPathOptions({
              ...handlerDeps,
              readTimeoutMs,
              maxHeaderBytes: config.maxHeaderBytes,
              socketAddr: addrOf,
            }),
          }
        : {}),
      upgrade: (req, socket, head) => ws.handleUpgrade(req, socket, head, addrOf(req.socket)),
    });
  } catch (err) {
    throw new ListenAddressError(`failed to listen on ${describeListenAddress(target)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { transport, ws, address: boundAddress(target, transport) };
}

/** `tcp://host:port` with the bound port, or `unix://path`. */
function boundAddress(target: ListenAddress, transport: HttpTransport): string {
  const a = transport.bound;
  if (target.protocol === "unix" || a === undefined) return `unix://${describeListenAddress(target)}`;
  const host = target.host === "" ? "" : a.family === "IPv6" ? `[${a.address}]` : a.address;
  return `tcp://${host}:${a.port}`;
}

/** Like http.Server.Close: HTTP connections are cut; WebSocket clients get a close frame first. */
async function closeServers(servers: readonly AddressServer[]): Promise<void> {
  await Promise.all(
    servers.map(async (s) => {
      s.ws.closeAll();
      await s.transport.close();
    }),
  );
}
