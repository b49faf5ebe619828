import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { type ListenAddress, parseListenAddress } from "../../../config/index.js";
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
  let open = 0;
  const waiting: Socket[] = [];
  const admit = (socket: Socket) => {
    open++;
    socket.once("close", () => {
      open--;
      let next = waiting.shift();
      while (next?.destroyed) next = waiting.shift();
      if (next !== undefined) admit(next);
    });
    onConnection(socket);
  };
  const server: Server = createServer({ pauseOnConnect: true }, (socket) => {
    if (maxOpen > 0 && open >= maxOpen) waiting.push(socket);
    else admit(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => {
      const where = target.protocol === "unix" ? target.path : `${target.host}:${target.port}`;
      reject(new EvmRpcConfigError(`failed to listen on ${where}: ${err.message}`));
    });
    if (target.protocol === "unix") server.listen(target.path, resolve);
    else server.listen({ host: target.host === "" ? undefined : target.host, port: target.port }, resolve);
  });
  let address: string;
  if (target.protocol === "unix") address = target.path;
  else {
    const a = server.address() as AddressInfo;
    address = a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of waiting.splice(0)) s.destroy();
        server.close(() => resolve());
      }),
  };
}
