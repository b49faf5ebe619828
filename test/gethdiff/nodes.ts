/**
 * The two nodes of the geth differential: `geth --dev` (go-ethereum pinned in
 * test/interop/versions.json, built by `npm run interop:install`) and `cometh dev`, started from one
 * geth-style genesis file (`geth init` and `cometh dev --init`): chain id 1337 (geth's dev chain id),
 * geth's dev account funded and the fee recipient of every block on both, the same gas limit and
 * first base fee, Prague from block 0. Both listen on 127.0.0.1 ephemeral ports and are stopped by PID.
 */

import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PREINSTALLS } from "../../src/app/evm/genesis.js";
import { type SpawnedNode, spawnNode } from "../integration/testNode.js";
import { type GoProcess, runBinary, spawnBinary } from "../interop/binaries.js";

/** geth's built-in dev key (cmd/utils DeveloperKey): `geth --dev` imports it when its keystore is empty. */
export const DEV_KEY = "0xb71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291";
export const DEV_ADDRESS = "0x71562b71999873db5b286df957af199ec94617f7";
/** geth's dev chain id. */
export const CHAIN_ID = 1337;
export const GAS_LIMIT = 30_000_000n;
/**
 * 0: Cosmos EVM's x/feemarket computes the base fee in 18-decimal fixed point and geth in whole wei,
 * so a non-zero base fee drifts apart by a wei after a few blocks, and every balance and trace with
 * it (docs/compatibility.md). With 0 both stay at 0 (blocks use far less than the target).
 */
export const BASE_FEE = 0n;
const DEV_BALANCE = 10n ** 24n;

/** A JSON-RPC endpoint: `call` returns the whole answer object (result or error). */
export interface Endpoint {
  readonly name: "geth" | "cometh";
  readonly http: string;
  readonly ws: string;
  raw(body: unknown): Promise<unknown>;
  call(method: string, params?: unknown[]): Promise<RpcAnswer>;
  /** The result; throws on an error answer. */
  result<T = unknown>(method: string, params?: unknown[]): Promise<T>;
}

export interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

function endpoint(name: "geth" | "cometh", http: string, ws: string): Endpoint {
  const raw = async (body: unknown): Promise<unknown> => {
    const res = await fetch(http, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { httpStatus: res.status, text };
    }
  };
  const call = async (method: string, params: unknown[] = []): Promise<RpcAnswer> =>
    (await raw({ jsonrpc: "2.0", id: nextId++, method, params })) as RpcAnswer;
  return {
    name,
    http,
    ws,
    raw,
    call,
    async result<T>(method: string, params: unknown[] = []): Promise<T> {
      const a = await call(method, params);
      if (a.error !== undefined) throw new Error(`${name} ${method}: ${JSON.stringify(a.error)}`);
      return a.result as T;
    },
  };
}

/**
 * The genesis both nodes start from. Beside the dev account: the EIP-2935 history contract (code as
 * cometh preinstalls it), and stubs (STOP) at the EIP-7002 and EIP-7251 request contracts, which
 * geth's Prague block processing calls and refuses to find empty; no tx of the suite touches them.
 */
export function genesisJson(baseFee = BASE_FEE): Record<string, unknown> {
  const history = PREINSTALLS.find((p) => p.name.startsWith("EIP-2935"));
  if (history === undefined) throw new Error("no EIP-2935 preinstall");
  return {
    config: {
      chainId: CHAIN_ID,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      muirGlacierBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      arrowGlacierBlock: 0,
      grayGlacierBlock: 0,
      shanghaiTime: 0,
      cancunTime: 0,
      pragueTime: 0,
      terminalTotalDifficulty: 0,
      blobSchedule: {
        cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 },
        prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
      },
    },
    nonce: "0x0",
    timestamp: "0x0",
    extraData: "0x",
    gasLimit: `0x${GAS_LIMIT.toString(16)}`,
    baseFeePerGas: `0x${baseFee.toString(16)}`,
    difficulty: "0x0",
    coinbase: DEV_ADDRESS,
    alloc: {
      [DEV_ADDRESS]: { balance: `0x${DEV_BALANCE.toString(16)}` },
      [history.address.toLowerCase()]: { balance: "0x0", nonce: "0x0", code: history.code },
      "0x00000961ef480eb55e80d19ad83579a64c007002": { balance: "0x0", nonce: "0x1", code: "0x00" },
      "0x0000bbddc7ce488642fb579f8b00f3a590007251": { balance: "0x0", nonce: "0x1", code: "0x00" },
    },
  };
}

export interface NodePair {
  geth: Endpoint;
  cometh: Endpoint;
  both: readonly [Endpoint, Endpoint];
  stop(): Promise<void>;
  gethOutput(): string;
  comethOutput(): string;
}

async function waitAnswering(e: Endpoint, alive: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const a = await e.call("eth_chainId");
      if (a.result !== undefined) return;
    } catch {
      // Not listening yet.
    }
    if (!alive() || Date.now() > deadline) throw new Error(`${e.name} did not answer:\n${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface PairOptions {
  /** The genesis base fee (default BASE_FEE, 0). */
  baseFee?: bigint;
  /** More `cometh dev` flags (e.g. a short `--json-rpc.filter-timeout`). */
  comethArgs?: string[];
}

/** Starts geth --dev and cometh dev on one genesis; `stop()` ends both (by PID) and removes their dirs. */
export async function startPair(opts: PairOptions = {}): Promise<NodePair> {
  const dir = await mkdtemp(join(tmpdir(), "cometh-gethdiff-"));
  const genesisFile = join(dir, "genesis.json");
  writeFileSync(genesisFile, JSON.stringify(genesisJson(opts.baseFee), null, 2));
  const datadir = join(dir, "geth");
  let geth: GoProcess | undefined;
  let cometh: SpawnedNode | undefined;
  const stop = async () => {
    const stops: Promise<unknown>[] = [];
    if (geth !== undefined) stops.push(geth.stop(10_000));
    if (cometh !== undefined) {
      const c = cometh;
      if (c.child.exitCode === null && c.child.signalCode === null) {
        c.child.kill("SIGTERM");
        const timer = setTimeout(() => c.child.kill("SIGKILL"), 20_000);
        stops.push(c.exited.finally(() => clearTimeout(timer)));
      }
    }
    await Promise.all(stops);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await runBinary("geth", ["init", "--datadir", datadir, "--state.scheme", "hash", genesisFile]);
    geth = spawnBinary("geth", [
      "--dev",
      "--dev.period",
      "0",
      "--datadir",
      datadir,
      "--state.scheme",
      "hash",
      "--gcmode",
      "archive",
      "--miner.gaslimit",
      GAS_LIMIT.toString(),
      "--http",
      "--http.addr",
      "127.0.0.1",
      "--http.port",
      "0",
      "--http.api",
      "eth,net,web3,debug,txpool",
      "--ws",
      "--ws.addr",
      "127.0.0.1",
      "--ws.port",
      "0",
      "--ws.api",
      "eth,net,web3,debug,txpool",
      "--ipcdisable",
      "--authrpc.port",
      "0",
      "--port",
      "0",
      "--nodiscover",
      "--maxpeers",
      "0",
      "--verbosity",
      "3",
    ]);
    const httpLine = await geth.waitForOutput(/HTTP server started\s+endpoint=([\d.]+:\d+)/, 60_000);
    const wsLine = await geth.waitForOutput(/WebSocket enabled\s+url=(ws:\/\/[\d.]+:\d+)/, 60_000);
    const gethEndpoint = endpoint("geth", `http://${httpLine[1]}`, wsLine[1] as string);

    cometh = spawnNode([
      "dev",
      "--init",
      genesisFile,
      "--port",
      "0",
      "--accounts",
      "1",
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      // geth's default RPC gas cap (Cosmos EVM's default is 25 000 000, docs/compatibility.md).
      "--json-rpc.gas-cap",
      "50000000",
      ...(opts.comethArgs ?? []),
    ]);
    cometh.ready.catch(() => undefined);
    const c = cometh;
    const banner = await new Promise<RegExpExecArray>((resolve, reject) => {
      const deadline = Date.now() + 60_000;
      const poll = () => {
        const m = /Ethereum JSON-RPC listening on http:\/\/(\S+) and ws:\/\/(\S+)/.exec(c.output());
        if (m !== null) return resolve(m);
        if (c.child.exitCode !== null || Date.now() > deadline) {
          return reject(new Error(`cometh dev did not start:\n${c.output()}`));
        }
        setTimeout(poll, 100);
      };
      poll();
    });
    const comethEndpoint = endpoint("cometh", `http://${banner[1]}`, `ws://${banner[2]}`);
    const g = geth;
    await waitAnswering(
      gethEndpoint,
      () => g.child.exitCode === null,
      () => g.output(),
    );
    await waitAnswering(
      comethEndpoint,
      () => c.child.exitCode === null,
      () => c.output(),
    );
    return {
      geth: gethEndpoint,
      cometh: comethEndpoint,
      both: [gethEndpoint, comethEndpoint],
      stop,
      gethOutput: () => g.output(),
      comethOutput: () => c.output(),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
