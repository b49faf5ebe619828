/**
 * A read worker's thread (started by readPool.ts): opens the EVM app's LMDB environment again (lmdb
 * shares one environment per file between the threads of a process), builds its own EvmReaderImpl over
 * it, and answers the reads the main thread posts, one at a time. Each answer reads one snapshot
 * (KvSnapshotStore.pin): the latest committed state when the request starts, which includes the height
 * the main thread resolved; the state after that height is read from the history tables when a newer
 * block has committed since.
 */
import { parentPort, workerData } from "node:worker_threads";
import { plainCallResult } from "./reader.js";
import {
  createTracer,
  detachBytes,
  errorToWire,
  type FromWorker,
  heightOf,
  isCancelled,
  type ReadRequest,
  type ReadWorkerSetup,
  type ToWorker,
} from "./readWire.js";
import { openSnapshotReader, type SnapshotReader } from "./snapshotReader.js";

const port = parentPort;
if (port === null) throw new Error("readWorker.ts runs as a worker thread (readPool.ts starts it)");
const { setup, cancelled } = workerData as { setup: ReadWorkerSetup; cancelled: Int32Array };

function send(m: FromWorker): void {
  port?.postMessage(m);
}

let snap: SnapshotReader;
try {
  snap = await openSnapshotReader(setup, {
    pendingNonce: () => {
      throw new Error("a read worker has no mempool: pending nonces are read on the main thread");
    },
    decodeCacheSize: 1000,
  });
} catch (err) {
  send({ kind: "failed", error: errorToWire(err) });
  process.exit(1);
}
const reader = snap.reader;

/** Takes a snapshot that includes `height` (the main thread saw it committed before posting). */
function snapshotFor(height: number): void {
  for (let tries = 0; ; tries++) {
    const committed = snap.pin();
    // A commit is visible to every thread once its write transaction ended, before the main thread
    // publishes the height: a fresh snapshot always has it. Retried in case lmdb handed back an
    // older shared read transaction.
    if (committed < 0 || committed >= height || tries >= 3) return;
  }
}

async function run(req: ReadRequest): Promise<unknown> {
  switch (req.op) {
    case "call":
      return plainCallResult(await reader.call(req.args, req.opts));
    case "estimateGas":
      return reader.estimateGas(req.args, req.opts);
    case "traceCall":
      return reader.traceCall(req.args, createTracer(req.tracer), req.opts);
    case "logs":
      return reader.logs(req.filter);
  }
}

async function answer(req: ReadRequest & { id: number }): Promise<void> {
  // Taken back by the pool while it waited here (a long request ran ahead of it): another worker has it.
  if (isCancelled(cancelled, req.id)) return;
  try {
    snapshotFor(heightOf(req));
    const value = await run(req);
    send({ kind: "done", id: req.id, value: detachBytes(value) });
  } catch (err) {
    send({ kind: "error", id: req.id, error: errorToWire(err) });
  } finally {
    snap.release();
  }
}

let queue: Promise<void> = Promise.resolve();
port.on("message", (m: ToWorker) => {
  if (m.op === "close") {
    queue = queue.then(async () => {
      await snap.close();
      port.close();
    });
    return;
  }
  // One request at a time, in the order posted: each owns the snapshot while it runs.
  queue = queue.then(() => answer(m));
});
send({ kind: "ready" });
