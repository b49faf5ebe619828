/**
 * Mixed validator networks of Go CometBFT nodes and cometh nodes on 127.0.0.1: one genesis, homes written
 * by `cometbft testnet` and by cometh's `createTestnet`, every node listing every other as a persistent
 * peer, all running the built-in kvstore app. Processes are started and stopped by PID; ports are free
 * ephemeral ports found by binding port 0.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse, stringify } from "smol-toml";
import { createTestnet, loadNodeKey } from "../../src/config/index.js";
import { parseNetAddress } from "../../src/p2p/index.js";
import { createTestSwitch, RecordingReactor, testNodeInfo, testNodeKey } from "../../src/p2p/testing/testSwitches.js";
import { loadPrivValidatorKey } from "../../src/privval/index.js";
import { encodeConsensusMessage } from "../../src/reactors/index.js";
import { SIGNED_MSG_TYPE, signBytes, type Vote, voteSignBytes } from "../../src/types/index.js";
import { makeTempHome, rpcGet, spawnNode } from "../integration/testNode.js";
import { freePorts } from "../integration/testnetHarness.js";
import { binaryPath } from "./binaries.js";

/** The Go `cometbft` binary: `COMETBFT_BIN`, or where `npm run interop:install` puts it (binaries.ts). */
export const COMETBFT_BIN = process.env.COMETBFT_BIN ?? binaryPath("cometbft");

/** Why the interop tests cannot run here, or undefined when the Go binary is present. */
export function cometbftMissing(): string | undefined {
  if (existsSync(COMETBFT_BIN)) return undefined;
  return `the Go cometbft binary is not at ${COMETBFT_BIN}: run "npm run interop:install" (needs Go) or set COMETBFT_BIN`;
}

export type NodeKind = "go" | "cometh";

export interface MixedNetworkOptions {
  /** Go validators. */
  goValidators: number;
  /** cometh validators. */
  comethValidators: number;
  /** Go full nodes (not in the genesis validator set). */
  goFullNodes?: number;
  /** cometh full nodes. */
  comethFullNodes?: number;
  /** consensus.timeout_commit on every node (default 150ms). */
  timeoutCommit?: string;
  /** consensus.timeout_propose on every node (default 1s). */
  timeoutPropose?: string;
  /** Extra config.toml values for every node, dotted keys (`consensus.x`). */
  config?: Record<string, string | number | boolean>;
  /** Extra config.toml values for one node (after `config`). */
  nodeConfig?: (node: MixedNode, all: readonly MixedNode[]) => Record<string, string | number | boolean>;
  /** The persistent peers of a node (default: every other node). */
  peers?: (node: MixedNode, all: readonly MixedNode[]) => MixedNode[];
}

/** One node of a mixed network. */
export class MixedNode {
  readonly kind: NodeKind;
  readonly name: string;
  readonly home: string;
  readonly nodeId: string;
  readonly p2pPort: number;
  readonly rpcPort: number;
  readonly rpcUrl: string;
  readonly isValidator: boolean;
  /** Hex (upper case) validator address from priv_validator_key.json. */
  readonly validatorAddress: string;
  /** Base64 Ed25519 public key from priv_validator_key.json. */
  readonly validatorPubKey: string;
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> | undefined;
  #out = "";
  #cometh: (() => string) | undefined;

  constructor(init: {
    kind: NodeKind;
    name: string;
    home: string;
    nodeId: string;
    p2pPort: number;
    rpcPort: number;
    isValidator: boolean;
  }) {
    this.kind = init.kind;
    this.name = init.name;
    this.home = init.home;
    this.nodeId = init.nodeId;
    this.p2pPort = init.p2pPort;
    this.rpcPort = init.rpcPort;
    this.rpcUrl = `http://127.0.0.1:${init.rpcPort}`;
    this.isValidator = init.isValidator;
    const key = JSON.parse(readFileSync(join(init.home, "config", "priv_validator_key.json"), "utf8")) as {
      address: string;
      pub_key: { value: string };
    };
    this.validatorAddress = key.address.toUpperCase();
    this.validatorPubKey = key.pub_key.value;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** The end of the current (or last) run's output. */
  output(chars = 6000): string {
    return (this.#cometh?.() ?? this.#out).slice(-chars);
  }

  /** Starts the node and waits until its RPC answers `status`. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.#child !== undefined) return;
    this.#out = "";
    this.#cometh = undefined;
    let child: ChildProcess;
    if (this.kind === "go") {
      child = spawn(COMETBFT_BIN, ["start", "--home", this.home], { stdio: ["ignore", "pipe", "pipe"] });
      const onData = (d: Buffer) => {
        this.#out += d.toString();
        if (this.#out.length > 2_000_000) this.#out = this.#out.slice(-1_000_000);
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      this.#exited = new Promise((resolve) => child.on("exit", (c) => resolve(c)));
    } else {
      const node = spawnNode(["start", "--home", this.home, "--json-rpc.enable=false"]);
      child = node.child;
      this.#exited = node.exited;
      this.#cometh = node.output;
      node.ready.catch(() => {});
    }
    this.#child = child;
    void this.#exited.then(() => {
      if (this.#child === child) this.#child = undefined;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#child !== child) {
        throw new Error(`${this.name} (${this.kind}) exited while starting:\n${this.output()}`);
      }
      try {
        await rpcGet(this.rpcUrl, "status");
        return;
      } catch {
        // Not answering yet.
      }
      if (Date.now() > deadline) throw new Error(`${this.name}: RPC not up in ${timeoutMs} ms\n${this.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGKILL (a crash), then wait for the exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill("SIGKILL");
    await this.#exited;
    this.#child = undefined;
  }

  /** SIGTERM and wait for the exit (SIGKILL after 10 s). */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await this.#exited;
    clearTimeout(timer);
    this.#child = undefined;
  }

  async height(): Promise<number> {
    const s = await rpcGet<{ sync_info: { latest_block_height: string } }>(this.rpcUrl, "status");
    return Number(s.sync_info.latest_block_height);
  }

  /** Polls status until `height` (bounded); the error carries the end of the node's output. */
  async waitForHeight(height: number, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let h = -1;
    for (;;) {
      try {
        h = await this.height();
      } catch {
        // Restarting or not up yet.
      }
      if (h >= height) return h;
      if (this.#child === undefined) {
        throw new Error(`${this.name} (${this.kind}) is not running (it exited at height ${h})\n${this.output()}`);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name} (${this.kind}): height ${height} not reached in ${timeoutMs} ms (at ${h})\n${this.output()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface MixedNetwork {
  chainId: string;
  dir: string;
  nodes: MixedNode[];
  validators: MixedNode[];
  /** Starts every node (in parallel). */
  startAll(): Promise<void>;
  /** Starts the validators (in parallel). */
  startValidators(): Promise<void>;
  /** Kills every node still running, by PID, and removes the homes. */
  close(): Promise<void>;
}

const exec = promisify(execFile);

/** Reads a TOML config file, sets dotted keys (`section.key`, or a top-level `key`), writes it back. */
export function editToml(path: string, values: Record<string, string | number | boolean>): void {
  const doc = parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  for (const [dotted, value] of Object.entries(values)) {
    const dot = dotted.indexOf(".");
    if (dot < 0) {
      doc[dotted] = value;
      continue;
    }
    const section = dotted.slice(0, dot);
    const key = dotted.slice(dot + 1);
    if (doc[section] === undefined) doc[section] = {};
    const table = doc[section] as Record<string, unknown>;
    table[key] = value;
  }
  writeFileSync(path, stringify(doc));
}

/**
 * Writes the homes of a mixed network (Go homes from `cometbft testnet`, cometh homes from
 * `createTestnet`), one genesis (Go's, with every validator of both kinds, power 1 each) copied to all,
 * each node's persistent_peers listing every other node, on free loopback ports. Nothing is started.
 */
export async function makeMixedNetwork(opts: MixedNetworkOptions): Promise<MixedNetwork> {
  const missing = cometbftMissing();
  if (missing !== undefined) throw new Error(missing);
  const { home: dir, cleanup } = await makeTempHome("cometh-mixed-");
  const goFull = opts.goFullNodes ?? 0;
  const comethFull = opts.comethFullNodes ?? 0;
  const goTotal = opts.goValidators + goFull;
  const comethTotal = opts.comethValidators + comethFull;
  const ports = await freePorts((goTotal + comethTotal) * 4);
  const nodes: MixedNode[] = [];
  try {
    const goDir = join(dir, "go");
    if (goTotal > 0) {
      await exec(COMETBFT_BIN, [
        "testnet",
        "--v",
        String(opts.goValidators),
        "--n",
        String(goFull),
        "--o",
        goDir,
        "--node-dir-prefix",
        "go",
        "--populate-persistent-peers=false",
      ]);
    }
    const comethDir = join(dir, "cometh");
    const comethPort = (i: number, k: number) => ports[(goTotal + i) * 4 + k] as number;
    if (comethTotal > 0) {
      await createTestnet({
        outputDir: comethDir,
        validators: opts.comethValidators,
        nonValidators: comethFull,
        chainId: "placeholder",
        nodeDirPrefix: "cometh",
        proxyApp: "kvstore",
        populatePersistentPeers: false,
        ports: (i) => ({
          p2p: comethPort(i, 0),
          rpc: comethPort(i, 1),
          jsonRpc: comethPort(i, 2),
          jsonRpcWs: comethPort(i, 3),
        }),
      });
    }
    // Validators first, in the order go validators, cometh validators; then full nodes.
    for (let i = 0; i < goTotal; i++) {
      const home = join(goDir, `go${i}`);
      nodes.push(
        new MixedNode({
          kind: "go",
          name: `go${i}`,
          home,
          nodeId: (await loadNodeKey(join(home, "config", "node_key.json"))).id,
          p2pPort: ports[i * 4] as number,
          rpcPort: ports[i * 4 + 1] as number,
          isValidator: i < opts.goValidators,
        }),
      );
    }
    for (let i = 0; i < comethTotal; i++) {
      const home = join(comethDir, `cometh${i}`);
      nodes.push(
        new MixedNode({
          kind: "cometh",
          name: `cometh${i}`,
          home,
          nodeId: (await loadNodeKey(join(home, "config", "node_key.json"))).id,
          p2pPort: comethPort(i, 0),
          rpcPort: comethPort(i, 1),
          isValidator: i < opts.comethValidators,
        }),
      );
    }

    // One genesis: Go's testnet genesis (its consensus params), or a minimal one when there is no Go node.
    const chainId = "mixed-chain";
    const base =
      goTotal > 0
        ? (JSON.parse(readFileSync(join(goDir, "go0", "config", "genesis.json"), "utf8")) as Record<string, unknown>)
        : (JSON.parse(readFileSync(join(comethDir, "cometh0", "config", "genesis.json"), "utf8")) as Record<
            string,
            unknown
          >);
    const genesis = {
      ...base,
      chain_id: chainId,
      validators: nodes
        .filter((n) => n.isValidator)
        .map((n) => ({
          address: n.validatorAddress,
          pub_key: { type: "tendermint/PubKeyEd25519", value: n.validatorPubKey },
          power: "1",
          name: n.name,
        })),
    };
    const genesisText = `${JSON.stringify(genesis, null, 2)}\n`;

    const common = {
      "consensus.timeout_commit": opts.timeoutCommit ?? "150ms",
      "consensus.timeout_propose": opts.timeoutPropose ?? "1s",
      "p2p.addr_book_strict": false,
      "p2p.allow_duplicate_ip": true,
      ...(opts.config ?? {}),
    };
    for (const n of nodes) {
      writeFileSync(join(n.home, "config", "genesis.json"), genesisText);
      const peers = (opts.peers?.(n, nodes) ?? nodes.filter((o) => o !== n))
        .map((o) => `${o.nodeId}@127.0.0.1:${o.p2pPort}`)
        .join(",");
      editToml(join(n.home, "config", "config.toml"), {
        moniker: n.name,
        // Go's "kvstore" is in memory; "persistent_kvstore" keeps state across restarts, as cometh's does.
        proxy_app: n.kind === "go" ? "persistent_kvstore" : "kvstore",
        "p2p.laddr": `tcp://127.0.0.1:${n.p2pPort}`,
        "p2p.persistent_peers": peers,
        "rpc.laddr": `tcp://127.0.0.1:${n.rpcPort}`,
        "instrumentation.prometheus": false,
        ...common,
        ...(opts.nodeConfig?.(n, nodes) ?? {}),
      });
    }
  } catch (err) {
    await cleanup();
    throw err;
  }

  return {
    chainId: "mixed-chain",
    dir,
    nodes,
    validators: nodes.filter((n) => n.isValidator),
    startAll: async () => {
      await Promise.all(nodes.map((n) => n.start()));
    },
    startValidators: async () => {
      await Promise.all(nodes.filter((n) => n.isValidator).map((n) => n.start()));
    },
    close: async () => {
      await Promise.all(nodes.map((n) => n.kill()));
      await cleanup();
    },
  };
}

/** Calls a node RPC route by JSON-RPC POST and returns `result` (throws on an error envelope). */
export async function rpcPost<T = unknown>(
  node: MixedNode,
  method: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  const res = await fetch(node.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${node.name} (${node.kind}) ${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

export interface BlockMeta {
  height: number;
  hash: string;
  proposer: string;
  appHash: string;
  numTxs: number;
}

/** Block metas of heights [from, to] from one node (the `blockchain` route, 20 a page). */
export async function blockMetas(node: MixedNode, from: number, to: number): Promise<BlockMeta[]> {
  const out: BlockMeta[] = [];
  for (let max = to; max >= from; max -= 20) {
    const min = Math.max(from, max - 19);
    const r = await rpcPost<{
      block_metas: {
        block_id: { hash: string };
        num_txs: string;
        header: { height: string; proposer_address: string; app_hash: string };
      }[];
    }>(node, "blockchain", { minHeight: String(min), maxHeight: String(max) });
    for (const m of r.block_metas) {
      out.push({
        height: Number(m.header.height),
        hash: m.block_id.hash,
        proposer: m.header.proposer_address,
        appHash: m.header.app_hash,
        numTxs: Number(m.num_txs),
      });
    }
  }
  return out.sort((a, b) => a.height - b.height);
}

/** Sends a tx with broadcast_tx_sync; returns its hash (upper-case hex) after checking CheckTx accepted it. */
export async function broadcastTx(node: MixedNode, tx: string): Promise<string> {
  const r = await rpcPost<{ code: number; hash: string; log: string }>(node, "broadcast_tx_sync", {
    tx: Buffer.from(tx).toString("base64"),
  });
  if (r.code !== 0) throw new Error(`${node.name} (${node.kind}) refused tx ${tx}: code ${r.code} ${r.log}`);
  return r.hash;
}

/** Waits until `tx?hash=` finds the tx on the node; returns its height and index. */
export async function waitForTx(
  node: MixedNode,
  hash: string,
  timeoutMs = 30_000,
): Promise<{ height: number; index: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await rpcPost<{ height: string; index: number }>(node, "tx", {
        hash: Buffer.from(hash, "hex").toString("base64"),
      });
      return { height: Number(r.height), index: r.index };
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${node.name}: tx ${hash} not found in ${timeoutMs} ms: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Addresses (upper-case hex) of the validators whose signature for the block is in the commit of `height`. */
export async function commitSigners(node: MixedNode, height: number): Promise<string[]> {
  const r = await rpcPost<{
    signed_header: { commit: { signatures: { block_id_flag: number; validator_address: string }[] } };
  }>(node, "commit", { height: String(height) });
  return r.signed_header.commit.signatures.filter((s) => s.block_id_flag === 2).map((s) => s.validator_address);
}

/** Voting power of each validator (address → power) at `height`, as the node reports it. */
export async function validatorPowers(node: MixedNode, height: number): Promise<Map<string, string>> {
  const r = await rpcPost<{ validators: { address: string; voting_power: string }[] }>(node, "validators", {
    height: String(height),
    per_page: "100",
  });
  return new Map(r.validators.map((v) => [v.address, v.voting_power]));
}

/** `id@127.0.0.1:port`, the node's p2p address as peer lists spell it. */
export function p2pAddress(node: MixedNode): string {
  return `${node.nodeId}@127.0.0.1:${node.p2pPort}`;
}

/** Node IDs of the node's current peers (`net_info`). */
export async function peerIds(node: MixedNode): Promise<string[]> {
  const r = await rpcPost<{ peers: { node_info: { id: string } }[] }>(node, "net_info");
  return r.peers.map((p) => p.node_info.id).sort();
}

/**
 * Makes `validator` equivocate towards `target` only: a p2p peer (cometh's switch, consensus channels
 * only) dials `target` and sends one precommit for a made-up block, signed with the validator's key
 * from its home, which conflicts with the validator's real precommit in the target's last commit.
 * One vote, not two: two made-up votes make two pieces of evidence against one validator, and
 * v0.38's kvstore, which lowers the power by one for each, halts the Go nodes on the second ("wanted
 * to punish val but can't find it"). Tries again at a later height until a block holds the evidence;
 * returns that block's height and evidence.
 *
 * When the vote is sent matters. A node adds a vote of the height before its own only while it waits
 * out timeout_commit (step NewHeight), into its last commit, and drops a prevote of a height it has
 * finished. A made-up prevote at the height the target is at often found no real prevote to conflict
 * with: when the other validators hold +2/3 without `validator`, the target can finish the height
 * before that prevote arrives (a probe of 1 Go + 3 cometh validators saw cometh0 at precommit or
 * commit without the Go validator's prevote in 5 of 6 sampled heights; a CI run had 20 attempts in a
 * row make no evidence). So each attempt polls `dump_consensus_state` until the target is at
 * NewHeight with the validator's real precommit already in its last commit, and then sends the
 * conflicting precommit of that height and round, which the target adds (and reports) while it waits.
 */
export async function doubleSign(
  target: MixedNode,
  validator: MixedNode,
  chainId: string,
): Promise<{ height: number; evidence: { type: string; value: { vote_a: { validator_address: string } } }[] }> {
  const key = loadPrivValidatorKey(join(validator.home, "config", "priv_validator_key.json"));
  const nodeKey = testNodeKey();
  const sw = createTestSwitch({ nodeKey, nodeInfo: { ...testNodeInfo(nodeKey.id), network: chainId } });
  sw.addReactor(new RecordingReactor("double-signer", [0x20, 0x21, 0x22, 0x23]));
  await sw.start();
  try {
    const address = parseNetAddress(`${target.nodeId}@127.0.0.1:${target.p2pPort}`);
    let peer = await sw.dialPeerWithAddress(address);
    // What each attempt sent, for the error when none made evidence.
    const tried: string[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      // A connection the target dropped (it may refuse a peer it does not gossip with) is dialed again.
      if (!peer.isRunning()) peer = await sw.dialPeerWithAddress(address);
      const seen = await waitForOwnPrecommit(target, validator, 10_000);
      if (seen === undefined) {
        tried.push("none (its precommit was never in the target's last commit at NewHeight)");
        continue;
      }
      const vote: Vote = {
        type: SIGNED_MSG_TYPE.precommit,
        height: seen.height,
        round: seen.round,
        blockId: { hash: randomBytes(32), partSetHeader: { total: 1, hash: randomBytes(32) } },
        timestamp: BigInt(Date.now()) * 1_000_000n,
        validatorAddress: key.address,
        validatorIndex: seen.index,
        signature: new Uint8Array(0),
        extension: new Uint8Array(0),
        extensionSignature: new Uint8Array(0),
      };
      vote.signature = signBytes(key.privKey, voteSignBytes(chainId, vote));
      await peer.send(0x22, encodeConsensusMessage({ kind: "vote", vote }));
      tried.push(`${seen.height}/${seen.round} index ${seen.index}`);
      // The evidence is made when the target commits its current height (seen.height + 1) and is
      // proposed by the next proposer that holds it; the target proposes at least once in any four
      // heights of four validators of equal power. So an attempt waits for the target to commit
      // seen.height + 8 (bounded by time, for a halted chain): one that found nothing by then made no
      // evidence, and the next attempt cannot make a second piece.
      const deadline = Date.now() + 30_000;
      let from = seen.height;
      while (from <= seen.height + 8 && Date.now() < deadline) {
        const top = await target.height();
        for (; from <= top; from++) {
          const b = await rpcPost<{
            block: { evidence: { evidence: { type: string; value: { vote_a: { validator_address: string } } }[] } };
          }>(target, "block", { height: String(from) });
          if (b.block.evidence.evidence.length > 0) return { height: from, evidence: b.block.evidence.evidence };
        }
        await new Promise((res) => setTimeout(res, 200));
      }
    }
    // Evidence needs the validator's own precommit to reach the target too: a validator that fell
    // behind sends none, so its height is part of the error.
    const own = await validator.height().catch((err: unknown) => `unknown (${err})`);
    throw new Error(
      `no block carried evidence of ${validator.name} (${validator.kind}) double-signing; votes sent at ${tried.join(", ")}; ${validator.name} is at height ${own}, ${target.name} at ${await target.height()}`,
    );
  } finally {
    await sw.stop();
  }
}

/**
 * Polls the target's `dump_consensus_state` until it waits out timeout_commit (step 1, NewHeight)
 * with `validator`'s precommit in its last commit; returns that precommit's height and round and the
 * validator's index, or undefined after `timeoutMs`.
 */
async function waitForOwnPrecommit(
  target: MixedNode,
  validator: MixedNode,
  timeoutMs: number,
): Promise<{ height: number; round: number; index: number } | undefined> {
  const indexAt = new Map<number, number>();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dump = await rpcPost<{
      round_state: { height: string; step: number; last_commit: { votes: string[] } | null };
    }>(target, "dump_consensus_state");
    const rs = dump.round_state;
    const lastHeight = Number(rs.height) - 1;
    if (rs.step === 1 && rs.last_commit !== null && lastHeight >= 1) {
      let index = indexAt.get(lastHeight);
      if (index === undefined) {
        const vals = await rpcPost<{ validators: { address: string }[] }>(target, "validators", {
          height: String(lastHeight),
          per_page: "100",
        });
        index = vals.validators.findIndex((v) => v.address === validator.validatorAddress);
        indexAt.set(lastHeight, index);
      }
      // CometBFT's Vote.String(): "Vote{index:address height/round/SIGNED_MSG_TYPE_PRECOMMIT(Precommit) ...}".
      const m =
        index < 0
          ? null
          : /^Vote\{\d+:[0-9A-F]+ (\d+)\/(\d+)\/SIGNED_MSG_TYPE_PRECOMMIT/.exec(rs.last_commit.votes[index] ?? "");
      if (m !== null && Number(m[1]) === lastHeight) return { height: lastHeight, round: Number(m[2]), index };
    }
    await new Promise((res) => setTimeout(res, 5));
  }
  return undefined;
}
