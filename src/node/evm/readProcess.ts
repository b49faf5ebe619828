/**
 * A read process (`[json-rpc] read-processes`, started by readProcesses.ts): serves the connections
 * of the HTTP JSON-RPC address the main process hands it, on the same fast path with the same limits
 * (evmFastHttp). It opens the EVM app's LMDB file itself (lmdb locks across processes) and answers
 * every payload made only of eth_call and the state reads in SERVED with the server's own code
 * (evmPayloads, the eth namespace's handlers, EvmExecutionAdapter and EvmStateAdapter over its own
 * EvmReaderImpl), so its answers are the main process's byte for byte. Everything else goes to the main process: other methods' bodies over the channel
 * (the main's answer is written back as it is), and connections that leave the fast path (CORS,
 * upgrades, HTTP/1.0...) as sockets, once the answers before them are written.
 *
 * "latest" is the height the main process last published (readProcessWire.ts `height`). A payload
 * reads one snapshot; when the snapshot holds a newer commit than that height (the main process has
 * committed it and has not published it yet, or its message is still in the channel), the payload is
 * passed to the main process, which answers at its own latest: the answer can never be older than
 * what the main process has shown, nor newer than what it shows.
 *
 * The process exits when its channel closes: the node stopping, or dying (even by SIGKILL).
 */
import type { Socket } from "node:net";
import { openSnapshotReader, type SnapshotReader } from "../../app/evm/index.js";
import {
  createEvmRuntime,
  type EvmServices,
  evmFastHttp,
  evmPayloads,
  FORWARD,
  ForwardToMainError,
  httpDeadline,
  jsonAnswer,
  settingsFromConfig,
} from "../../rpc/evm/index.js";
import { type FastAnswer, isPromise, type MaybePromise, serveFastHttp } from "../../rpc/jsonrpc/index.js";
import { silentLogger } from "../../util/logger.js";
import { EvmExecutionAdapter } from "./execution.js";
import {
  type FromReadProcess,
  ObservationBatch,
  type ReadProcessSetup,
  readProcessSetup,
  type ToReadProcess,
  toReadProcess,
} from "./readProcessWire.js";
import { EvmStateAdapter } from "./state.js";

/**
 * The methods answered here; a payload naming any other goes to the main process whole. eth_call is
 * what read processes are for; the others read only the published height and the state, and passing
 * them to the main process would make them cost more on a child's connections than on its own.
 */
const SERVED = new Set([
  "eth_call",
  "eth_blockNumber",
  "eth_chainId",
  "eth_getBalance",
  "eth_getCode",
  "eth_getStorageAt",
  "eth_getTransactionCount",
]);
/** How often the outcomes of the calls answered here go to the main process's metrics. */
const OBSERVE_FLUSH_MS = 1000;

if (process.send === undefined) {
  process.stderr.write("readProcess.ts runs as a child process with an IPC channel (readProcesses.ts starts it)\n");
  process.exit(2);
}
// The node is gone (or stopping): so is this process, whatever it was doing.
process.on("disconnect", () => process.exit(0));

function send(m: FromReadProcess, handle?: Socket): void {
  if (process.connected !== true) return;
  try {
    if (handle === undefined) process.send?.(m);
    else process.send?.(m, handle);
  } catch {
    // The channel closed: 'disconnect' ends the process.
  }
}

/** Messages that arrive before the database is open (none is sent before `ready`, but be safe). */
const early: { m: unknown; handle: unknown }[] = [];
let onMessage: ((m: unknown, handle: unknown) => void) | undefined;
process.on("message", (m: unknown, handle: unknown) => {
  if (onMessage === undefined) early.push({ m, handle });
  else onMessage(m, handle);
});

let setup: ReadProcessSetup;
let snap: SnapshotReader;
try {
  setup = readProcessSetup(process.argv[2]);
  snap = await openSnapshotReader(
    {
      dbFile: setup.dbFile,
      noSync: setup.noSync,
      chainId: BigInt(setup.chainId),
      allowUnprotectedTxs: setup.allowUnprotectedTxs,
    },
    {
      pendingNonce: () => {
        throw new ForwardToMainError("a pending nonce");
      },
    },
  );
} catch (err) {
  send({ t: "failed", error: (err as Error).message });
  process.exit(1);
}
const reader = snap.reader;

/** The height the main process published last (its "latest"); -1 until it says. */
let latest = -1;

/**
 * A service area this process does not have: every member throws ForwardToMainError, so a call that
 * needs it is answered by the main process instead. `own` members are this process's.
 */
function mainOnly<T extends object>(area: string, own: Partial<T> = {}): T {
  return new Proxy(own as T, {
    get(target, key) {
      if (Object.hasOwn(target, key)) return (target as Record<string | symbol, unknown>)[key];
      if (key === "then" || typeof key === "symbol") return undefined;
      return () => {
        throw new ForwardToMainError(`${area}.${key}`);
      };
    },
  });
}

const chainId = BigInt(setup.chainId);
const services: EvmServices = {
  chain: mainOnly<EvmServices["chain"]>("chain", {
    latestHeight: () => Math.max(0, latest),
    blockNumberByHash: (hash) => {
      const b = reader.blockByHash(hash);
      // Unknown here (the genesis by its zero hash, a height not yet published): the main process says.
      if (b === undefined || b.height > latest) throw new ForwardToMainError("a block by hash");
      return b.height;
    },
  }),
  node: mainOnly<EvmServices["node"]>("node", { chainId: () => chainId }),
  execution: new EvmExecutionAdapter(reader, undefined),
  state: new EvmStateAdapter(reader),
  mempool: mainOnly("mempool"),
  fees: mainOnly("fees"),
  events: mainOnly("events"),
};

const observed = new ObservationBatch();
const rpcSettings = settingsFromConfig({
  address: "",
  wsAddress: "",
  api: setup.rpc.api,
  gasCap: BigInt(setup.rpc.gasCap),
  evmTimeoutMs: setup.rpc.evmTimeoutMs,
  txfeeCap: 0,
  filterCap: 0,
  feehistoryCap: 1,
  logsCap: 0,
  blockRangeCap: 0,
  httpTimeoutMs: setup.rpc.httpTimeoutMs,
  httpIdleTimeoutMs: setup.rpc.httpIdleTimeoutMs,
  allowUnprotectedTxs: setup.allowUnprotectedTxs,
  maxOpenConnections: 0,
  batchRequestLimit: setup.rpc.batchRequestLimit,
  batchResponseMaxSize: setup.rpc.batchResponseMaxSize,
});
const runtime = createEvmRuntime(services, rpcSettings, silentLogger(), {
  observer: {
    method: (name) => ({
      done: (start, failed) => observed.add(name, performance.now() - start, failed),
    }),
  },
});
const payloads = evmPayloads(services, runtime, {
  batchRequestLimit: setup.rpc.batchRequestLimit,
  batchResponseMaxSize: setup.rpc.batchResponseMaxSize,
});

const flush = setInterval(() => {
  const m = observed.take();
  if (m !== undefined) send(m);
}, OBSERVE_FLUSH_MS);
flush.unref();

// ---- requests passed to the main process ----------------------------------------------------------

let nextForward = 0;
const waiting = new Map<number, (answer: string) => void>();

/** Passes a body to the main process, with the senders of the txs it sends when there are any (`h`). */
function forward(b: string, started: number, h?: [string, string][]): Promise<FastAnswer> {
  nextForward = nextForward >= 0x7fffffff ? 1 : nextForward + 1;
  const r = nextForward;
  return new Promise((resolve) => {
    waiting.set(r, resolve);
    send(h === undefined ? { t: "forward", r, b, s: started } : { t: "forward", r, b, s: started, h });
  });
}

const SEND_RAW = /"eth_sendRawTransaction(?:Sync)?"/;
const RAW_HEX = /^0x(?:[0-9a-fA-F]{2})+$/;

/**
 * The senders of the signed txs an eth_sendRawTransaction(Sync) payload (or batch) passes to the main
 * process, recovered here as the app's decode recovers them (SnapshotReader.senderOf): the main process's CheckTx
 * of those bytes then takes each sender instead of recovering it on its own thread (sender recovery is
 * ~70 µs of the ~700 µs a mined transfer costs the main thread). Bytes that do not decode get none.
 */
function senderHints(body: string): [string, string][] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const out: [string, string][] = [];
  for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof call !== "object" || call === null) continue;
    const { method, params } = call as { method?: unknown; params?: unknown };
    if (method !== "eth_sendRawTransaction" && method !== "eth_sendRawTransactionSync") continue;
    const hex = Array.isArray(params) ? params[0] : undefined;
    if (typeof hex !== "string" || !RAW_HEX.test(hex)) continue;
    const found = snap.senderOf(new Uint8Array(Buffer.from(hex.slice(2), "hex")));
    if (found !== undefined) out.push([found.key, found.sender]);
  }
  return out.length === 0 ? undefined : out;
}

// ---- eth_call here ----------------------------------------------------------------------------------

/** Takes a snapshot; true when it holds exactly the published height (else the main process answers). */
function pinLatest(): boolean {
  const height = snap.pin();
  return height >= 0 && height === latest;
}

/**
 * What one connection's requests have been: answered here, or passed to the main process. A connection
 * whose requests are mostly passed on (a client sending transactions and polling receipts) costs both
 * processes an IPC round trip a request for nothing: once at least PASS_BACK_AFTER of its requests were
 * passed on, three in four or more, it goes back to the main process at its next request (`back`), to be
 * served there on the fast path as if it had stayed.
 */
interface ConnUse {
  here: number;
  passed: number;
  back: boolean;
}

const PASS_BACK_AFTER = 8;

function passOn(body: string, started: number, use: ConnUse, hints?: [string, string][]): Promise<FastAnswer> {
  use.passed++;
  if (use.passed >= PASS_BACK_AFTER && use.passed >= 3 * use.here) use.back = true;
  return forward(body, started, hints);
}

function answeredHere(out: string | undefined, use: ConnUse): FastAnswer {
  use.here++;
  return jsonAnswer(out);
}

function answer(raw: Buffer, started: number, use: ConnUse): MaybePromise<FastAnswer> {
  const body = raw.toString("utf8");
  // A payload that sends a tx is the main process's whatever else it holds (SERVED has no send): passed
  // on without a snapshot or a parse here (senderHints parses it once, for the senders).
  if (SEND_RAW.test(body)) return passOn(body, started, use, senderHints(body));
  let pinned = true;
  try {
    if (!pinLatest()) return passOn(body, started, use);
    const mark = observed.mark();
    const out = payloads.answerHere(body, httpDeadline(setup.rpc.httpTimeoutMs, started), SERVED);
    if (!isPromise(out)) {
      if (out !== FORWARD) return answeredHere(out, use);
      observed.dropSince(mark);
      return passOn(body, started, use);
    }
    // The snapshot stays pinned until the payload's calls are done. They settle in microtasks (nothing
    // here waits on I/O: calls run in process, blocks by hash are read synchronously), so no other
    // payload pins a snapshot meanwhile.
    pinned = false;
    return out.then(
      (done) => {
        snap.release();
        if (done !== FORWARD) return answeredHere(done, use);
        observed.dropSince(mark);
        return passOn(body, started, use);
      },
      (err: unknown) => {
        snap.release();
        throw err;
      },
    );
  } finally {
    if (pinned) snap.release();
  }
}

// ---- connections -------------------------------------------------------------------------------------

function logError(err: unknown): void {
  send({ t: "error", error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
}

/**
 * Stops reading the descriptor (libuv's readStop): a socket handed to another process must not have
 * bytes read here that the other side never gets. Node's public API has no such call (pause() stops
 * the delivery, not the reading).
 */
function stopReading(s: Socket): void {
  const h = (s as unknown as { _handle?: { reading?: boolean; readStop?: () => number } | null })._handle;
  if (h === undefined || h === null || typeof h.readStop !== "function") return;
  h.reading = false;
  h.readStop();
}

function serve(c: number, socket: Socket): void {
  let handedBack = false;
  const use: ConnUse = { here: 0, passed: 0, back: false };
  socket.once("close", () => {
    if (!handedBack) send({ t: "closed", c });
  });
  const fast = evmFastHttp(setup.rpc, (body, started) => answer(body, started, use), logError);
  serveFastHttp(socket, {
    ...fast,
    // A connection going back (ConnUse) takes no further request here: the fast path's fallback gives it.
    accepts: (method, target) => !use.back && fast.accepts(method, target),
    // node:http's (or, going back, the main process's fast path): back to the main process with what was read, once the answers before are written.
    fallback: (s, pending) => {
      const give = () => {
        handedBack = true;
        // What the socket read past the fast path's bytes is in its buffer: taken out with no read of
        // the descriptor in between (that would happen only in the event loop's next poll).
        const rest: Buffer[] = [pending];
        stopReading(s);
        for (let chunk = s.read() as Buffer | null; chunk !== null; chunk = s.read() as Buffer | null) rest.push(chunk);
        stopReading(s);
        const p = Buffer.concat(rest).toString("base64");
        send(use.back ? { t: "back", c, p, f: 1 } : { t: "back", c, p }, s);
      };
      // Answers still being flushed are this process's to finish ('drain' only follows a full buffer); a
      // client that does not take them within the request timeout is cut, as the fast path would.
      const deadline = Date.now() + (setup.rpc.httpTimeoutMs > 0 ? setup.rpc.httpTimeoutMs : 30_000);
      const whenFlushed = () => {
        if (s.destroyed) return;
        if (s.writableLength === 0) give();
        else if (Date.now() > deadline) s.destroy();
        else setTimeout(whenFlushed, 2);
      };
      whenFlushed();
    },
  });
  socket.resume();
}

onMessage = (raw, handle) => {
  let m: ToReadProcess;
  try {
    m = toReadProcess(raw);
  } catch (err) {
    send({ t: "error", error: (err as Error).message });
    (handle as Socket | undefined)?.destroy?.();
    return;
  }
  switch (m.t) {
    case "height":
      latest = m.h;
      return;
    case "answer": {
      const done = waiting.get(m.r);
      if (done === undefined) return;
      waiting.delete(m.r);
      done(m.a);
      return;
    }
    case "conn": {
      const socket = handle as Socket | undefined;
      if (socket === undefined || socket === null) {
        send({ t: "closed", c: m.c });
        return;
      }
      serve(m.c, socket);
      return;
    }
  }
};
for (const { m, handle } of early.splice(0)) onMessage(m, handle);
send({ t: "ready" });
