// The end-of-run view of the chain: every block 1..H from every running node (for the fork check),
// the canonical commits (round, signers) and, for heights not decided in round 0, the validator set
// (to name the round-0 proposer).
import type { E2eNode } from "./nodeProcess.js";
import { type BlockInfo, blockInfo, type CommitInfo, commitInfo } from "./observer.js";
import { type BlockResult, type CommitResult, cometRpc, type StatusResult, type ValidatorsResult } from "./rpc.js";

export interface ChainView {
  /** The height every check covers (all running nodes reached it). */
  height: number;
  /** Reference blocks (from the first node that has each). */
  blocks: Map<number, BlockInfo>;
  /** Canonical commit of each height (round, signers). */
  commits: Map<number, CommitInfo>;
  /** Per node: height -> [block hash, app hash]; a missing height is one the node could not serve. */
  perNode: Map<string, Map<number, [string, string]>>;
  /** Per node: the lowest height it stores (status earliest_block_height; after state sync, the snapshot's + 1). */
  earliest: Map<string, number>;
  /** Per node: its app's own last height and app hash (abci_info), and the app hash the chain's next header carries. */
  appHashes: Map<string, { height: number; own: string; header: string | undefined }>;
  /** Round-0 proposer of heights not decided in round 0 (address), from /validators. */
  round0Proposer: Map<number, string>;
  /** Whether the round-0 proposer rule matched the proposer of a few heights decided in round 0. */
  proposerRuleChecked: boolean;
}

/** Runs `f` over `items` with at most `limit` calls at once. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function retry<T>(f: () => Promise<T>, tries = 3): Promise<T> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    try {
      return await f();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw last;
}

/**
 * The round-0 proposer of height h, from the validator set of height h-1 (as /validators returns it:
 * priorities after that height's own selection): CometBFT's IncrementProposerPriority(1) on a copy
 * (rescale to the window, add each power, highest priority wins, ties to the lower address). The
 * shift by the average moves every priority alike, so it cannot change the choice and is left out.
 */
export function nextProposer(vals: ValidatorsResult["validators"]): string {
  const vs = vals.map((v) => ({
    address: v.address.toUpperCase(),
    power: BigInt(v.voting_power),
    prio: BigInt(v.proposer_priority),
  }));
  if (vs.length === 0) return "";
  const total = vs.reduce((s, v) => s + v.power, 0n);
  const diffMax = 2n * total;
  let max = vs[0]?.prio as bigint;
  let min = max;
  for (const v of vs) {
    if (v.prio > max) max = v.prio;
    if (v.prio < min) min = v.prio;
  }
  const diff = max - min;
  if (diffMax > 0n && diff > diffMax) {
    const ratio = (diff + diffMax - 1n) / diffMax;
    for (const v of vs) v.prio /= ratio;
  }
  let best: (typeof vs)[number] | undefined;
  for (const v of vs) {
    v.prio += v.power;
    if (best === undefined || v.prio > best.prio || (v.prio === best.prio && v.address < best.address)) best = v;
  }
  return best?.address ?? "";
}

export async function collectChain(nodes: readonly E2eNode[], height: number): Promise<ChainView> {
  const perNode = new Map<string, Map<number, [string, string]>>();
  const blocks = new Map<number, BlockInfo>();
  const commits = new Map<number, CommitInfo>();
  const heights = Array.from({ length: height }, (_, i) => i + 1);
  const earliest = new Map<string, number>();
  for (const n of nodes) {
    const m = new Map<number, [string, string]>();
    perNode.set(n.name, m);
    let lowest = 1;
    try {
      const st = await retry(() => cometRpc<StatusResult>(n.rpcUrl, "status", {}, 5000));
      lowest = Math.max(1, Number(st.sync_info.earliest_block_height));
    } catch {
      // Asked for every height then; the ones it lacks are reported missing.
    }
    earliest.set(n.name, lowest);
    await mapLimit(
      heights.filter((h) => h >= lowest),
      6,
      async (h) => {
        try {
          const r = await retry(() => cometRpc<BlockResult>(n.rpcUrl, "block", { height: String(h) }, 5000));
          m.set(h, [r.block_id.hash, r.block.header.app_hash]);
          if (!blocks.has(h)) blocks.set(h, blockInfo(r));
          if (h > 1 && !commits.has(h - 1)) commits.set(h - 1, commitInfo(r.block.last_commit));
        } catch {
          // Reported as a missing height by the checks.
        }
      },
    );
  }
  // The last height's commit is the node's seen commit (its round is the decided round).
  const top = nodes[0];
  if (top !== undefined) {
    try {
      const c = await cometRpc<CommitResult>(top.rpcUrl, "commit", { height: String(height) }, 5000);
      commits.set(height, commitInfo(c.signed_header.commit));
    } catch {
      // Left out of the round statistics.
    }
  }
  const round0Proposer = new Map<number, string>();
  const late = heights.filter((h) => h > 1 && (commits.get(h)?.round ?? 0) > 0);
  let proposerRuleChecked = false;
  if (top !== undefined) {
    const sample = heights.filter((h) => h > 1 && commits.get(h)?.round === 0).slice(-3);
    const ok = await mapLimit(sample, 3, async (h) => {
      try {
        const v = await cometRpc<ValidatorsResult>(top.rpcUrl, "validators", {
          height: String(h - 1),
          per_page: "100",
        });
        return nextProposer(v.validators) === blocks.get(h)?.proposer.toUpperCase();
      } catch {
        return false;
      }
    });
    proposerRuleChecked = sample.length > 0 && ok.every(Boolean);
    await mapLimit(late, 4, async (h) => {
      try {
        const v = await cometRpc<ValidatorsResult>(top.rpcUrl, "validators", {
          height: String(h - 1),
          per_page: "100",
        });
        round0Proposer.set(h, nextProposer(v.validators));
      } catch {
        // Unknown.
      }
    });
  }
  const appHashes = new Map<string, { height: number; own: string; header: string | undefined }>();
  await mapLimit(nodes, 3, async (n) => {
    try {
      const info = await retry(() =>
        cometRpc<{ response: { last_block_height: string; last_block_app_hash: string } }>(
          n.rpcUrl,
          "abci_info",
          {},
          5000,
        ),
      );
      const h = Number(info.response.last_block_height);
      // abci_info's hash is base64; the header's app hash (hex) of the next height must be the same bytes.
      const own = Buffer.from(info.response.last_block_app_hash, "base64").toString("hex").toUpperCase();
      let header = blocks.get(h + 1)?.appHash.toUpperCase();
      for (let i = 0; header === undefined && i < 20; i++) {
        try {
          const b = await cometRpc<BlockResult>(n.rpcUrl, "block", { height: String(h + 1) }, 5000);
          header = b.block.header.app_hash.toUpperCase();
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      appHashes.set(n.name, { height: h, own, header });
    } catch {
      // Reported by the app hash check.
    }
  });
  return { height, blocks, commits, perNode, earliest, appHashes, round0Proposer, proposerRuleChecked };
}
