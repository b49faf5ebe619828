import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type FloodNode,
  floodServer,
  formatReports,
  memoryOf,
  SERVERS,
  sendWithoutReading,
  startFloodNode,
  startTxLoop,
} from "./floodHarness.js";
import { makeTempHome } from "./testNode.js";

/**
 * The bounded version of `npm run bench:flood` (100 000 by default): 1 000 malformed or oversized
 * requests on each RPC server of a real node (all four at once, every kind of request of the bench
 * in turn) while EVM transfers flow. Every request gets an error of
 * the right kind, no connection is dropped, blocks keep coming, transfers commit, memory stays
 * bounded. Then one client per server that sends requests without ever reading the answers: the node
 * stops reading it after a few MB instead of buffering every answer.
 */

// 1 000, not 5 000: the slowloris requests hold the flood ~10 s (the servers' request timeouts)
// whatever the count; past that the count only costs CPU, which npm test is short of on 2 cores.
// Every kind of request still goes out (the rarest, weight 1 or 2 of ~1 000, once or twice).
const REQUESTS = 1000;

let node: FloodNode;
let cleanup: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const tmp = await makeTempHome("cometh-flood-");
  cleanup = tmp.cleanup;
  node = await startFloodNode(tmp.home);
});

afterAll(async () => {
  if (node !== undefined) expect(await node.stop()).toBe(0);
  await cleanup?.();
});

describe("request floods", () => {
  test(`error: ${REQUESTS} malformed or oversized requests per server get errors; the node keeps committing`, async () => {
    const txs = await startTxLoop(node.evmHttp);
    const reports = await Promise.all(
      SERVERS.map((server) =>
        floodServer(node, server, { requests: REQUESTS, connections: 8, slowlorisMaxMs: 20_000 }),
      ),
    );
    const t = await txs.stop();
    const table = formatReports(reports, true);
    for (const r of reports) {
      expect(r.sent, table).toBe(REQUESTS);
      expect(r.nonErrors, table).toBe(0);
      expect(r.dropped, table).toBe(0);
      expect(r.wrongErrors, table).toBe(0);
      expect(r.errors, table).toBe(REQUESTS);
      // timeout_commit is 200 ms: a block at least every few seconds, whatever the flood.
      expect(r.blocks, table).toBeGreaterThanOrEqual(5);
      expect(r.longestStallMs, table).toBeLessThan(5000);
      expect(r.hwmMiB, table).toBeLessThan(1024);
    }
    expect(t.accepted).toBeGreaterThan(0);
    expect(t.committed).toBe(t.accepted);
  }, 180_000); // bounded by the flood itself (slowloris requests held 20 s at most); slow on a busy machine

  test("behavior: a client that sends without reading is no longer read after a few MB (each server)", async () => {
    const before = memoryOf(node.pid)?.rss ?? 0;
    // All four at once: each waits out a second with nothing drained before it calls its server
    // stalled, which one after another cost ~5 s.
    const reports = await Promise.all(SERVERS.map((server) => sendWithoutReading(node, server, 6)));
    for (const [i, r] of reports.entries()) {
      const server = SERVERS[i];
      expect(r.stalled, server).toBe(true);
      // The kernel's socket buffers plus about 1 MiB of answers; not the hundreds of MB sent otherwise.
      expect(r.acceptedBytes, server).toBeLessThan(32 * 1024 * 1024);
    }
    const after = memoryOf(node.pid)?.rss ?? 0;
    expect(after - before).toBeLessThan(128);
  });
});
