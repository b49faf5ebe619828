/**
 * Field-by-field comparison of geth's and cometh's answers, and THE one list of values that must
 * differ between them, each with its reason. Anything else that differs fails the suite: it is fixed
 * in cometh, or — when cometh differs on purpose — added here and to docs/compatibility.md.
 */

export interface Difference {
  /** Where, with array indexes written `[]`: `eth_getBlockByNumber.transactions[].blockHash`. */
  path: string;
  /** The same with the indexes (for the message). */
  at: string;
  geth: unknown;
  cometh: unknown;
}

export interface MustDiffer {
  /** Matched against `Difference.path`. */
  path: RegExp;
  /** When given, only differences of requests whose label matches (the label names the request). */
  label?: RegExp;
  reason: string;
}

/**
 * Values that cannot be equal on a CometBFT chain. Hashes of blocks follow from the header, which
 * is CometBFT's; everything carrying a block hash differs with it.
 */
export const MUST_DIFFER: readonly MustDiffer[] = [
  {
    path: /(^|\.)(blockHash|hash|parentHash)$/,
    reason:
      "block hashes: cometh's is the CometBFT header hash (sha256 merkle of the CometBFT header), not keccak of an RLP header",
  },
  {
    path: /(^|\.)(timestamp|blockTimestamp)$/,
    reason: "block times: each chain stamps its own blocks when it makes them",
  },
  {
    path: /(^|\.)stateRoot$/,
    reason: "state root: cometh's header carries its app hash (a chained hash of state diffs), not the state trie root",
  },
  {
    path: /(^|\.)size$/,
    reason: "block size: cometh shows the size of the CometBFT block (protobuf, with its commit), not of an RLP block",
  },
  {
    path: /(^|\.)extraData$/,
    reason: "extra data: geth writes its client version into the header; a CometBFT header has no such field",
  },
  {
    path: /(^|\.)mixHash$/,
    reason:
      "mixHash (prevRandao): geth --dev draws a random value per block; Cosmos EVM has no beacon randomness and shows zero",
  },
  {
    path: /./,
    label: /^eth_getBlockByNumber pending$/,
    reason:
      "pending: geth shows the block its miner is building (next number, no txs yet); cometh, as Cosmos EVM, has no pending block and answers with the latest",
  },
  {
    path: /./,
    label: /^eth_getBlockByNumber finalized$/,
    reason:
      "finalized: geth --dev's simulated beacon finalizes blocks in epochs of 32 (block 0 here); CometBFT commits are final, so cometh's finalized block is the latest",
  },
  {
    path: /^eth_call\.(error|result)$/,
    label: /^eth_call with block overrides$/,
    reason:
      "eth_call's 4th parameter (block overrides): Cosmos EVM v0.5 takes 3 parameters and refuses a 4th (-32602); cometh does the same (eth_simulateV1 takes block overrides)",
  },
  {
    path: /^(eth_gasPrice|eth_maxPriorityFeePerGas)\.result$/,
    reason:
      "fee suggestions: geth's oracle takes the 60th percentile of recent tips (here it skips every tx: their sender is the fee recipient, and falls back to its 1 wei floor); Cosmos EVM v0.5 derives both from the base fee (tip = baseFee·(elasticity−1)/denominator, 0 at base fee 0)",
  },
  {
    path: /^newHeads\.(blockAccessListHash|slotNumber)$/,
    reason:
      "newHeads: geth 1.17 sends its whole header type, with the fields of forks after Prague (Amsterdam's blockAccessListHash, slotNumber) as null; cometh sends Prague's header fields, as eth_getBlockByNumber shows them on both",
  },
  {
    path: /^eth_blobBaseFee\.(error|result)$/,
    reason: "eth_blobBaseFee: not registered in Cosmos EVM v0.5 (-32601); the chain takes no blob txs",
  },
  {
    path: /^eth_simulateV1\.error\.(code|message)$/,
    label: /^eth_simulateV1 error: state and stateDiff together$/,
    reason:
      "eth_simulateV1 with both state and stateDiff for one account: geth refuses it when it applies the overrides (-32000); cometh when it decodes the argument, as it does for eth_call's overrides (-32602 invalid argument 0, docs/compatibility.md)",
  },
  // Error paths (errors.test.ts): the same code, a different text, or a Cosmos EVM v0.5 rule.
  {
    path: /^eth_getBalance\.(error|result)$/,
    label: /^eth_getBalance \["0x[0-9a-f]{40}"\]$/,
    reason:
      "state reads without a block: Cosmos EVM v0.5 requires the block parameter (-32602); geth 1.17 reads at latest",
  },
  {
    path: /\.error\.message$/,
    label: /"(lates|foo)"|^eth_getBlockByNumber \[0,false\]$/,
    reason:
      "block parameter that is no block: the same -32602; cometh's text names the accepted forms, geth's comes from its hex decoder",
  },
  {
    path: /\.error\.message$/,
    label: /^eth_getStorageAt .*"0x1{66}"/,
    reason:
      "storage key over 32 bytes: the same -32602 with Cosmos EVM v0.5's text (geth v1.14's); geth 1.17 reworded it",
  },
  {
    path: /\.error\.message$/,
    label: /"topics":"x"/,
    reason:
      "a topics value of the wrong type: the same -32602; Go's encoding/json names geth's struct field (input.topics), which cometh does not have",
  },
  {
    path: /^(eth_getTransactionByHash|eth_getTransactionReceipt|debug_traceTransaction)\./,
    label: /^(eth_getTransactionByHash|eth_getTransactionReceipt|debug_traceTransaction) \["0x(ab){32}"\]$/,
    reason:
      "an unknown tx hash on a fresh chain: geth's tx indexer runs in the background and answers -32000 'transaction indexing is in progress' until its first pass ends; cometh indexes every block before announcing it, so the answer is geth's answer once indexed (null, 'transaction not found')",
  },
  {
    path: /\.error\.message$/,
    label: /^eth_sendRawTransaction \(the same tx again\)$/,
    reason:
      "a tx sent again after it was mined: CometBFT's mempool cache still holds its hash, so cometh answers geth's text for a tx it has seen (already known) before it looks at the nonce",
  },
  {
    path: /^eth_sendRawTransaction\.(error|result)$/,
    label: /^eth_sendRawTransaction \(nonce far ahead\)$/,
    reason:
      "nonce gaps: geth queues any future nonce; cometh's CheckTx takes at most 63 skipped nonces (docs/compatibility.md, nonce gaps)",
  },
  {
    path: /^eth_sendRawTransaction\.(error|result)$/,
    label: /^eth_sendRawTransaction \(no tip: underpriced\)$/,
    reason:
      "a tx without tip: geth's pool refuses tips below the miner's minimum (1 wei in --dev); Cosmos EVM's min-tip (default 0) keeps such txs out of proposals instead of refusing them",
  },
  {
    path: /\.error\.message$/,
    label: /^eth_sendRawTransaction \(wrong chain id\)$/,
    reason:
      "a tx signed for another chain: the same -32000 with Cosmos EVM v0.5's text (incorrect chain-id; expected …, got …)",
  },
  {
    path: /^ws\.(error|result)$/,
    label: /"method":"eth_unsubscribe","params":\["0x1234"\]/,
    reason: "eth_unsubscribe of an unknown id: Cosmos EVM v0.5 answers false; geth -32000 'subscription not found'",
  },
  {
    path: /^ws\.error\.message$/,
    label: /^ws \{not json/,
    reason:
      "a WebSocket frame that is not JSON: the same -32700; geth's text is Go's decoder error, cometh's 'parse error' (geth's own text over HTTP)",
  },
];

/** Where to put the index-free path: `a.b[3].c` → `a.b[].c`. */
function generic(at: string): string {
  return at.replace(/\[\d+\]/g, "[]");
}

/** Every leaf that differs (missing keys included: `undefined` on the side that lacks it). */
export function diffValues(geth: unknown, cometh: unknown, at: string, out: Difference[] = []): Difference[] {
  if (Array.isArray(geth) && Array.isArray(cometh)) {
    const n = Math.max(geth.length, cometh.length);
    for (let i = 0; i < n; i++) diffValues(geth[i], cometh[i], `${at}[${i}]`, out);
    return out;
  }
  if (isObject(geth) && isObject(cometh)) {
    const keys = new Set([...Object.keys(geth), ...Object.keys(cometh)]);
    for (const k of [...keys].sort()) diffValues(geth[k], cometh[k], at === "" ? k : `${at}.${k}`, out);
    return out;
  }
  if (!equalLeaf(geth, cometh)) out.push({ path: generic(at), at, geth, cometh });
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function equalLeaf(a: unknown, b: unknown): boolean {
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The differences MUST_DIFFER (and `extra`) does not name, for the request labelled `label`. */
export function unexpected(
  diffs: readonly Difference[],
  label: string,
  extra: readonly MustDiffer[] = [],
): Difference[] {
  return diffs.filter(
    (d) =>
      ![...MUST_DIFFER, ...extra].some((m) => m.path.test(d.path) && (m.label === undefined || m.label.test(label))),
  );
}

/** Short text of differences for a failure message. */
export function describe(diffs: readonly Difference[]): string {
  return diffs
    .map((d) => `${d.at}: geth ${short(d.geth)} ≠ cometh ${short(d.cometh)}`)
    .slice(0, 60)
    .join("\n");
}

function short(v: unknown): string {
  const s = v === undefined ? "(absent)" : JSON.stringify(v);
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}
