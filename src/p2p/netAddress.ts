import { BlockList, isIP, isIPv4 } from "node:net";
import { InvalidNodeIdError, NetAddressInvalidError, NetAddressNoIdError } from "./errors.js";
import type { NetAddress, NodeInfo } from "./reactor.js";

/** Node IDs are the hex of 20 bytes (p2p.IDByteLength). */
const ID_HEX_LENGTH = 40;

/** Throws InvalidNodeIdError unless `id` is 40 hex characters (p2p.validateID). */
export function validateNodeId(id: string): void {
  if (id.length === 0) throw new InvalidNodeIdError(id, "no ID");
  if (!/^[0-9a-fA-F]*$/.test(id) || id.length % 2 !== 0) throw new InvalidNodeIdError(id, "not hex");
  if (id.length !== ID_HEX_LENGTH) {
    throw new InvalidNodeIdError(id, `invalid hex length - got ${id.length / 2}, expected ${ID_HEX_LENGTH / 2}`);
  }
}

/** `tcp://host:port` → `host:port` (removeProtocolIfDefined). */
export function stripProtocol(addr: string): string {
  const i = addr.indexOf("://");
  return i < 0 ? addr : addr.slice(i + 3);
}

/** Splits `host:port` or `[v6]:port`; the port must be a decimal in [0, 65535]. Throws NetAddressInvalidError. */
export function parseHostPort(hostPort: string, original = hostPort): { host: string; port: number } {
  let host: string;
  let portText: string;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close < 0 || hostPort[close + 1] !== ":") {
      throw new NetAddressInvalidError(original, "missing port in address");
    }
    host = hostPort.slice(1, close);
    portText = hostPort.slice(close + 2);
  } else {
    const colon = hostPort.lastIndexOf(":");
    if (colon < 0) throw new NetAddressInvalidError(original, "missing port in address");
    host = hostPort.slice(0, colon);
    portText = hostPort.slice(colon + 1);
    if (host.includes(":")) throw new NetAddressInvalidError(original, "too many colons in address");
  }
  if (host.length === 0) throw new NetAddressInvalidError(original, "host is empty");
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new NetAddressInvalidError(original, `invalid port "${portText}"`);
  }
  return { host: normalizeHost(host), port: Number(portText) };
}

/**
 * Parses `<id>@<host>:<port>`, optionally prefixed with `tcp://` (p2p.NewNetAddressString).
 * Host names are kept as written (resolved when dialed). The ID is lowercased.
 */
export function parseNetAddress(addr: string): NetAddress {
  const withoutProtocol = stripProtocol(addr.trim());
  const parts = withoutProtocol.split("@");
  if (parts.length !== 2) throw new NetAddressNoIdError(addr);
  const [id = "", hostPort = ""] = parts;
  try {
    validateNodeId(id);
  } catch (err) {
    throw new NetAddressInvalidError(withoutProtocol, (err as Error).message);
  }
  const { host, port } = parseHostPort(hostPort, withoutProtocol);
  return { id: id.toLowerCase(), host, port };
}

/** Parses every address; throws the first error (CometBFT reports all, returns the first). */
export function parseNetAddresses(addrs: readonly string[]): NetAddress[] {
  return addrs.map((a) => parseNetAddress(a));
}

/** A comma-separated config list (`persistent_peers`, `seeds`, `*_peer_ids`) as trimmed, non-empty items. */
export function splitAddressList(list: string): string[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** `host:port`, with IPv6 hosts in brackets (NetAddress.DialString). */
export function formatDialString(addr: { readonly host: string; readonly port: number }): string {
  return addr.host.includes(":") ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}

/** `<id>@<host>:<port>` (NetAddress.String); just `host:port` when the ID is empty. */
export function formatNetAddress(addr: NetAddress): string {
  const dial = formatDialString(addr);
  return addr.id ? `${addr.id}@${dial}` : dial;
}

/** Same ID, host and port (NetAddress.Equals). */
export function netAddressEquals(a: NetAddress, b: NetAddress): boolean {
  return a.id === b.id && a.host === b.host && a.port === b.port;
}

/** Same dial string or same non-empty ID (NetAddress.Same). */
export function sameNetAddress(a: NetAddress, b: NetAddress): boolean {
  return formatDialString(a) === formatDialString(b) || (a.id !== "" && a.id === b.id);
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, IPv6 lowercased; host names are left alone. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith("::ffff:") && isIPv4(lower.slice(7))) return lower.slice(7);
  return isIP(lower) === 6 ? lower : host;
}

/** A BlockList of these subnets, built on the first check (not at import: start-up time, docs/dev-chain.md "Start-up"). */
function blockList(v4: readonly [string, number][], v6: readonly [string, number][]): () => BlockList {
  let list: BlockList | undefined;
  return () => {
    if (list === undefined) {
      list = new BlockList();
      for (const [net, prefix] of v4) list.addSubnet(net, prefix, "ipv4");
      for (const [net, prefix] of v6) list.addSubnet(net, prefix, "ipv6");
    }
    return list;
  };
}

// netaddress.go: RFC1918 private, RFC3927/RFC4862 autoconfig, RFC4193 unique local, RFC4843 ORCHID.
const NON_ROUTABLE = blockList(
  [
    ["10.0.0.0", 8],
    ["172.16.0.0", 12],
    ["192.168.0.0", 16],
    ["169.254.0.0", 16],
  ],
  [
    ["fe80::", 64],
    ["fc00::", 7],
    ["2001:10::", 28],
  ],
);
const LOCAL = blockList(
  [
    ["127.0.0.0", 8],
    ["0.0.0.0", 8],
  ],
  [["::1", 128]],
);
const RFC3849 = blockList([], [["2001:db8::", 32]]);

function ipFamily(host: string): "ipv4" | "ipv6" | undefined {
  const v = isIP(host);
  return v === 4 ? "ipv4" : v === 6 ? "ipv6" : undefined;
}

/** A problem text when the address cannot be dialed at all (NetAddress.Valid), else undefined. */
export function netAddressProblem(addr: NetAddress): string | undefined {
  try {
    validateNodeId(addr.id);
  } catch (err) {
    return (err as Error).message;
  }
  if (addr.host === "") return "no IP";
  const family = ipFamily(addr.host);
  if (family === undefined) return undefined;
  if (addr.host === "0.0.0.0" || addr.host === "::" || addr.host === "255.255.255.255") return "invalid IP";
  if (family === "ipv6" && RFC3849().check(addr.host, "ipv6")) return "invalid IP";
  return undefined;
}

/** Loopback or 0.0.0.0/8 (NetAddress.Local); the host name `localhost` counts too. */
export function isLocalAddress(addr: { readonly host: string }): boolean {
  const family = ipFamily(addr.host);
  if (family === undefined) return addr.host.toLowerCase() === "localhost";
  return LOCAL().check(addr.host, family);
}

/** Valid and not private, link-local or local (NetAddress.Routable): what addr_book_strict requires. */
export function isRoutableAddress(addr: NetAddress): boolean {
  if (netAddressProblem(addr) !== undefined || isLocalAddress(addr)) return false;
  const family = ipFamily(addr.host);
  return family === undefined || !NON_ROUTABLE().check(addr.host, family);
}

/**
 * The address a peer says it listens on (DefaultNodeInfo.NetAddress). When it listens on an
 * unspecified host (0.0.0.0, ::) the remote IP we see stands in, so the address can be dialed.
 */
export function netAddressFromNodeInfo(info: NodeInfo, remoteHost?: string): NetAddress {
  const { host, port } = parseHostPort(stripProtocol(info.listenAddr));
  const unspecified = host === "0.0.0.0" || host === "::";
  return { id: info.id, host: unspecified && remoteHost ? normalizeHost(remoteHost) : host, port };
}
