/** A parsed listen address: CometBFT accepts "tcp://host:port", "unix:///path" or a bare "host:port". */
export type ListenAddress = { protocol: "tcp"; host: string; port: number } | { protocol: "unix"; path: string };

/**
 * Splits a listen address (cmtnet.ProtocolAndAddress). Returns a problem text when it is malformed.
 * Port 0 is allowed (the OS picks one), which the tests rely on.
 */
export function parseListenAddress(text: string): ListenAddress | string {
  let protocol = "tcp";
  let rest = text;
  const sep = text.indexOf("://");
  if (sep >= 0) {
    protocol = text.slice(0, sep);
    rest = text.slice(sep + 3);
  }
  if (protocol === "unix") {
    return rest === ""
      ? "unix address needs a socket path, as in unix:///run/cometh.sock"
      : { protocol: "unix", path: rest };
  }
  if (protocol !== "tcp") return `unknown protocol "${protocol}"; valid protocols: "tcp", "unix"`;
  const colon = rest.lastIndexOf(":");
  if (colon < 0) return 'must be host:port, as in "tcp://127.0.0.1:26657"';
  let host = rest.slice(0, colon);
  const portText = rest.slice(colon + 1);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return "port must be a number from 0 to 65535";
  return { protocol: "tcp", host, port: Number(portText) };
}
