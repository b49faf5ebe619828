import type { Socket } from "node:net";
import { type ListenAddress, parseListenAddress } from "../../../config/index.js";
import { type LimitedListener, listenLimited } from "../../jsonrpc/index.js";
import { EvmRpcConfigError } from "../errors.js";

/**
 * A TCP (or unix socket) listener that hands connections to an HTTP server, at most `maxOpen` at
 * a time (max-open-connections; 0 = unlimited). Like Go's netutil.LimitListener, extra
 * connections wait unread until one closes.
 */

export interface Listener {
  /** "host:port" with the bound port (or the unix socket path). */
  readonly address: string;
  /** Stops accepting and drops waiting connections. */
  close(): Promise<void>;
}

export function parseEvmAddress(key: string, text: string): ListenAddress {
  const parsed = parseListenAddress(text);
  if (typeof parsed === "string") {
    throw new EvmRpcConfigError(`[json-rpc] ${key} ${JSON.stringify(text)}: ${parsed}, as in "127.0.0.1:8545"`);
  }
  return parsed;
}

export async function listen(
  target: ListenAddress,
  maxOpen: number,
  onConnection: (socket: Socket) => void,
): Promise<Listener> {
  const where = target.protocol === "unix" ? target.path : `${target.host}:${target.port}`;
  let l: LimitedListener;
  try {
    l = await listenLimited(
      target.protocol === "unix" ? { unixPath: target.path } : { host: target.host, port: target.port },
      maxOpen,
      onConnection,
    );
  } catch (err) {
    throw new EvmRpcConfigError(`failed to listen on ${where}: ${(err as Error).message}`);
  }
  const a = l.bound;
  const address = a === undefined ? where : a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  return { address, close: () => l.close() };
}
