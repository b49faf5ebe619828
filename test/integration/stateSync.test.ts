import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadPrivValidatorKey } from "../../src/privval/index.js";
import { bytesToHexUpper } from "../../src/util/bytes.js";
import { rpcGet } from "./testNode.js";
import { makeTestnet, type Testnet, type TestnetProcess } from "./testnetHarness.js";

// State sync on a kvstore testnet of four validators and two full nodes, one process each: validators
// 0-2 run from genesis taking a snapshot every 5 heights (kept); validator 3 joins later by state
// sync and votes; then at once (test.concurrent: both wait out discovery rounds) full node 4 meets a
// peer serving a corrupt chunk first, and full node 5 finds no snapshot and falls back to block sync
// from genesis. Validator 0 is down for a moment in the corrupt-chunk case; the other three keep
// committing.

const SNAPSHOTS = ["--state-sync.snapshot-interval=5", "--state-sync.snapshot-keep-recent=0"];

interface Status {
  sync_info: { latest_block_height: string; earliest_block_height: string; catching_up: boolean };
}

function p2pAddress(n: TestnetProcess): string {
  return `${n.node.nodeId}@127.0.0.1:${n.node.p2pPort}`;
}

/**
 * The validators keep persistent connections among themselves only. The testnet's configs list every
 * node, the late full nodes too; those refuse inbound peers, so every validator would redial them at
 * once after each refused handshake (CometBFT's reconnect loop), which starves them on a busy machine
 * and keeps their own dial to a validator losing to the validator's dial as a duplicate.
 */
function validatorPeers(nodes: readonly TestnetProcess[], self: TestnetProcess): string {
  const peers = nodes.slice(0, 4).filter((n) => n !== self);
  return `--p2p.persistent_peers=${peers.map(p2pAddress).join(",")}`;
}

/** Polls the node's output for `pattern` (bounded); the error carries the end of the output. */
async function waitForOutput(n: TestnetProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(n.output());
    if (m !== null) return m;
    if (Date.now() > deadline) {
      throw new Error(`${n.node.name}: no ${pattern} in ${timeoutMs} ms\n${n.output().slice(-6000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The discovery round of a node that should find a snapshot: long enough for its peers to connect and
 * answer on a busy machine (it may see two empty rounds; the third falls back to block sync), short of
 * CometBFT's 5 s minimum (cometh accepts 1 s, docs/compatibility.md).
 */
const DISCOVERY = "3s";

/**
 * The [statesync] flags: the light client reads `servers`, trusting height 2 as `trusted` has it;
 * `discovery` is the discovery round.
 */
async function stateSyncFlags(
  trusted: TestnetProcess,
  servers: readonly TestnetProcess[],
  discovery = DISCOVERY,
): Promise<string[]> {
  const block = await rpcGet<{ block_id: { hash: string } }>(trusted.rpcUrl, "block", { height: "2" });
  return [
    "--statesync.enable=true",
    `--statesync.rpc_servers=${servers.map((s) => s.rpcUrl).join(",")}`,
    "--statesync.trust_height=2",
    `--statesync.trust_hash=${block.block_id.hash}`,
    `--statesync.discovery_time=${discovery}`,
    "--statesync.chunk_request_timeout=5s",
  ];
}

async function status(n: TestnetProcess): Promise<Status["sync_info"]> {
  return (await rpcGet<Status>(n.rpcUrl, "status")).sync_info;
}

describe("state sync on a loopback testnet", () => {
  let net: Testnet;
  let nodes: TestnetProcess[];

  beforeAll(async () => {
    net = await makeTestnet(4, { "consensus.timeout_commit": "300ms" }, { nonValidators: 2 });
    nodes = net.nodes;
    await Promise.all(nodes.slice(0, 3).map((n) => n.start([...SNAPSHOTS, validatorPeers(nodes, n)])));
    // A snapshot at 5, and the two heights above it the light client needs.
    await nodes[0]?.waitForHeight(7, 200_000);
  }, 240_000);
  afterAll(async () => {
    await net?.close();
  });

  test("behavior: a validator that joins late restores a snapshot, block syncs from the next height, then votes", async () => {
    const [v0, v1, v2, v3] = nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await v3.start([...(await stateSyncFlags(v0, [v1, v2])), validatorPeers(nodes, v3)]);
    const done = await waitForOutput(v3, /State sync complete[^\n]*height=(\d+) elapsedMs=(\d+)/);
    const height = Number(done[1]);
    console.info(`measure: state sync to height ${height} took ${done[2]} ms (discovery_time ${DISCOVERY} included)`);
    expect(height % 5).toBe(0);
    expect(v3.output()).toMatch(/Verified ABCI app/);
    const top = await v0.height();
    await v3.waitForHeight(top + 3, 60_000);
    const s = await status(v3);
    // CometBFT's block store after state sync: the first block kept is the snapshot height + 1.
    expect(Number(s.earliest_block_height)).toBe(height + 1);
    await expect(rpcGet(v3.rpcUrl, "block", { height: String(height) })).rejects.toThrow();
    expect(await v3.blockHash(top)).toBe(await v0.blockHash(top));
    // It votes: its signature shows up in a commit made after it joined.
    const key = loadPrivValidatorKey(join(v3.node.home, "config", "priv_validator_key.json"));
    const address = bytesToHexUpper(key.address);
    const deadline = Date.now() + 60_000;
    let signed = false;
    while (!signed && Date.now() < deadline) {
      const h = await v0.height();
      const c = await rpcGet<{
        signed_header: { commit: { signatures: { validator_address: string; block_id_flag: number }[] } };
      }>(v0.rpcUrl, "commit", { height: String(h) });
      signed = c.signed_header.commit.signatures.some((x) => x.validator_address === address && x.block_id_flag === 2);
      if (!signed) await v0.waitForHeight(h + 1);
    }
    expect(signed, "validator 3 signed a commit after state sync").toBe(true);
  }, 180_000);

  test.concurrent("behavior: a corrupt chunk is refused, its sender rejected, and the chunk fetched from another peer", async ({
    expect,
  }) => {
    const [v0, v1, v2] = nodes as [TestnetProcess, TestnetProcess, TestnetProcess];
    const f4 = nodes[4] as TestnetProcess;
    // Validator 0 serves its snapshots with every chunk damaged, and takes no new ones.
    await v0.stop();
    const dir = join(v0.node.home, "data", "kvstore.db", "snapshots");
    for (const h of readdirSync(dir)) {
      const file = join(dir, h, "chunk-0");
      const bytes = readFileSync(file);
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
      writeFileSync(file, bytes);
    }
    await v0.start(["--state-sync.snapshot-interval=0", validatorPeers(nodes, v0)]);
    // The new node knows validator 0 only: it can fetch the chunk from no one else at first.
    await f4.start([
      ...(await stateSyncFlags(v1, [v1, v2])),
      `--p2p.persistent_peers=${p2pAddress(v0)}`,
      "--p2p.pex=false",
      // No inbound peers either: the others learn its address by PEX and would dial it.
      "--p2p.max_num_inbound_peers=0",
    ]);
    await waitForOutput(f4, /does not match its hash in the metadata/);
    await waitForOutput(f4, /Rejected snapshot chunk sender[^\n]*/);
    expect(f4.output()).not.toMatch(/State sync complete/);
    await rpcGet(f4.rpcUrl, "dial_peers", { peers: JSON.stringify([p2pAddress(v1)]), persistent: "true" });
    await waitForOutput(f4, /State sync complete/);
    const top = await v1.height();
    await f4.waitForHeight(top + 2, 60_000);
    expect(await f4.blockHash(top)).toBe(await v1.blockHash(top));
  }, 180_000);

  test.concurrent("behavior: with no snapshot offered the node says so and falls back to block sync from genesis", async ({
    expect,
  }) => {
    const [, v1, v2, v3] = nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    const f5 = nodes[5] as TestnetProcess;
    // Validator 3 (state synced, started without snapshot-interval) has no snapshot to offer. Rounds of
    // 1 s: nothing is to be found in them, so the three rounds before the fallback take 3 s, not 15.
    await f5.start([
      ...(await stateSyncFlags(v1, [v1, v2], "1s")),
      `--p2p.persistent_peers=${p2pAddress(v3)}`,
      "--p2p.pex=false",
      // No inbound peers either: the others learn its address by PEX and would dial it.
      "--p2p.max_num_inbound_peers=0",
    ]);
    await waitForOutput(f5, /State sync found no snapshot: falling back to block sync from genesis/);
    expect(f5.output()).toMatch(/no peer offered a snapshot the app accepts after 3 discovery round/);
    // Validator 3 has no block below its snapshot: block sync from genesis needs a full peer.
    await rpcGet(f5.rpcUrl, "dial_peers", { peers: JSON.stringify([p2pAddress(v1)]), persistent: "true" });
    const top = await v1.height();
    const fromMs = Date.now();
    await f5.waitForHeight(top + 2, 90_000);
    console.info(
      `measure: block sync from genesis to height ${top + 2} took ${Date.now() - fromMs} ms after the peer was dialed`,
    );
    expect((await status(f5)).earliest_block_height).toBe("1");
    expect(await f5.blockHash(5)).toBe(await v1.blockHash(5));
  }, 240_000);
});

describe("state sync of the EVM app", () => {
  let net: Testnet;

  beforeAll(async () => {
    net = await makeTestnet(3, { "consensus.timeout_commit": "300ms" }, { proxyApp: "evm", nonValidators: 1 });
    await Promise.all(net.nodes.slice(0, 3).map((n) => n.start(SNAPSHOTS)));
    await net.nodes[0]?.waitForHeight(7, 200_000);
  }, 240_000);
  afterAll(async () => {
    await net?.close();
  });

  test("behavior: a full node restores the EVM state and serves the same balances and blocks", async () => {
    const [v0, v1, v2, f3] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await f3.start(await stateSyncFlags(v0, [v1, v2]));
    const done = await waitForOutput(f3, /State sync complete[^\n]*height=(\d+)/);
    const top = await v0.height();
    await f3.waitForHeight(top + 2, 60_000);
    expect(Number((await status(f3)).earliest_block_height)).toBe(Number(done[1]) + 1);
    const eth = async (n: TestnetProcess, method: string, params: unknown[]) => {
      const res = await fetch(n.evmUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: unknown }).result;
    };
    const tag = `0x${top.toString(16)}`;
    // Hardhat's first dev account, funded at genesis.
    const who = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    expect(await eth(f3, "eth_getBalance", [who, tag])).toBe(await eth(v0, "eth_getBalance", [who, tag]));
    expect(await eth(f3, "eth_getBlockByNumber", [tag, false])).toEqual(
      await eth(v0, "eth_getBlockByNumber", [tag, false]),
    );
  }, 180_000);
});
