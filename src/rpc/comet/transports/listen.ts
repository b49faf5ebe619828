import type { Socket } from "node:net";
import { ComethError } from "../../../util/errors.js";
import { type LimitedListener, listenLimited } from "../../jsonrpc/index.js";

/**
 * Listeners for `[rpc] laddr` (comma-separated `tcp://host:port` or `unix:///path`), with
 * max_open_connections applied like Go's netutil.LimitListener: connections beyond the limit wait
 * (unread) until one closes; they are not refused.
 */

/** A malformed laddr or a listen failure; names the address and the accepted forms. */
export class ListenAddressError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

export type ListenTarget = { kind: "tcp"; host: string; port: number } | { kind: "unix"; path: string };

export function parseListenAddress(laddr: string): ListenTarget {
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
    return { kind: "unix", path: addr };
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
  return { kind: "tcp", host: m[1] ?? m[2] ?? "", port };
}

/** Splits the `[rpc] laddr` value on commas. */
export function splitListenAddresses(laddr: string): string[] {
  return laddr
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
}

export interface Listener {
  /** `tcp://host:port` with the bound port, or `unix://path`. */
  readonly address: string;
  /** Stops accepting; open connections are left to their owner. */
  close(): Promise<void>;
}

/**
 * Listens and hands each accepted connection to `onConnection`, at most `maxOpen` at a time
 * (0 = unlimited).
 */
export async function listen(
  target: ListenTarget,
  maxOpen: number,
  onConnection: (socket: Socket) => void,
): Promise<Listener> {
  let l: LimitedListener;
  try {
    l = await listenLimited(
      target.kind === "unix" ? { unixPath: target.path } : { host: target.host, port: target.port },
      maxOpen,
      onConnection,
    );
  } catch (err) {
    throw new ListenAddressError(`failed to listen on ${describe(target)}: ${(err as Error).message}`, { cause: err });
  }
  let address: string;
  if (target.kind === "unix" || l.bound === undefined) address = `unix://${describe(target)}`;
  else {
    const a = l.bound;
    const host = target.host === "" ? "" : a.family === "IPv6" ? `[${a.address}]` : a.address;
    address = `tcp://${host}:${a.port}`;
  }
  return { address, close: () => l.close() };
}

function describe(t: ListenTarget): string {
  return t.kind === "unix" ? t.path : `${t.host}:${t.port}`;
}
