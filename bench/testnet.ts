// npm run bench:testnet [-- --seconds N --txs N]
// A 4-validator loopback network (four `cometh start` processes, kvstore app, timeout_commit 0):
// committed blocks/s, kvstore txs/s (txs sent round-robin to the four nodes with broadcast_tx_async,
// timed until the last is committed), and CPU and RSS per node process read from /proc.
// Loopback only; every process started here is stopped here.
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { makeTestnet, type TestnetProcess } from "../test/integration/testnetHarness.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    txs: { type: "string", default: "4000" },
  },
});
const seconds = Number(values.seconds);
const txCount = Number(values.txs);

const TICKS = 100; // USER_HZ on Linux
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
}
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function rpc(node: TestnetProcess, route: string, params: Record<string, string> = {}): Promise<unknown> {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${node.rpcUrl}/${route}${qs ? `?${qs}` : ""}`);
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error));
  return body.result;
}

async function main(): Promise<void> {
  const net = await makeTestnet(4, {
    log_level: "error",
    "consensus.timeout_commit": "0s",
    "consensus.timeout_propose": "3s",
  });
  try {
    await Promise.all(net.nodes.map((n) => n.start()));
    const nodes = net.nodes;
    await Promise.all(nodes.map((n) => n.waitForHeight(3, 60_000)));
    const pids = nodes.map((n) => n.pid as number);

    // Empty blocks.
    const cpu0 = pids.map(cpuMs);
    const h0 = await nodes[0]?.height();
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const h1 = await nodes[0]?.height();
    const t1 = Date.now();
    const cpu1 = pids.map(cpuMs);
    const blocksPerSec = (((h1 ?? 0) - (h0 ?? 0)) * 1000) / (t1 - t0);

    // kvstore txs, over keep-alive sockets (fetch would be the bottleneck here).
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const post = (node: TestnetProcess, path: string) =>
      new Promise<void>((resolve, reject) => {
        const url = new URL(node.rpcUrl);
        const req = request({ host: url.hostname, port: url.port, path, agent }, (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        });
        req.on("error", reject);
        req.end();
      });
    const start = Date.now();
    const sends: Promise<unknown>[] = [];
    const inFlight = 64;
    let next = 0;
    const sendOne = async (): Promise<void> => {
      while (next < txCount) {
        const i = next++;
        const node = nodes[i % nodes.length] as TestnetProcess;
        await post(node, `/broadcast_tx_async?tx=${encodeURIComponent(`"bench-${start}-${i}=v${i}"`)}`);
      }
    };
    for (let k = 0; k < inFlight; k++) sends.push(sendOne());
    await Promise.all(sends);
    const submitted = Date.now();
    // Committed once the last key is readable on node0.
    const lastKey = Buffer.from(`bench-${start}-${txCount - 1}`).toString("hex");
    for (;;) {
      const q = (await rpc(nodes[0] as TestnetProcess, "abci_query", { data: `0x${lastKey}` })) as {
        response: { value?: string | null };
      };
      if (q.response.value) break;
      if (Date.now() - start > 300_000) throw new Error("txs not committed within 300 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    const done = Date.now();
    agent.destroy();
    const txsPerSec = (txCount * 1000) / (done - start);
    const rss = pids.map(rssMb);

    console.log(`cometh bench:testnet (4 validators on loopback, kvstore, timeout_commit 0, node ${process.version})`);
    console.log(`empty blocks: ${blocksPerSec.toFixed(1)} blocks/s over ${seconds} s (height ${h0} -> ${h1})`);
    console.log(
      `kvstore txs: ${txsPerSec.toFixed(0)} committed tx/s (${txCount} txs, submitted in ${submitted - start} ms, all committed after ${done - start} ms)`,
    );
    console.log("node    cpu% (empty blocks)   rss MB");
    pids.forEach((_, i) => {
      const cpuPct = (((cpu1[i] as number) - (cpu0[i] as number)) / (t1 - t0)) * 100;
      console.log(
        `node${i}   ${cpuPct.toFixed(0).padStart(5)}                ${(rss[i] as number).toFixed(0).padStart(6)}`,
      );
    });
  } finally {
    await net.close();
  }
}

await main();
