import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type InProcessNode,
  type InProcessNodeOptions,
  startInProcessNode,
} from "../../../../test/integration/inProcessNode.js";
import type { ConfigOverrides } from "../../../config/index.js";
import {
  type Block,
  type BlockMeta,
  type DuplicateVoteEvidence,
  generateEd25519PrivKey,
  hashEvidence,
  type PrivKey,
  pubKeyFromPrivKey,
  signBytes,
  type Vote,
  voteSignBytes,
} from "../../../types/index.js";
import { bytesEqual } from "../../../util/bytes.js";
import { ComethError } from "../../../util/errors.js";
import { formatRfc3339Nano } from "../../../util/time.js";
import { RpcTestClient } from "./rpcTestClient.js";

/**
 * A real node (kvstore app, consensus, LMDB stores, kv indexer) started in the test process, with a
 * small chain built by real txs. Blocks are made only for txs (`create_empty_blocks = false`), so
 * the chain stands still between tests: `settle()` waits until it does. Test support only.
 *
 * The chain, in order (each tx block is followed by the block that commits its app hash):
 * - `validatorTxs`: this node's power raised to NODE_POWER and two more validators of power 1 that
 *   never sign (so commits have absent signatures and the set has three members from two blocks on);
 * - `singleTx`: one tx whose text needs JSON escaping;
 * - `pairTxs`: two txs in one block (a proof with an aunt), its last commit signed by the new set.
 */

/** A named fixture failure (src/ code never throws bare Error). */
export class RealChainError extends ComethError {}

export const CHAIN_ID = "test-chain";
export const NODE_POWER = 100n;
export const OTHER_POWER = 1n;
/** Genesis app_state: a string needing HTML escaping (Go's encoding/json escapes <, > and &). */
export const GENESIS_APP_STATE = { accounts: [{ name: "<alice>", balance: "100" }] };

export const SINGLE_TX = Buffer.from("k=v<&>");
export const PAIR_TXS = [Buffer.from("name=satoshi"), Buffer.from("creator=Cosmoshi")] as const;

/** The config every real-chain test node runs with (besides startInProcessNode's). */
export const REAL_CHAIN_CONFIG: ConfigOverrides = {
  "--consensus.create_empty_blocks": false,
  // Txs sent within this window after a commit wait in the mempool for the next block.
  "--consensus.timeout_commit": "250ms",
  "--consensus.timeout_propose": "500ms",
  "--instrumentation.prometheus": true,
  "--instrumentation.prometheus_listen_addr": "127.0.0.1:0",
};

export function sha256(data: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

export function hexUpper(b: Uint8Array): string {
  return Buffer.from(b).toString("hex").toUpperCase();
}

/** A fresh ed25519 public key (32 bytes). */
export function newEd25519PubKey(): Uint8Array {
  const { publicKey } = generateKeyPairSync("ed25519");
  const jwk = publicKey.export({ format: "jwk" });
  return new Uint8Array(Buffer.from(jwk.x ?? "", "base64url"));
}

/** A kvstore validator-update tx. */
export function validatorTx(pubKey: Uint8Array, power: bigint): Buffer {
  return Buffer.from(`val=ed25519!${Buffer.from(pubKey).toString("base64")}!${power}`);
}

export interface RealChainHeights {
  validatorTxs: number;
  singleTx: number;
  pairTxs: number;
  /** The last block when the fixture was built (the proof block after `pairTxs`). */
  built: number;
}

export interface RealChain {
  n: InProcessNode;
  /** `http://127.0.0.1:PORT` of the node RPC. */
  base: string;
  client: RpcTestClient;
  heights: RealChainHeights;
  /** The node's own validator key and address. */
  nodePubKey: Uint8Array;
  nodeAddress: Uint8Array;
  /** The two validators added by txs (they never sign; the test holds their keys). */
  otherKeys: readonly PrivKey[];
  validatorTxs: readonly Uint8Array[];
  block(height: number): Block;
  meta(height: number): BlockMeta;
  latestHeight(): number;
  /** Waits until the mempool is empty and no block is under way (the last block's app hash is the app's). */
  settle(timeoutMs?: number): Promise<void>;
  /** Admits txs through the real mempool, waits for the block holding them and for the chain to settle; returns the height. */
  commitTxs(txs: readonly Uint8Array[]): Promise<number>;
  /** Open node RPC event subscriptions (the node's cometh_rpc_subscriptions gauge). */
  rpcSubscriptions(): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function blockHolding(n: InProcessNode, from: number, tx: Uint8Array): number | undefined {
  const store = n.node.blockStore;
  for (let h = store.height(); h >= from; h--) {
    if (store.loadBlock(h)?.data.txs.some((t) => bytesEqual(t, tx))) return h;
  }
  return undefined;
}

/** Starts the node and builds the chain described above. */
export async function startRealChain(
  overrides: ConfigOverrides = {},
  options: InProcessNodeOptions = {},
): Promise<RealChain> {
  const n = await startInProcessNode(
    { ...REAL_CHAIN_CONFIG, ...overrides },
    { appState: GENESIS_APP_STATE, ...options },
  );
  const client = new RpcTestClient(n.rpcUrl);
  const own = n.node.genesis.validators[0];
  if (own === undefined) throw new RealChainError("the genesis has no validator");
  const store = n.node.blockStore;

  const settle = async (timeoutMs = 10_000): Promise<void> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const h = store.height();
      if (h > 0 && n.node.mempool.size() === 0) {
        const info = await n.node.app.info();
        const meta = store.loadBlockMeta(h);
        if (info.lastBlockHeight === h && meta !== undefined && bytesEqual(info.lastBlockAppHash, meta.header.appHash))
          return;
      }
      if (Date.now() > end) throw new RealChainError(`the chain did not settle (height ${h})`);
      await sleep(10);
    }
  };

  const commitTxs = async (txs: readonly Uint8Array[]): Promise<number> => {
    const from = store.height() + 1;
    const results = await Promise.all(txs.map((tx) => n.node.mempool.checkTx(tx)));
    for (const r of results) if (r.code !== 0) throw new RealChainError(`tx refused: ${r.log}`);
    const end = Date.now() + 10_000;
    let height: number | undefined;
    while (height === undefined) {
      height = blockHolding(n, from, txs[0] as Uint8Array);
      if (height === undefined) {
        if (Date.now() > end) throw new RealChainError("the txs were not committed");
        await sleep(10);
      }
    }
    for (const tx of txs) {
      if (blockHolding(n, height, tx) !== height) throw new RealChainError("the txs landed in different blocks");
    }
    await settle();
    return height;
  };

  const otherKeys = [generateEd25519PrivKey(), generateEd25519PrivKey()];
  const validatorTxs = [
    validatorTx(own.pubKey.bytes, NODE_POWER),
    ...otherKeys.map((k) => validatorTx(pubKeyFromPrivKey(k).bytes, OTHER_POWER)),
  ];
  try {
    await n.node.consensus.waitForHeight(1);
    await settle();
    const heights: RealChainHeights = {
      validatorTxs: await commitTxs(validatorTxs),
      singleTx: await commitTxs([SINGLE_TX]),
      pairTxs: await commitTxs(PAIR_TXS),
      built: 0,
    };
    heights.built = store.height();
    return {
      n,
      base: n.rpcUrl,
      client,
      heights,
      nodePubKey: own.pubKey.bytes,
      nodeAddress: own.address,
      otherKeys,
      validatorTxs,
      block(h) {
        const b = store.loadBlock(h);
        if (b === undefined) throw new RealChainError(`no block at ${h}`);
        return b;
      },
      meta(h) {
        const m = store.loadBlockMeta(h);
        if (m === undefined) throw new RealChainError(`no block meta at ${h}`);
        return m;
      },
      latestHeight: () => store.height(),
      settle,
      commitTxs,
      async rpcSubscriptions() {
        const text = await (await fetch(`http://${n.node.metricsAddress}/metrics`)).text();
        const series = 'cometh_rpc_subscriptions{server="node",chain_id="test-chain"} ';
        const line = text.split("\n").find((l) => l.startsWith(series));
        if (line === undefined) throw new RealChainError("no cometh_rpc_subscriptions series");
        return Number(line.slice(series.length));
      },
      async close() {
        await client.close();
        await n.close();
      },
    };
  } catch (err) {
    await client.close();
    await n.close();
    throw err;
  }
}

/** startInProcessNode options for a node that is not its chain's validator: it never makes a block. */
export const NON_VALIDATOR: InProcessNodeOptions = {
  async beforeStart(home) {
    const path = join(home, "config", "genesis.json");
    const genesis = JSON.parse(await readFile(path, "utf8")) as {
      validators: { address: string; pub_key: { type: string; value: string }; power: string; name: string }[];
    };
    const pubKey = newEd25519PubKey();
    genesis.validators = [
      {
        address: hexUpper(sha256(pubKey).subarray(0, 20)),
        pub_key: { type: "tendermint/PubKeyEd25519", value: Buffer.from(pubKey).toString("base64") },
        power: "10",
        name: "",
      },
    ];
    await writeFile(path, JSON.stringify(genesis, null, 2));
  },
};

export interface SignedEvidence {
  /** The JSON-RPC wire form (`tendermint/DuplicateVoteEvidence`). */
  wire: unknown;
  evidence: DuplicateVoteEvidence;
  /** Evidence.Hash(), computed by types/. */
  hash: Uint8Array;
}

function conflictingBlockId(first: number): Vote["blockId"] {
  const hash = new Uint8Array(randomBytes(32));
  hash[0] = first;
  return { hash, partSetHeader: { total: 1, hash: new Uint8Array(randomBytes(32)) } };
}

function wireVote(v: Vote): unknown {
  return {
    type: v.type,
    height: String(v.height),
    round: v.round,
    block_id: {
      hash: hexUpper(v.blockId.hash),
      parts: { total: v.blockId.partSetHeader.total, hash: hexUpper(v.blockId.partSetHeader.hash) },
    },
    timestamp: formatRfc3339Nano(v.timestamp),
    validator_address: hexUpper(v.validatorAddress),
    validator_index: v.validatorIndex,
    signature: Buffer.from(v.signature).toString("base64"),
    extension: null,
    extension_signature: null,
  };
}

/**
 * Two conflicting precommits signed with `key` (a validator of `index` in the set of `height`), as
 * duplicate-vote evidence. `heightB` puts the second vote at another height; `reversed` lists the
 * votes in the wrong order.
 */
export function signDuplicateVoteEvidence(opts: {
  key: PrivKey;
  height: number;
  index: number;
  blockTime: bigint;
  totalVotingPower: bigint;
  validatorPower: bigint;
  heightB?: number;
  reversed?: boolean;
}): SignedEvidence {
  const address = sha256(pubKeyFromPrivKey(opts.key).bytes).subarray(0, 20);
  const vote = (height: number, first: number): Vote => {
    const v: Vote = {
      type: 2,
      height,
      round: 0,
      blockId: conflictingBlockId(first),
      timestamp: opts.blockTime,
      validatorAddress: address,
      validatorIndex: opts.index,
      signature: new Uint8Array(0),
      extension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
    };
    v.signature = signBytes(opts.key, voteSignBytes(CHAIN_ID, v));
    return v;
  };
  const a = vote(opts.height, 0x00);
  const b = vote(opts.heightB ?? opts.height, 0xff);
  const [voteA, voteB] = opts.reversed === true ? [b, a] : [a, b];
  const evidence: DuplicateVoteEvidence = {
    type: "duplicateVote",
    voteA,
    voteB,
    totalVotingPower: opts.totalVotingPower,
    validatorPower: opts.validatorPower,
    timestamp: opts.blockTime,
  };
  return {
    wire: {
      type: "tendermint/DuplicateVoteEvidence",
      value: {
        vote_a: wireVote(voteA),
        vote_b: wireVote(voteB),
        TotalVotingPower: String(opts.totalVotingPower),
        ValidatorPower: String(opts.validatorPower),
        Timestamp: formatRfc3339Nano(opts.blockTime),
      },
    },
    evidence,
    hash: hashEvidence(evidence),
  };
}
