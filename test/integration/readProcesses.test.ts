import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { ContractFactory, Interface, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { deriveDevAccounts } from "../../src/app/evm/devAccounts.js";
import { initHome } from "../../src/config/index.js";
import { makeTempHome, type SpawnedNode, spawnNode } from "./testNode.js";

/**
 * A real node process with `[json-rpc] read-processes = 2`: the HTTP JSON-RPC address's connections go
 * round robin to the main process and two children. Over several kept-alive connections (so some are
 * served by each process), eth_call answers (success, revert with data, bad params, unknown block) and
 * the other methods, batches included, must be the same on every connection, and the same as the same
 * home's node restarted with read-processes = 0; a tx's effects must be visible to eth_call at
 * "latest" on every connection once its receipt is visible anywhere; and a SIGKILL of the node must
 * take the children (by the PIDs its log names) with it.
 */

const ERC20 = JSON.parse(readFileSync(new URL("../data/erc20.json", import.meta.url), "utf8")) as {
  abi: string[];
  bytecode: string;
};
const token = new Interface(ERC20.abi);
const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11";
/** Multicall3 getBlockNumber() */
const GET_BLOCK_NUMBER = "0x42cbb15c";
const CONNECTIONS = 6;

/** One kept-alive HTTP/1.1 connection, one request at a time, answers read by Content-Length. */
class Conn {
  readonly #socket: Socket;
  #buf = Buffer.alloc(0);
  #waiter: (() => void) | undefined;
  #closed = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#waiter?.();
    });
    socket.on("close", () => {
      this.#closed = true;
      this.#waiter?.();
    });
    socket.on("error", () => undefined);
  }

  static open(hostPort: string): Promise<Conn> {
    const [host, port] = hostPort.split(":") as [string, string];
    return new Promise((resolve, reject) => {
      const s = connect({ host, port: Number(port) }, () => resolve(new Conn(s)));
      s.once("error", reject);
    });
  }

  get localPort(): number {
    return this.#socket.localPort ?? 0;
  }

  async #until(ready: () => boolean): Promise<void> {
    while (!ready()) {
      if (this.#closed) throw new Error("the connection closed before the answer was complete");
      await new Promise<void>((r) => {
        this.#waiter = r;
      });
      this.#waiter = undefined;
    }
  }

  /** Sends one request and returns its answer (status line, headers lower-cased, body text). */
  async request(
    body: string,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: string; headers: Record<string, string>; body: string }> {
    const head = [
      "POST / HTTP/1.1",
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      ...Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`),
    ].join("\r\n");
    this.#socket.write(`${head}\r\n\r\n${body}`);
    await this.#until(() => this.#buf.includes("\r\n\r\n"));
    const end = this.#buf.indexOf("\r\n\r\n");
    const lines = this.#buf.toString("latin1", 0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(":");
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers["content-length"]);
    await this.#until(() => this.#buf.length >= end + 4 + length);
    const text = this.#buf.toString("utf8", end + 4, end + 4 + length);
    this.#buf = this.#buf.subarray(end + 4 + length);
    return { status: lines[0] as string, headers, body: text };
  }

  close(): void {
    this.#socket.destroy();
  }
}

let tmp: { home: string; cleanup(): Promise<void> };
let node: SpawnedNode;
let evmAddress: string;
let metricsAddress: string;
let childPids: number[] = [];
let conns: Conn[] = [];
let id = 0;

interface LogLine {
  msg?: string;
  pid?: number;
  process?: number;
  pids?: number[];
  address?: string;
  module?: string;
}

function logLines(out: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const l of out.split("\n")) {
    if (!l.startsWith("{")) continue;
    try {
      lines.push(JSON.parse(l) as LogLine);
    } catch {
      // a partial line
    }
  }
  return lines;
}

/** The first log line matching `match`, waiting for the node's output as it comes (bounded). */
async function logLine(n: SpawnedNode, match: (l: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = logLines(n.output()).find(match);
    if (found !== undefined) return found;
    if (Date.now() > deadline || n.child.exitCode !== null) throw new Error(`log line not found:\n${n.output()}`);
    await new Promise<void>((resolve) => {
      const done = () => {
        n.child.stdout?.off("data", done);
        n.child.stderr?.off("data", done);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      n.child.stdout?.on("data", done);
      n.child.stderr?.on("data", done);
    });
  }
}

/** Every node started here, stopped at the end whatever the tests did (a filtered run skips the stops). */
const started: SpawnedNode[] = [];

async function startNode(readProcesses: number, extra: string[] = [], connections = CONNECTIONS): Promise<void> {
  node = spawnNode([
    "start",
    "--home",
    tmp.home,
    "--proxy_app",
    "evm",
    "--rpc.laddr",
    "tcp://127.0.0.1:0",
    "--p2p.laddr",
    "tcp://127.0.0.1:0",
    "--json-rpc.enable",
    "--json-rpc.address",
    "127.0.0.1:0",
    "--json-rpc.ws-address",
    "127.0.0.1:0",
    "--json-rpc.read-processes",
    String(readProcesses),
    "--consensus.timeout_commit",
    "10ms",
    "--log_format",
    "json",
    "--instrumentation.prometheus",
    "--instrumentation.prometheus_listen_addr",
    "127.0.0.1:0",
    ...extra,
  ]);
  started.push(node);
  await node.ready;
  // pino writes asynchronously: the log lines may follow the announcement on stdout.
  const http = await logLine(node, (l) => l.msg === "Starting EVM JSON-RPC HTTP server");
  if (http.address === undefined) throw new Error(`no EVM JSON-RPC address in the log:\n${node.output()}`);
  evmAddress = http.address;
  metricsAddress = (await logLine(node, (l) => l.msg === "Prometheus metrics listening")).address as string;
  childPids = readProcesses === 0 ? [] : ((await logLine(node, (l) => l.msg === "Read processes started")).pids ?? []);
  conns = await Promise.all(Array.from({ length: connections }, () => Conn.open(evmAddress)));
}

async function stopNode(): Promise<void> {
  for (const c of conns) c.close();
  conns = [];
  node.child.kill("SIGTERM");
  await node.exited;
}

function body(method: string, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params });
}

/** The answer on `conn`, without its id. */
async function ask(conn: Conn, method: string, params: unknown[]): Promise<string> {
  return (await conn.request(body(method, params))).body.replace(/"id":\d+,/, "");
}

async function rpc<T>(method: string, params: unknown[], conn: Conn = conns[0] as Conn): Promise<T> {
  const r = JSON.parse((await conn.request(body(method, params))).body) as { result?: T; error?: { message: string } };
  if (r.error !== undefined) throw new Error(`${method}: ${r.error.message}`);
  return r.result as T;
}

/** True while the process exists and is not a zombie (an exited child nobody reaped yet). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** TCP sockets a process holds (Linux: /proc/PID/fd against /proc/net/tcp{,6}), or undefined where unreadable. */
function socketCount(pid: number): number | undefined {
  try {
    const tcp = new Set<string>();
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      let text = "";
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n").slice(1)) {
        const inode = line.trim().split(/\s+/)[9];
        if (inode !== undefined && inode !== "0") tcp.add(inode);
      }
    }
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        return m !== null && tcp.has(m[1] as string);
      } catch {
        return false;
      }
    }).length;
  } catch {
    return undefined;
  }
}

const [alice, bob] = deriveDevAccounts().map((d) => new Wallet(d.privateKey)) as [Wallet, Wallet];
let nonce = 0;
let tokenAddr: string;
let fixedHeight: number;
/** Requests at fixed heights and the answer every connection of the read-processes node gave. */
const recorded: { body: string; answer: string }[] = [];

async function send(
  tx: { to?: string; data?: string },
  via: Conn,
): Promise<{ blockNumber: string; contractAddress: string | null; hash: string }> {
  const raw = await alice.signTransaction({
    type: 2,
    chainId: 262144n,
    nonce: nonce++,
    to: tx.to ?? null,
    data: tx.data ?? "0x",
    gasLimit: 2_000_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
  });
  const hash = await rpc<string>("eth_sendRawTransaction", [raw], via);
  // The receipt is looked for on every connection in turn: whichever process answers first.
  for (let i = 0; ; i++) {
    const r = await rpc<{ blockNumber: string; contractAddress: string | null } | null>(
      "eth_getTransactionReceipt",
      [hash],
      conns[i % conns.length],
    );
    if (r !== null) return { ...r, hash };
    if (i > 3000) throw new Error(`tx ${hash} was not mined`);
  }
}

beforeAll(async () => {
  tmp = await makeTempHome("cometh-read-processes-");
  await initHome(tmp.home, { chainId: "read-processes", moniker: "rp" });
  await startNode(2);
  const r = await send(
    { data: (await new ContractFactory(ERC20.abi, ERC20.bytecode).getDeployTransaction()).data },
    conns[1] as Conn,
  );
  tokenAddr = r.contractAddress as string;
  fixedHeight = Number(r.blockNumber);
}, 120_000);

afterAll(async () => {
  for (const c of conns) c.close();
  for (const n of started) {
    if (n.child.exitCode !== null || n.child.signalCode !== null) continue;
    n.child.kill("SIGKILL");
    await n.exited;
  }
  for (const pid of childPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  await tmp?.cleanup();
});

function fixedRequests(h: number): string[] {
  const tag = `0x${h.toString(16)}`;
  const balanceOf = { to: tokenAddr, data: token.encodeFunctionData("balanceOf", [alice.address]) };
  const tooMuch = {
    from: bob.address,
    to: tokenAddr,
    data: token.encodeFunctionData("transfer", [alice.address, 10n ** 30n]),
  };
  const reverting = { to: MULTICALL3, data: "0xdeadbeef" };
  return [
    body("eth_call", [balanceOf, tag]),
    body("eth_call", [tooMuch, tag]),
    body("eth_call", [reverting, tag]),
    // bad params: a short address, a missing argument, too many, not an array
    body("eth_call", [{ to: "0x1234" }, tag]),
    body("eth_call", []),
    body("eth_call", [balanceOf, tag, {}, 1]),
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: {} }),
    // unknown blocks: past the head, an unknown hash
    body("eth_call", [balanceOf, "0xffffffff"]),
    body("eth_call", [balanceOf, { blockHash: `0x${"11".repeat(32)}` }]),
    body("eth_getBalance", [alice.address, tag]),
    body("eth_getCode", [tokenAddr, tag]),
    body("eth_getStorageAt", [tokenAddr, "0x0", tag]),
    body("eth_getTransactionCount", [alice.address, tag]),
    body("eth_getBlockByNumber", [tag, false]),
    // batches: eth_call only, and mixed with methods only the main process answers
    `[${body("eth_call", [balanceOf, tag])},${body("eth_call", [tooMuch, tag])}]`,
    `[${body("eth_call", [balanceOf, tag])},${body("eth_getBlockByNumber", [tag, false])},${body("net_version", [])}]`,
    "[]",
    "{not json",
  ];
}

describe("read-processes = 2", () => {
  test("behavior: the children started and own some of the connections", () => {
    expect(childPids).toHaveLength(2);
    for (const pid of childPids) expect(alive(pid)).toBe(true);
    if (process.platform !== "linux") return;
    // Each child holds its share of the 6 connections (2 of 3 turns go to children).
    expect(childPids.map((pid) => socketCount(pid))).toEqual([2, 2]);
  });

  test("behavior: answers at a fixed height are the same on every connection", async () => {
    // The block with a hash: resolved by hash too.
    const block = await rpc<{ hash: string }>("eth_getBlockByNumber", [`0x${fixedHeight.toString(16)}`, false]);
    const balanceOf = { to: tokenAddr, data: token.encodeFunctionData("balanceOf", [alice.address]) };
    const bodies = [...fixedRequests(fixedHeight), body("eth_call", [balanceOf, { blockHash: block.hash }])];
    for (const b of bodies) {
      const answers = await Promise.all(conns.map(async (c) => (await c.request(b)).body.replace(/"id":\d+,/g, "")));
      expect(new Set(answers).size, `${b}: ${answers.join(" | ")}`).toBe(1);
      recorded.push({ body: b, answer: answers[0] as string });
    }
    const answerOf = (i: number) => (recorded[i] as { answer: string }).answer;
    const [ok, revert, revertEmpty, shortAddr, missing] = [0, 1, 2, 3, 4].map(answerOf);
    expect(ok).toMatch(/^\{"jsonrpc":"2.0","result":"0x[0-9a-f]{64}"\}$/);
    expect(revert).toMatch(/"code":3,"message":"execution reverted.*","data":"0x08c379a0/);
    expect(revertEmpty).toBe('{"jsonrpc":"2.0","error":{"code":3,"message":"execution reverted","data":"0x"}}');
    expect(shortAddr).toContain('"code":-32602');
    expect(missing).toContain("missing value for required argument 0");
    expect(answerOf(7)).toContain("header not found");
    expect(answerOf(8)).toContain("header for hash not found");
    expect(answerOf(bodies.length - 1)).toBe(ok);
  });

  test("behavior: a tx's effect is visible to eth_call at latest on every connection once its receipt is seen", async () => {
    const balanceOf = { to: tokenAddr, data: token.encodeFunctionData("balanceOf", [bob.address]) };
    for (let i = 1; i <= 4; i++) {
      // Sent on a different connection each time (forwarded by a child to the main process, or not).
      await send({ to: tokenAddr, data: token.encodeFunctionData("transfer", [bob.address, 7n]) }, conns[i] as Conn);
      const seen = await Promise.all(conns.map((c) => rpc<string>("eth_call", [balanceOf, "latest"], c)));
      expect(seen.map((s) => BigInt(s))).toEqual(conns.map(() => 7n * BigInt(i)));
      // A pending nonce needs the mempool: a child passes it to the main process.
      const nonces = await Promise.all(
        conns.map((c) => rpc<string>("eth_getTransactionCount", [alice.address, "pending"], c)),
      );
      expect(nonces.map(Number)).toEqual(conns.map(() => nonce));
    }
  });

  test("behavior: 'latest' on every connection is a height between the head before and after", async () => {
    const wrong: unknown[] = [];
    // Each loop asks the head on two connections of its own (one request at a time on each).
    const extra = await Promise.all(conns.flatMap(() => [Conn.open(evmAddress), Conn.open(evmAddress)]));
    await Promise.all(
      conns.map(async (c, k) => {
        const [b, a] = [extra[2 * k] as Conn, extra[2 * k + 1] as Conn];
        for (let i = 0; i < 30; i++) {
          const before = Number(await rpc<string>("eth_blockNumber", [], b));
          const pad = (k * 1000 + i).toString(16).padStart(64, "0");
          const data = `${GET_BLOCK_NUMBER}${pad}`;
          const seen = Number(BigInt(await rpc<string>("eth_call", [{ to: MULTICALL3, data }, "latest"], c)));
          const after = Number(await rpc<string>("eth_blockNumber", [], a));
          if (seen < before || seen > after) wrong.push({ before, seen, after, conn: k });
        }
      }),
    );
    for (const e of extra) e.close();
    expect(wrong).toEqual([]);
  });

  test("behavior: what the fast path gives node:http (CORS) is answered on every connection, which then goes on", async () => {
    const chainId = body("eth_chainId", []);
    for (const c of conns) {
      const cors = await c.request(chainId, { Origin: "http://example.com" });
      expect(cors.status).toBe("HTTP/1.1 200 OK");
      expect(cors.headers["access-control-allow-origin"]).toBe("*");
      expect(cors.body).toMatch(/^\{"jsonrpc":"2.0","id":\d+,"result":"0x40000"\}$/);
      // The rest of the connection is node:http's in the main process: still answered.
      expect(await ask(c, "eth_call", [{ to: MULTICALL3, data: GET_BLOCK_NUMBER }, "0x1"])).toBe(
        '{"jsonrpc":"2.0","result":"0x0000000000000000000000000000000000000000000000000000000000000001"}',
      );
    }
    conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => Conn.open(evmAddress)));
  });

  test("behavior: a read process that dies is replaced; its connections are dropped, the others go on", async () => {
    const victim = childPids[0] as number;
    const alsoGone = childPids.slice(1);
    process.kill(victim, "SIGKILL");
    const restarted = await logLine(
      node,
      (l) => l.msg === "Read process ready" && l.pid !== undefined && !childPids.includes(l.pid),
    );
    childPids = [...alsoGone, restarted.pid as number];
    expect(alive(victim)).toBe(false);
    // The connections it served were cut; every other one still answers, and new ones are served.
    const survivors: Conn[] = [];
    for (const c of conns) {
      try {
        await c.request(body("eth_chainId", []));
        survivors.push(c);
      } catch {
        c.close();
      }
    }
    expect(survivors.length).toBeGreaterThanOrEqual(CONNECTIONS - 2);
    expect(survivors.length).toBeLessThan(CONNECTIONS);
    const fresh = await Promise.all(Array.from({ length: CONNECTIONS }, () => Conn.open(evmAddress)));
    const answers = await Promise.all(
      fresh.map((c) => ask(c, "eth_call", [{ to: MULTICALL3, data: GET_BLOCK_NUMBER }, "0x1"])),
    );
    expect(new Set(answers)).toEqual(
      new Set(['{"jsonrpc":"2.0","result":"0x0000000000000000000000000000000000000000000000000000000000000001"}']),
    );
    conns = [...survivors, ...fresh];
  });

  test("behavior: the calls the children answer are in the node's metrics", async () => {
    const calls = async (): Promise<number> => {
      const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
      const m = /^cometh_rpc_requests_total\{server="evm",method="eth_call"[^}]*\} (\d+)$/m.exec(text);
      return Number(m?.[1] ?? 0);
    };
    // The children may still hold the last test's calls (sent once a second): wait until a second passes
    // with no change (bounded), so that `before` has them.
    let before = await calls();
    for (const settle = Date.now() + 10_000; Date.now() < settle; ) {
      await new Promise((r) => setTimeout(r, 1100));
      const now = await calls();
      if (now === before) break;
      before = now;
    }
    const data = token.encodeFunctionData("balanceOf", [alice.address]);
    for (let i = 0; i < 5; i++) await Promise.all(conns.map((c) => rpc("eth_call", [{ to: tokenAddr, data }], c)));
    // The children send theirs once a second: wait for all of them (bounded).
    const deadline = Date.now() + 10_000;
    while ((await calls()) < before + 5 * conns.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // At least these calls (the main process alone answers about a third of them); the children may also
    // still have had the last test's calls (a few) to send when `before` was read.
    const counted = (await calls()) - before;
    expect(counted).toBeGreaterThanOrEqual(5 * conns.length);
    expect(counted).toBeLessThanOrEqual(5 * conns.length + 2 * CONNECTIONS);
  });

  test("behavior: a SIGKILL of the node leaves no read process", async () => {
    expect(childPids.every(alive)).toBe(true);
    node.child.kill("SIGKILL");
    await node.exited;
    // Each child sees its channel close and exits; wait for that (bounded).
    const deadline = Date.now() + 20_000;
    while (childPids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(childPids.filter(alive)).toEqual([]);
  });

  test("behavior: max-open-connections counts a connection a child serves until it closes there", async () => {
    await startNode(1, ["--json-rpc.max-open-connections", "2"], 0);
    const chainId = '{"jsonrpc":"2.0","result":"0x40000"}';
    try {
      // Round robin from the start: the first connection goes to the child, the second stays here.
      const [inChild, inMain] = [await Conn.open(evmAddress), await Conn.open(evmAddress)];
      expect(await ask(inChild, "eth_chainId", [])).toBe(chainId);
      expect(await ask(inMain, "eth_chainId", [])).toBe(chainId);
      if (process.platform === "linux") expect(socketCount(childPids[0] as number)).toBe(1);
      const third = await Conn.open(evmAddress);
      let answered = false;
      const waiting = third.request(body("eth_chainId", [])).then((r) => {
        answered = true;
        return r;
      });
      expect(await ask(inMain, "eth_chainId", [])).toBe(chainId);
      expect(answered).toBe(false);
      inChild.close();
      expect((await waiting).body).toMatch(/"result":"0x40000"/);
      conns = [inMain, third];
    } finally {
      await stopNode();
    }
  }, 60_000);

  test("behavior: a connection whose requests a child keeps passing on goes back to the main process, and goes on there", async () => {
    // Blocks less often: a call in the window between a commit and its publication is passed on too.
    await startNode(1, ["--consensus.timeout_commit", "500ms"], 0);
    const pid = childPids[0] as number;
    try {
      // Round robin from the start: the first connection goes to the child.
      const conn = await Conn.open(evmAddress);
      conns = [conn];
      const chainId = '{"jsonrpc":"2.0","result":"0x40000"}';
      expect(await ask(conn, "eth_chainId", [])).toBe(chainId);
      if (process.platform === "linux") expect(socketCount(pid)).toBe(1);
      // net_version is the main process's (eth_chainId is the child's, or the main process's when a block
      // committed in between): once 8 or more were passed on, three in four, the next request goes back
      // with the connection and is answered by the main process's fast path, as every later one.
      const version = await ask(conn, "net_version", []);
      expect(version).toMatch(/"result":"262144"/);
      const inChild = () => process.platform !== "linux" || socketCount(pid) === 1;
      let sent = 2;
      for (; sent < 9; sent++) {
        expect(inChild()).toBe(true);
        expect(await ask(conn, "net_version", [])).toBe(version);
      }
      if (process.platform === "linux") {
        // Gone by the tenth request at the latest; the child closes its copy once the main process took it.
        expect(await ask(conn, "net_version", [])).toBe(version);
        const deadline = Date.now() + 10_000;
        while (socketCount(pid) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(socketCount(pid)).toBe(0);
      }
      for (const m of ["eth_chainId", "net_version"]) expect(await ask(conn, m, [])).toMatch(/"result":/);
      // A connection that asks eth_call stays in the child, whatever else it passes on.
      const reader = await Conn.open(evmAddress);
      const stays = await Conn.open(evmAddress);
      conns = [conn, reader, stays];
      const call = [{ to: MULTICALL3, data: GET_BLOCK_NUMBER }, "latest"];
      for (let i = 0; i < 12; i++) {
        expect(await ask(stays, "eth_call", call)).toMatch(/"result":"0x/);
        expect(await ask(stays, "net_version", [])).toBe(version);
      }
      if (process.platform === "linux") expect(socketCount(pid)).toBe(1);
    } finally {
      await stopNode();
    }
  }, 60_000);

  test("behavior: the node stopped by SIGTERM stops its read processes, even with connections open", async () => {
    await startNode(1);
    expect(childPids).toHaveLength(1);
    // Kept-alive connections, some in the child: the stop cuts them rather than waiting for them to idle.
    for (const c of conns) expect(await ask(c, "eth_chainId", [])).toBe('{"jsonrpc":"2.0","result":"0x40000"}');
    node.child.kill("SIGTERM");
    expect(await node.exited).toBe(0);
    expect(childPids.filter(alive)).toEqual([]);
    for (const c of conns) c.close();
    conns = [];
  }, 60_000);

  test("behavior: the same answers from the home restarted with read-processes = 0", async () => {
    await startNode(0);
    expect(childPids).toEqual([]);
    try {
      for (const r of recorded) {
        for (const c of conns.slice(0, 2))
          expect((await c.request(r.body)).body.replace(/"id":\d+,/g, "")).toBe(r.answer);
      }
    } finally {
      await stopNode();
    }
  }, 60_000);
});
