import type { Block } from "../../types/block.js";
import type { Evidence } from "../../types/evidence.js";
import { bytesEqual, bytesToHexUpper } from "../../util/bytes.js";
import { EncodedJson, encodeJson, errorText, InternalError, type JsonNode, type WireValue } from "../jsonrpc/index.js";
import { broadcastTxAsync, broadcastTxCommit, broadcastTxSync } from "./broadcast.js";
import type { CometCallContext } from "./context.js";
import {
  encodeBlockResults,
  encodeCheckTxJsonpb,
  encodeConsensusParams,
  encodeInfoResponse,
  encodeQueryResponseJsonpb,
} from "./encode/abci.js";
import { encodeBlock, encodeBlockId, encodeBlockMeta, encodeCommit, encodeHeader } from "./encode/block.js";
import { encodeConsensusStateSimple, encodeDumpConsensusState } from "./encode/consensus.js";
import { decodeEvidence, MissingVoteEvidence } from "./encode/evidence.js";
import { encodeGenesisDoc } from "./encode/genesis.js";
import { encodeNetInfo, encodeStatus } from "./encode/status.js";
import { encodeResultTx, type TxProofParts } from "./encode/tx.js";
import { encodeValidatorPriority } from "./encode/validator.js";
import { b64NonNil, i64 } from "./encode/wire.js";
import { p } from "./params.js";
import type { BlockReader, CometServices, EventQuery, IndexedTx } from "./services.js";
import { MAX_QUERY_LENGTH, subscribe, unsubscribe, unsubscribeAll } from "./subscriptions.js";
import { defineRoutes } from "./table.js";

/**
 * Every CometBFT v0.38 route (rpc/core/routes.go), with its arguments in order, its handler and its
 * cache rule. All three transports (URI, JSON-RPC over HTTP, WebSocket) read this table.
 */

const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;
const BLOCKCHAIN_LIMIT = 20n;

const fail = (text: string) => new InternalError(text);

/** rpc/core env.go getHeight: absent means `latest`; 0 and negatives are errors. */
function getHeight(blocks: BlockReader, latest: number, height: bigint | undefined): number {
  if (height === undefined) return latest;
  if (height <= 0n) throw fail(`height must be greater than 0, but got ${height}`);
  if (height > BigInt(latest)) {
    throw fail(`height ${height} must be less than or equal to the current blockchain height ${latest}`);
  }
  const base = blocks.base();
  if (height < BigInt(base)) throw fail(`height ${height} is not available, lowest height is ${base}`);
  return Number(height);
}

/** The next height (validators, consensus_params), unless the node is still syncing. */
function latestUncommittedHeight(s: CometServices): number {
  return s.node.isCatchingUp() ? s.blocks.height() : s.blocks.height() + 1;
}

function validatePerPage(perPage: bigint | undefined): number {
  if (perPage === undefined || perPage < 1n) return DEFAULT_PER_PAGE;
  if (perPage > BigInt(MAX_PER_PAGE)) return MAX_PER_PAGE;
  return Number(perPage);
}

function validatePage(page: bigint | undefined, perPage: number, total: number): number {
  if (page === undefined) return 1;
  let pages = Math.trunc((total - 1) / perPage) + 1;
  if (pages === 0) pages = 1;
  if (page <= 0n || page > BigInt(pages)) throw fail(`page should be within [1, ${pages}] range, given ${page}`);
  return Number(page);
}

/** Pages a list the way tx_search, block_search and validators do. */
function paginate<T>(items: readonly T[], page: bigint | undefined, perPage: bigint | undefined): T[] {
  const per = validatePerPage(perPage);
  const current = validatePage(page, per, items.length);
  const skip = Math.max(0, (current - 1) * per);
  return items.slice(skip, skip + Math.min(per, items.length - skip));
}

function blockResult(s: CometServices, height: number) {
  const meta = s.blocks.loadBlockMeta(height);
  const block = s.blocks.loadBlock(height);
  return {
    block_id: encodeBlockId(meta === undefined ? ZERO_BLOCK_ID : meta.blockId),
    block: encodeBlockOrNull(block),
  };
}

/** Encoded `block` answers of recent heights per services object (a committed block never changes). */
const blockMemo = new WeakMap<CometServices, { epoch: number; byHeight: Map<number, EncodedJson> }>();
const BLOCK_MEMO_SIZE = 64;

/** blockResult, kept encoded for heights that have a block (getHeight has already checked the range). */
function keptBlockResult(s: CometServices, height: number): WireValue {
  const epoch = s.epoch?.current() ?? 0;
  let entry = blockMemo.get(s);
  // A dev chain's rollback makes heights again: what was kept about them is gone with them.
  if (entry === undefined || entry.epoch !== epoch) {
    entry = { epoch, byHeight: new Map() };
    blockMemo.set(s, entry);
  }
  const memo = entry.byHeight;
  const kept = memo.get(height);
  if (kept !== undefined) return kept;
  const result = blockResult(s, height);
  if (result.block === null) return result;
  const encoded = new EncodedJson(encodeJson(result));
  if (memo.size >= BLOCK_MEMO_SIZE) memo.delete(memo.keys().next().value as number);
  memo.set(height, encoded);
  return encoded;
}

const ZERO_BLOCK_ID = { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };

function encodeBlockOrNull(b: Block | undefined): WireValue {
  return b === undefined ? null : encodeBlock(b);
}

function txProof(s: CometServices, r: IndexedTx): TxProofParts | undefined {
  const block = s.blocks.loadBlock(r.height);
  if (block === undefined) return undefined;
  const { root, proofs } = s.types.proofsFromByteSlices(block.data.txs.map((tx) => s.types.txHash(tx)));
  const proof = proofs[r.index];
  const data = block.data.txs[r.index];
  if (proof === undefined || data === undefined) return undefined;
  return { rootHash: root, data, proof };
}

function parseSearchQuery(s: CometServices, text: string): EventQuery {
  try {
    return s.parseQuery(text);
  } catch (err) {
    throw new InternalError(errorText(err), { cause: err });
  }
}

function orderError(): InternalError {
  return fail("expected order_by to be either `asc` or `desc` or empty");
}

const evidenceParam = p.custom<Evidence | MissingVoteEvidence | undefined>({
  goKind: "interface",
  zero: undefined,
  decode: (node: JsonNode) => decodeEvidence(node),
});

const route = defineRoutes<CometServices, CometCallContext>();

interface StatusMemo {
  epoch: number;
  latestHeight: number;
  base: number;
  catchingUp: boolean;
  vals: ReturnType<CometServices["state"]["loadValidators"]>;
  pubKey: ReturnType<CometServices["node"]["validatorPubKey"]>;
  encoded: EncodedJson;
}

/** The last status answer per services object (see the status route). */
const statusMemo = new WeakMap<CometServices, StatusMemo>();

export const cometRoutes = route({
  subscribe: { params: { query: p.string }, wsOnly: true, run: ({ query }, s, ctx) => subscribe(query, s, ctx) },
  unsubscribe: { params: { query: p.string }, wsOnly: true, run: ({ query }, s, ctx) => unsubscribe(query, s, ctx) },
  unsubscribe_all: { params: {}, wsOnly: true, run: (_, s, ctx) => unsubscribeAll(s, ctx) },

  health: { params: {}, run: () => ({}) },

  status: {
    params: {},
    run: (_, s) => {
      const latestHeight = s.blocks.height();
      const epoch = s.epoch?.current() ?? 0;
      const base = s.blocks.base();
      const catchingUp = s.node.isCatchingUp();
      const pubKey = s.node.validatorPubKey();
      const vals = s.state.loadValidators(latestUncommittedHeight(s));
      // Everything status reports changes only with a block, the validator set or sync: the encoded
      // answer is kept per services object until one of them moves.
      const memo = statusMemo.get(s);
      if (
        memo !== undefined &&
        memo.epoch === epoch &&
        memo.latestHeight === latestHeight &&
        memo.base === base &&
        memo.catchingUp === catchingUp &&
        memo.vals === vals &&
        memo.pubKey === pubKey
      ) {
        return memo.encoded;
      }
      const address = s.types.addressFromPubKey(pubKey);
      const me = vals?.validators.find((v) => bytesEqual(v.address, address));
      const encoded = new EncodedJson(
        encodeJson(
          encodeStatus({
            nodeInfo: s.node.nodeInfo(),
            latestHeight,
            latest: latestHeight === 0 ? undefined : s.blocks.loadBlockMeta(latestHeight),
            earliest: base === 0 ? undefined : s.blocks.loadBlockMeta(base),
            catchingUp,
            validator: { address, pubKey, votingPower: me?.votingPower ?? 0n },
          }),
        ),
      );
      statusMemo.set(s, { epoch, latestHeight, base, catchingUp, vals, pubKey, encoded });
      return encoded;
    },
  },

  net_info: {
    params: {},
    run: (_, s) => {
      if (s.p2p === undefined) return encodeNetInfo(false, [], []);
      return encodeNetInfo(s.p2p.isListening(), s.p2p.listeners(), s.p2p.peers());
    },
  },

  blockchain: {
    params: { minHeight: p.int64, maxHeight: p.int64 },
    cacheable: true,
    run: ({ minHeight, maxHeight }, s) => {
      // rpc/core blocks.go filterMinMax
      const height = BigInt(s.blocks.height());
      const base = BigInt(s.blocks.base());
      if (minHeight < 0n || maxHeight < 0n) throw fail("heights must be non-negative");
      let min = minHeight === 0n ? 1n : minHeight;
      let max = maxHeight === 0n ? height : maxHeight;
      if (height < max) max = height;
      if (base > min) min = base;
      if (max - BLOCKCHAIN_LIMIT + 1n > min) min = max - BLOCKCHAIN_LIMIT + 1n;
      if (min > max) throw fail(`min height ${min} can't be greater than max height ${max}`);
      const metas: WireValue[] = [];
      for (let h = max; h >= min; h--) {
        const meta = s.blocks.loadBlockMeta(Number(h));
        metas.push(meta === undefined ? null : encodeBlockMeta(meta));
      }
      return { last_height: i64(height), block_metas: metas };
    },
  },

  genesis: {
    params: {},
    cacheable: true,
    run: (_, s, ctx) => {
      if (ctx.runtime.genesisChunks.length > 1) {
        throw fail("genesis response is large, please use the genesis_chunked API instead");
      }
      return { genesis: encodeGenesisDoc(s.genesis) };
    },
  },

  genesis_chunked: {
    params: { chunk: p.uint },
    cacheable: true,
    run: ({ chunk }, _s, ctx) => {
      const chunks = ctx.runtime.genesisChunks;
      if (chunks.length === 0) throw fail("service configuration error, there are no chunks");
      const data = chunk < BigInt(chunks.length) ? chunks[Number(chunk)] : undefined;
      if (data === undefined) throw fail(`there are ${chunks.length - 1} chunks, ${chunk} is invalid`);
      return { chunk: i64(chunk), total: i64(chunks.length), data };
    },
  },

  block: {
    params: { height: p.optional(p.int64) },
    cacheable: { whenSet: ["height"] },
    run: ({ height }, s) => keptBlockResult(s, getHeight(s.blocks, s.blocks.height(), height)),
  },

  block_by_hash: {
    params: { hash: p.bytes },
    cacheable: true,
    run: ({ hash }, s) => {
      const block = s.blocks.loadBlockByHash(hash);
      if (block === undefined) return { block_id: encodeBlockId(ZERO_BLOCK_ID), block: null };
      const meta = s.blocks.loadBlockMeta(block.header.height);
      return { block_id: encodeBlockId(meta?.blockId ?? ZERO_BLOCK_ID), block: encodeBlock(block) };
    },
  },

  block_results: {
    params: { height: p.optional(p.int64) },
    cacheable: { whenSet: ["height"] },
    run: ({ height }, s) => {
      const h = getHeight(s.blocks, s.blocks.height(), height);
      const results = s.state.loadFinalizeBlockResponse(h);
      if (results === undefined) throw fail(`could not find results for height #${h}`);
      return encodeBlockResults(h, results);
    },
  },

  commit: {
    params: { height: p.optional(p.int64) },
    cacheable: { whenSet: ["height"] },
    run: ({ height }, s) => {
      const h = getHeight(s.blocks, s.blocks.height(), height);
      const meta = s.blocks.loadBlockMeta(h);
      if (meta === undefined) return null;
      // The latest block has no canonical commit yet (it is in block h+1): use the seen commit.
      const canonical = h !== s.blocks.height();
      const commit = canonical ? s.blocks.loadBlockCommit(h) : s.blocks.loadSeenCommit(h);
      return {
        signed_header: {
          header: encodeHeader(meta.header),
          commit: commit === undefined ? null : encodeCommit(commit),
        },
        canonical,
      };
    },
  },

  header: {
    params: { height: p.optional(p.int64) },
    cacheable: { whenSet: ["height"] },
    run: ({ height }, s) => {
      const meta = s.blocks.loadBlockMeta(getHeight(s.blocks, s.blocks.height(), height));
      return { header: meta === undefined ? null : encodeHeader(meta.header) };
    },
  },

  header_by_hash: {
    params: { hash: p.hexBytes },
    cacheable: true,
    run: ({ hash }, s) => {
      const meta = s.blocks.loadBlockMetaByHash(hash);
      return { header: meta === undefined ? null : encodeHeader(meta.header) };
    },
  },

  check_tx: {
    params: { tx: p.bytes },
    run: async ({ tx }, s) => encodeCheckTxJsonpb(await s.app.checkTx({ tx, type: 0 })),
  },

  tx: {
    params: { hash: p.bytes, prove: p.bool },
    cacheable: true,
    run: async ({ hash, prove }, s) => {
      if (!s.indexer.txIndexEnabled) throw fail("transaction indexing is disabled");
      const r = await s.indexer.getTx(hash);
      if (r === undefined) throw fail(`tx (${bytesToHexUpper(hash)}) not found`);
      return encodeResultTx(hash, r, prove ? txProof(s, r) : undefined);
    },
  },

  tx_search: {
    params: {
      query: p.string,
      prove: p.bool,
      page: p.optional(p.int),
      per_page: p.optional(p.int),
      order_by: p.string,
    },
    run: async ({ query, prove, page, per_page, order_by }, s) => {
      if (!s.indexer.txIndexEnabled) throw fail("transaction indexing is disabled");
      if (query.length > MAX_QUERY_LENGTH) throw fail("maximum query length exceeded");
      const q = parseSearchQuery(s, query);
      const results = [...(await s.indexer.searchTxs(q))];
      const dir = order_by === "desc" ? -1 : order_by === "asc" || order_by === "" ? 1 : 0;
      if (dir === 0) throw orderError();
      results.sort((a, b) => dir * (a.height === b.height ? a.index - b.index : a.height - b.height));
      const txs = paginate(results, page, per_page).map((r) =>
        encodeResultTx(s.types.txHash(r.tx), r, prove ? txProof(s, r) : undefined),
      );
      return { txs, total_count: i64(results.length) };
    },
  },

  block_search: {
    params: { query: p.string, page: p.optional(p.int), per_page: p.optional(p.int), order_by: p.string },
    run: async ({ query, page, per_page, order_by }, s) => {
      if (!s.indexer.blockIndexEnabled) throw fail("block indexing is disabled");
      const q = parseSearchQuery(s, query);
      const heights = [...(await s.indexer.searchBlocks(q))];
      const dir = order_by === "desc" || order_by === "" ? -1 : order_by === "asc" ? 1 : 0;
      if (dir === 0) throw orderError();
      heights.sort((a, b) => dir * (a - b));
      const blocks: WireValue[] = [];
      for (const h of paginate(heights, page, per_page)) {
        const block = s.blocks.loadBlock(h);
        const meta = block === undefined ? undefined : s.blocks.loadBlockMeta(block.header.height);
        if (block !== undefined && meta !== undefined) {
          blocks.push({ block_id: encodeBlockId(meta.blockId), block: encodeBlock(block) });
        }
      }
      return { blocks, total_count: i64(heights.length) };
    },
  },

  validators: {
    params: { height: p.optional(p.int64), page: p.optional(p.int), per_page: p.optional(p.int) },
    cacheable: { whenSet: ["height"] },
    run: ({ height, page, per_page }, s) => {
      const h = getHeight(s.blocks, latestUncommittedHeight(s), height);
      const set = s.state.loadValidators(h);
      if (set === undefined) throw fail(`could not find validator set for height #${h}`);
      const vals = paginate(set.validators, page, per_page);
      return {
        block_height: i64(h),
        validators: vals.map(encodeValidatorPriority),
        count: i64(vals.length),
        total: i64(set.validators.length),
      };
    },
  },

  dump_consensus_state: {
    params: {},
    run: (_, s) =>
      encodeDumpConsensusState(s.consensus.roundStateView(), s.consensus.peerStateViews(), (v) =>
        s.types.formatVote(v),
      ),
  },

  consensus_state: {
    params: {},
    run: (_, s) => encodeConsensusStateSimple(s.consensus.roundStateView(), s.types),
  },

  consensus_params: {
    params: { height: p.optional(p.int64) },
    cacheable: { whenSet: ["height"] },
    run: ({ height }, s) => {
      const h = getHeight(s.blocks, latestUncommittedHeight(s), height);
      const params = s.state.loadConsensusParams(h);
      if (params === undefined) throw fail(`could not find consensus params for height #${h}`);
      return { block_height: i64(h), consensus_params: encodeConsensusParams(params) };
    },
  },

  unconfirmed_txs: {
    params: { limit: p.optional(p.int) },
    run: ({ limit }, s) => {
      const txs = s.mempool.reapMaxTxs(validatePerPage(limit));
      return {
        n_txs: i64(txs.length),
        total: i64(s.mempool.size()),
        total_bytes: i64(s.mempool.sizeBytes()),
        txs: txs.map(b64NonNil),
      };
    },
  },

  num_unconfirmed_txs: {
    params: {},
    run: (_, s) => ({
      n_txs: i64(s.mempool.size()),
      total: i64(s.mempool.size()),
      total_bytes: i64(s.mempool.sizeBytes()),
      txs: null,
    }),
  },

  broadcast_tx_commit: { params: { tx: p.bytes }, run: ({ tx }, s, ctx) => broadcastTxCommit(tx, s, ctx) },
  broadcast_tx_sync: { params: { tx: p.bytes }, run: ({ tx }, s) => broadcastTxSync(tx, s) },
  broadcast_tx_async: { params: { tx: p.bytes }, run: ({ tx }, s) => broadcastTxAsync(tx, s) },

  abci_query: {
    params: { path: p.string, data: p.hexBytes, height: p.int64, prove: p.bool },
    run: async ({ path, data, height, prove }, s) => ({
      response: encodeQueryResponseJsonpb(await s.app.query({ path, data, height: Number(height), prove })),
    }),
  },

  abci_info: {
    params: {},
    cacheable: true,
    run: async (_, s) => ({ response: encodeInfoResponse(await s.app.info()) }),
  },

  broadcast_evidence: {
    params: { evidence: evidenceParam },
    run: async ({ evidence }, s) => {
      if (evidence === undefined) throw fail("no evidence was provided");
      if (evidence instanceof MissingVoteEvidence) {
        throw fail(
          `evidence.ValidateBasic failed: one or both of the votes are empty ${evidence.voteA ? "vote" : "<nil>"}, ${evidence.voteB ? "vote" : "<nil>"}`,
        );
      }
      const pool = s.evidence;
      if (pool === undefined) throw fail("failed to add evidence: this node has no evidence pool");
      try {
        pool.validateBasic(evidence);
      } catch (err) {
        throw new InternalError(`evidence.ValidateBasic failed: ${errorText(err)}`, { cause: err });
      }
      try {
        await pool.addEvidence(evidence);
      } catch (err) {
        throw new InternalError(`failed to add evidence: ${errorText(err)}`, { cause: err });
      }
      return { hash: b64NonNil(pool.hash(evidence)) };
    },
  },

  dial_seeds: {
    params: { seeds: p.stringList },
    unsafe: true,
    run: async ({ seeds }, s) => {
      if (seeds.length === 0) throw fail("no seeds provided");
      if (s.p2p === undefined) throw fail("this node has no p2p layer to dial with");
      await runP2P(() => s.p2p?.dialSeeds(seeds));
      return { log: "Dialing seeds in progress. See /net_info for details" };
    },
  },

  dial_peers: {
    params: { peers: p.stringList, persistent: p.bool, unconditional: p.bool, private: p.bool },
    unsafe: true,
    run: async ({ peers, persistent, unconditional, private: priv }, s) => {
      if (peers.length === 0) throw fail("no peers provided");
      const ids: string[] = [];
      for (const peer of peers) {
        const parts = peer.split("@");
        if (parts.length !== 2) throw fail(`address (${peer}) does not contain ID`);
        ids.push(parts[0] as string);
      }
      const p2p = s.p2p;
      if (p2p === undefined) throw fail("this node has no p2p layer to dial with");
      if (persistent) await runP2P(() => p2p.addPersistentPeers(peers));
      if (priv) await runP2P(() => p2p.addPrivatePeerIds(ids));
      if (unconditional) await runP2P(() => p2p.addUnconditionalPeerIds(ids));
      await runP2P(() => p2p.dialPeers(peers));
      return { log: "Dialing peers in progress. See /net_info for details" };
    },
  },

  unsafe_flush_mempool: {
    params: {},
    unsafe: true,
    run: (_, s) => {
      s.mempool.flush();
      return {};
    },
  },
});

async function runP2P(fn: () => void | Promise<void> | undefined): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw new InternalError(errorText(err), { cause: err });
  }
}

/** The route names, for docs and tests. */
export const COMET_ROUTE_NAMES = Object.keys(cometRoutes);
