// Small clients for the node RPC (URI GET) and the Ethereum JSON-RPC, every call bounded in time
// (a paused node accepts connections but never answers).

export class RpcError extends Error {
  /** The node answered with a JSON-RPC error (not a transport failure). */
  readonly answered: boolean;
  constructor(message: string, answered: boolean) {
    super(message);
    this.name = "RpcError";
    this.answered = answered;
  }
}

/** GET `${url}/${route}?params` and return `result`; throws RpcError (answered = the node replied with an error). */
export async function cometRpc<T>(
  url: string,
  route: string,
  params: Record<string, string> = {},
  timeoutMs = 3000,
): Promise<T> {
  const qs = new URLSearchParams(params).toString();
  let body: { result?: T; error?: { message?: string; data?: string } };
  try {
    const res = await fetch(`${url}/${route}${qs === "" ? "" : `?${qs}`}`, { signal: AbortSignal.timeout(timeoutMs) });
    body = (await res.json()) as typeof body;
  } catch (err) {
    throw new RpcError(`${route}: ${(err as Error).message}`, false);
  }
  if (body.error !== undefined) {
    throw new RpcError(`${route}: ${body.error.message ?? ""} ${body.error.data ?? ""}`.trim(), true);
  }
  return body.result as T;
}

/** One Ethereum JSON-RPC call; throws RpcError (answered = a JSON-RPC error object came back). */
export async function ethRpc<T>(url: string, method: string, params: unknown[], timeoutMs = 3000): Promise<T> {
  let body: { result?: T; error?: { code?: number; message?: string } };
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    body = (await res.json()) as typeof body;
  } catch (err) {
    throw new RpcError(`${method}: ${(err as Error).message}`, false);
  }
  if (body.error !== undefined) throw new RpcError(body.error.message ?? `error ${body.error.code}`, true);
  return body.result as T;
}

export interface StatusResult {
  node_info: { id: string };
  sync_info: {
    latest_block_height: string;
    latest_block_hash: string;
    latest_app_hash: string;
    earliest_block_height: string;
    catching_up: boolean;
  };
  validator_info: { address: string };
}

export interface CommitSigJson {
  block_id_flag: number;
  validator_address: string;
  timestamp: string;
}

export interface BlockResult {
  block_id: { hash: string };
  block: {
    header: { height: string; time: string; app_hash: string; proposer_address: string; validators_hash: string };
    data: { txs: string[] | null };
    evidence: { evidence: { type: string; value: unknown }[] | null };
    last_commit: { height: string; round: number; signatures: CommitSigJson[] };
  };
}

export interface CommitResult {
  signed_header: {
    header: { height: string; app_hash: string };
    commit: { height: string; round: number; block_id: { hash: string }; signatures: CommitSigJson[] };
  };
  canonical: boolean;
}

export interface ValidatorsResult {
  block_height: string;
  validators: { address: string; voting_power: string; proposer_priority: string }[];
  total: string;
}
