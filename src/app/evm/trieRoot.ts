import { RLP } from "@ethereumjs/rlp";
import { keccak256 } from "./crypto.js";
import { bigintToBytes, EMPTY_TRIE_ROOT } from "./records.js";

/**
 * Root of a Merkle-Patricia trie built from scratch (geth's DeriveSha over a list): keys are
 * rlp(index), values the encoded items. Used for transactionsRoot and receiptsRoot; a direct
 * recursive build, no database, synchronous.
 */

type Node = Uint8Array | Node[];

function nibbles(key: Uint8Array): number[] {
  const out: number[] = [];
  for (const b of key) out.push(b >> 4, b & 15);
  return out;
}

/** Hex-prefix encoding of a nibble path (Yellow Paper appendix C). */
function hexPrefix(path: number[], leaf: boolean): Uint8Array {
  const odd = path.length % 2 === 1;
  const flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  const out = new Uint8Array(Math.floor(path.length / 2) + 1);
  let i = 0;
  if (odd) {
    out[0] = (flag << 4) | (path[0] as number);
    i = 1;
  } else {
    out[0] = flag << 4;
  }
  for (let o = 1; i < path.length; i += 2, o++) out[o] = ((path[i] as number) << 4) | (path[i + 1] as number);
  return out;
}

/** A child reference: the node itself when its encoding is under 32 bytes, else its hash. */
function ref(node: Node): Node {
  const enc = RLP.encode(node);
  return enc.length < 32 ? node : keccak256(enc);
}

function build(items: { path: number[]; value: Uint8Array }[], depth: number): Node {
  if (items.length === 1) {
    const only = items[0] as { path: number[]; value: Uint8Array };
    return [hexPrefix(only.path.slice(depth), true), only.value];
  }
  // Longest common prefix from depth.
  const first = (items[0] as { path: number[] }).path;
  let cp = 0;
  for (;;) {
    const d = depth + cp;
    if (d >= first.length) break;
    const nib = first[d];
    if (!items.every((it) => it.path.length > d && it.path[d] === nib)) break;
    cp++;
  }
  if (cp > 0) {
    return [hexPrefix(first.slice(depth, depth + cp), false), ref(build(items, depth + cp))];
  }
  const branch: Node[] = new Array(17).fill(new Uint8Array(0));
  const groups: { path: number[]; value: Uint8Array }[][] = Array.from({ length: 16 }, () => []);
  for (const it of items) {
    if (it.path.length === depth) branch[16] = it.value;
    else (groups[it.path[depth] as number] as { path: number[]; value: Uint8Array }[]).push(it);
  }
  for (let n = 0; n < 16; n++) {
    const g = groups[n] as { path: number[]; value: Uint8Array }[];
    if (g.length > 0) branch[n] = ref(build(g, depth + 1));
  }
  return branch;
}

/** Root of the trie mapping rlp(i) → values[i]; the empty-trie root for no values. */
export function orderedTrieRoot(values: Uint8Array[]): Uint8Array {
  if (values.length === 0) return EMPTY_TRIE_ROOT;
  const items = values.map((value, i) => ({ path: nibbles(RLP.encode(bigintToBytes(BigInt(i)))), value }));
  items.sort((a, b) => {
    const n = Math.min(a.path.length, b.path.length);
    for (let i = 0; i < n; i++) if (a.path[i] !== b.path[i]) return (a.path[i] as number) - (b.path[i] as number);
    return a.path.length - b.path.length;
  });
  return keccak256(RLP.encode(build(items, 0)));
}

/** Consensus encoding of a receipt (EIP-2718 typed when type > 0): [status, cumulativeGas, bloom, logs]. */
export function encodeReceiptForTrie(r: {
  type: number;
  status: 0 | 1;
  cumulativeGasUsed: bigint;
  logsBloom: Uint8Array;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
}): Uint8Array {
  const body = RLP.encode([
    r.status === 1 ? Uint8Array.of(1) : new Uint8Array(0),
    bigintToBytes(r.cumulativeGasUsed),
    r.logsBloom,
    r.logs.map((l) => [l.address, l.topics, l.data]),
  ]);
  if (r.type === 0) return body;
  const out = new Uint8Array(body.length + 1);
  out[0] = r.type;
  out.set(body, 1);
  return out;
}
