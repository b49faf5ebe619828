// npm run bench:join [-- --height 2000 --txs 2000 --snapshot-interval 500 --discovery 5s]
//
// How long a new node takes to join a running EVM chain, by state sync and by block sync, on the same
// chain in one run (#28's "join time on a chain of a given height, next to block sync's").
//
// 1. Two validators (`cometh start`, EVM app, loopback) build the chain to --height with
//    timeout_commit 0s, taking a state-sync snapshot every --snapshot-interval heights. The first
//    --txs heights carry ETH transfers to new addresses from the ten dev accounts, so that block sync
//    replays real transactions and a snapshot holds that many more accounts.
// 2. The validators restart with timeout_commit 1s: the chain keeps growing, at about a block a second.
// 3. A new full node joins by state sync: [statesync] with both validators as rpc_servers and their
//    latest block as the trusted height and hash (as CometBFT's e2e runner fills them), discovery_time
//    --discovery. Its join time runs from its spawn until its RPC says catching_up false at a height
//    at least the chain's height at the spawn. It is stopped.
// 4. Another new full node joins by block sync (replaying every block from 1); same clock.
//
// Loopback only; every process started here is stopped here, by PID.
import { parseArgs } from "node:util";
import { HDNodeWallet, Mnemonic, Wallet } from "ethers";
import { writeOverrides, writeStateSyncConfig } from "../test/e2e/runner/setup.js";
import { rpcGet } from "../test/integration/testNode.js";
import { makeTestnet, type TestnetProcess } from "../test/integration/testnetHarness.js";
import { Rpc } from "./evm.js";

const { values } = parseArgs({
  options: {
    height: { type: "string", default: "2000" },
    txs: { type: "string", default: "2000" },
    "snapshot-interval": { type: "string", default: "500" },
    discovery: { type: "string", default: "5s" },
    timeout: { type: "string", default: "600" },
  },
});
const HEIGHT = Number(values.height);
const TXS = Number(values.txs);
const INTERVAL = Number(values["snapshot-interval"]);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const DEV_MNEMONIC = "test test test test test test test test test test test junk";
const CHAIN_ID = 262144n;

interface Status {
  sync_info: { latest_block_height: string; latest_block_hash: string; catching_up: boolean };
}

async function status(n: TestnetProcess): Promise<Status["sync_info"]> {
  return (await rpcGet<Status>(n.rpcUrl, "status")).sync_info;
}

/** TXS transfers to new addresses, signed ahead, ten lanes (one per dev account) in nonce order. */
async function sendTransfers(rpc: Rpc): Promise<{ signMs: number; sendMs: number }> {
  const t0 = performance.now();
  const mnemonic = Mnemonic.fromPhrase(DEV_MNEMONIC);
  const lanes = Array.from({ length: 10 }, (_, i) => HDNodeWallet.fromMnemonic(mnemonic, `m/44'/60'/0'/0/${i}`));
  const perLane = Math.ceil(TXS / lanes.length);
  const signed: string[][] = [];
  for (const [i, w] of lanes.entries()) {
    const wallet = new Wallet(w.privateKey);
    const txs: string[] = [];
    for (let nonce = 0; nonce < perLane && i * perLane + nonce < TXS; nonce++) {
      txs.push(
        await wallet.signTransaction({
          type: 2,
          chainId: CHAIN_ID,
          nonce,
          to: Wallet.createRandom().address,
          value: 1n,
          gasLimit: 21_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        }),
      );
    }
    signed.push(txs);
  }
  const t1 = performance.now();
  await Promise.all(
    signed.map(async (txs) => {
      for (const raw of txs) await rpc.call("eth_sendRawTransaction", [raw]);
    }),
  );
  return { signMs: t1 - t0, sendMs: performance.now() - t1 };
}

/** Spawns `joiner` and times it until it is caught up with the chain's height at its spawn. */
async function timeJoin(
  joiner: TestnetProcess,
  chain: TestnetProcess,
  flags: string[],
): Promise<{ ms: number; tip: number; restored: number | undefined; syncedAt: number | undefined }> {
  const tip = Number((await status(chain)).latest_block_height);
  const t0 = performance.now();
  await joiner.start(flags);
  let syncedAt: number | undefined;
  for (;;) {
    if (performance.now() - t0 > TIMEOUT_MS)
      throw new Error(`${joiner.node.name} did not catch up:\n${joiner.output().slice(-3000)}`);
    if (syncedAt === undefined && /State sync complete/.test(joiner.output())) syncedAt = performance.now() - t0;
    try {
      const s = await status(joiner);
      if (!s.catching_up && Number(s.latest_block_height) >= tip) break;
    } catch {
      // RPC not up yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const ms = performance.now() - t0;
  const m = /Snapshot accepted, restoring\D*?height\D*?(\d+)/.exec(joiner.output());
  const restored = m === null ? undefined : Number(m[1]);
  return { ms, tip, restored, syncedAt };
}

async function main(): Promise<void> {
  const net = await makeTestnet(
    2,
    { log_level: "info", "consensus.timeout_commit": "0s", "consensus.timeout_propose": "3s" },
    { proxyApp: "evm", nonValidators: 2 },
  );
  const [v1, v2, bySnapshot, byBlocks] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
  try {
    for (const v of [v1, v2])
      writeOverrides(v.node.home, {
        "state-sync.snapshot-interval": INTERVAL,
        "state-sync.snapshot-keep-recent": 2,
      });
    for (const j of [bySnapshot, byBlocks])
      writeOverrides(j.node.home, { "statesync.discovery_time": values.discovery });

    let t = performance.now();
    await Promise.all([v1.start(), v2.start()]);
    await v1.waitForHeight(1, 60_000);
    const rpc = new Rpc({ host: "127.0.0.1", port: v1.node.jsonRpcPort, path: "/" });
    const sent = TXS > 0 ? await sendTransfers(rpc) : { signMs: 0, sendMs: 0 };
    rpc.close();
    await v1.waitForHeight(HEIGHT, TIMEOUT_MS);
    console.log(
      `chain: 2 validators (EVM app), ${TXS} transfers to new addresses (signed in ${(sent.signMs / 1000).toFixed(1)} s, sent in ${(sent.sendMs / 1000).toFixed(1)} s), ` +
        `height ${HEIGHT} in ${((performance.now() - t) / 1000).toFixed(1)} s with timeout_commit 0s; snapshot every ${INTERVAL}`,
    );
    await Promise.all([v1.stop(), v2.stop()]);
    await Promise.all([v1.start(["--consensus.timeout_commit=1s"]), v2.start(["--consensus.timeout_commit=1s"])]);
    t = performance.now();
    const h0 = Number((await status(v1)).latest_block_height);
    await v1.waitForHeight(h0 + 2, 60_000);
    console.log(`validators restarted with timeout_commit 1s; the chain grows again from ${h0}`);

    const trust = await status(v1);
    writeStateSyncConfig(bySnapshot.node.home, {
      rpcServers: [v1.rpcUrl, v2.rpcUrl],
      height: Number(trust.latest_block_height),
      hash: trust.latest_block_hash,
    });
    const ss = await timeJoin(bySnapshot, v1, []);
    await bySnapshot.stop();
    const bs = await timeJoin(byBlocks, v1, []);
    await byBlocks.stop();

    const rate = bs.tip / (bs.ms / 1000);
    console.log("");
    console.log(
      `join time of a new full node, chain at height ~${ss.tip} (load: ${(await import("node:os")).loadavg()[0]?.toFixed(2)})`,
    );
    console.log(
      `  state sync: ${(ss.ms / 1000).toFixed(1)} s to caught up at >= ${ss.tip}` +
        (ss.restored === undefined ? "; no snapshot restored" : `; snapshot of height ${ss.restored}`) +
        (ss.syncedAt === undefined ? "" : ` restored ${(ss.syncedAt / 1000).toFixed(1)} s after spawn`) +
        ` (discovery_time ${values.discovery})`,
    );
    console.log(
      `  block sync: ${(bs.ms / 1000).toFixed(1)} s to caught up at >= ${bs.tip} (${rate.toFixed(0)} blocks/s from 1)`,
    );
    console.log(`  state sync / block sync time: ${(ss.ms / bs.ms).toFixed(3)}`);
  } finally {
    await net.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
