import { existsSync, unlinkSync } from "node:fs";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import type { ListenAddress } from "../../config/index.js";

/** Where to listen: a unix socket path, or a TCP host ("" = every interface) and port (0 = any free port). */
export type SocketTarget = { readonly unixPath: string } | { readonly host: string; readonly port: number };

/** Where a parsed listen address (either server's) listens. */
export function socketTargetOf(a: ListenAddress): SocketTarget {
  return a.protocol === "unix" ? { unixPath: a.path } : { host: a.host, port: a.port };
}

/** A listen address in error messages: the socket path, or host:port. */
export function describeListenAddress(a: ListenAddress): string {
  return a.protocol === "unix" ? a.path : `${a.host}:${a.port}`;
}

export interface LimitedListener {
  /** The bound TCP address (undefined for a unix socket). */
  readonly bound: AddressInfo | undefined;
  /** Stops accepting, drops connections still waiting for a slot, removes a unix socket file. */
  close(): Promise<void>;
}

/**
 * A listener for both RPC servers that hands each accepted connection to `onConnection`, at most
 * `maxOpen` at a time (0 = unlimited). Like Go's netutil.LimitListener, extra connections wait
 * unread until one closes. Sockets get TCP_NODELAY (as Go and node:http set it). Rejects with the
 * listen error as Node reports it; callers word it.
 *
 * A connection counts until its socket closes, or, when `onConnection` returns a promise (the
 * connection was handed to another process, whose socket here closes at once), until that settles.
 */
export async function listenLimited(
  target: SocketTarget,
  maxOpen: number,
  onConnection: (socket: Socket) => Promise<void> | undefined,
): Promise<LimitedListener> {
  let open = 0;
  const waiting: Socket[] = [];
  const admit = (socket: Socket) => {
    open++;
    const release = () => {
      open--;
      let next = waiting.shift();
      while (next?.destroyed) next = waiting.shift();
      if (next !== undefined) admit(next);
    };
    const elsewhere = onConnection(socket);
    if (elsewhere === undefined) socket.once("close", release);
    else elsewhere.then(release, release);
  };
  const server: Server = createServer({ pauseOnConnect: true, noDelay: true, keepAlive: true }, (socket) => {
    if (maxOpen > 0 && open >= maxOpen) waiting.push(socket);
    else admit(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if ("unixPath" in target) server.listen(target.unixPath, resolve);
    else server.listen({ host: target.host === "" ? undefined : target.host, port: target.port }, resolve);
  });
  return {
    bound: "unixPath" in target ? undefined : (server.address() as AddressInfo),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of waiting.splice(0)) s.destroy();
        server.close(() => {
          if ("unixPath" in target && existsSync(target.unixPath)) {
            try {
              unlinkSync(target.unixPath);
            } catch {
              // Already gone.
            }
          }
          resolve();
        });
      }),
  };
}
