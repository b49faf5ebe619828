/** `http://host:port/dashboard` of a node whose `[rpc] dashboard` is on and whose RPC listens on TCP. */
export function dashboardUrl(laddr: string, enabled: boolean): string | undefined {
  if (!enabled) return undefined;
  const first = laddr.split(",")[0]?.trim() ?? "";
  const m = /^(?:tcp:\/\/)?(\[[^\]]+\]|[^:/]*):(\d+)$/.exec(first);
  if (m === null) return undefined;
  const host = m[1] === "" || m[1] === "0.0.0.0" || m[1] === "[::]" ? "127.0.0.1" : (m[1] as string);
  return `http://${host}:${m[2]}/dashboard`;
}
