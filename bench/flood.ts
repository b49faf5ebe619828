// npm run bench:flood [-- --requests N --connections N --detail]
// Floods each RPC server of a running node in turn (node RPC HTTP, node RPC WebSocket, Ethereum
// JSON-RPC HTTP, Ethereum JSON-RPC WebSocket) with N malformed or oversized requests (default
// 100 000 each; the mix is in test/integration/floodHarness.ts) while a loop sends EVM transfers, and
// prints per server: requests sent, error answers (of the expected kind, and of another kind), non-error
// answers (must be 0), dropped connections, blocks committed during the flood and the longest wait for
// one, the highest VmRSS sampled and VmHWM (the process's peak so far) from /proc/PID/status. Then one
// client per server sends small requests for 10 s without reading any answer: how many MB the node
// took before it stopped reading that client.
// cometh runs as `npm start` runs it (the bundled build, made fresh first). Loopback only; the node is
// stopped at the end. Exits 1 when a request got a non-error answer, the node stopped committing or
// kept reading a client that never reads.
import { parseArgs } from "node:util";
import {
  FLOOD_HTTP_TIMEOUT,
  floodServer,
  formatReports,
  memoryOf,
  SERVERS,
  type ServerReport,
  sendWithoutReading,
  startFloodNode,
  startTxLoop,
} from "../test/integration/floodHarness.js";
import { makeTempHome } from "../test/integration/testNode.js";
import { buildCometh } from "./nodes.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "100000" },
    connections: { type: "string", default: "32" },
    detail: { type: "boolean", default: false },
  },
});
const requests = Number(values.requests);
const connections = Number(values.connections);

buildCometh();
const tmp = await makeTempHome("cometh-bench-flood-");
const node = await startFloodNode(tmp.home, { launcher: true });
let failed = false;
try {
  const before = memoryOf(node.pid);
  console.log(
    `cometh pid ${node.pid}: node RPC ${node.rpc}, Ethereum JSON-RPC ${node.evmHttp} / ${node.evmWs}; ` +
      `timeout_commit 200ms, [json-rpc] http-timeout ${FLOOD_HTTP_TIMEOUT}; RSS at start ${before?.rss.toFixed(0)} MiB`,
  );
  console.log(`${requests} requests per server, ${connections} connections, transfers flowing\n`);
  const reports: ServerReport[] = [];
  for (const server of SERVERS) {
    const txs = await startTxLoop(node.evmHttp);
    const report = await floodServer(node, server, { requests, connections });
    const t = await txs.stop();
    reports.push(report);
    console.log(
      `${server}: ${report.sent} requests in ${report.seconds.toFixed(1)} s, ${report.errors} errors, ` +
        `${report.wrongErrors} other errors, ${report.nonErrors} non-errors, ${report.dropped} dropped; ` +
        `${report.blocks} blocks; transfers ${t.accepted} accepted / ${t.committed} committed`,
    );
    if (report.nonErrors > 0 || report.blocks === 0) failed = true;
  }
  console.log(`\n${formatReports(reports, values.detail)}`);
  // One client per server that sends for up to 10 s and never reads an answer.
  console.log("\nclients that never read their answers:");
  for (const server of SERVERS) {
    const r = await sendWithoutReading(node, server, 10);
    console.log(
      `  ${server}: ${(r.acceptedBytes / 1e6).toFixed(1)} MB of requests taken, then ${r.stalled ? "no longer read" : "still read after 10 s"}`,
    );
    if (!r.stalled) failed = true;
  }
  const after = memoryOf(node.pid);
  console.log(`\nRSS after the floods ${after?.rss.toFixed(0)} MiB, VmHWM ${after?.hwm.toFixed(0)} MiB`);
} finally {
  const code = await node.stop();
  if (code !== 0) {
    console.error(`the node exited with ${code}:\n${node.node.output().slice(-4000)}`);
    failed = true;
  }
  await tmp.cleanup();
}
process.exit(failed ? 1 : 0);
