/**
 * readPool.test.ts's crashing worker: the real read worker, except that a request whose gas is
 * 77 777 throws before it is answered (an uncaught error ends the thread, as a crash would).
 */
import { parentPort } from "node:worker_threads";

parentPort?.on("message", (m: { args?: { gas?: bigint } }) => {
  if (m.args?.gas === 77_777n) throw new Error("crash requested by the test");
});
await import("./readWorker.js");
