import type { WireValue } from "../../jsonrpc/index.js";
import { toAddress, toQuantity } from "../encode/hex.js";
import { encodeTransaction } from "../encode/transaction.js";
import { method, type Namespace } from "../method.js";
import { p } from "../params.js";
import type { EvmTx } from "../services.js";
import { keccak256 } from "../tx/signatures.js";

/**
 * txpool: the mempool's executable (`pending`) and nonce-gapped (`queued`) transactions, grouped
 * by sender (EIP-55 checksummed keys, as geth's account.Hex()) and decimal nonce.
 */

/** EIP-55 mixed-case checksum address. */
export function checksumAddress(address: Uint8Array): string {
  const hex = toAddress(address).slice(2);
  const hash = Buffer.from(keccak256(Buffer.from(hex, "ascii"))).toString("hex");
  let out = "0x";
  for (let i = 0; i < hex.length; i++) {
    const c = hex[i] as string;
    out += Number.parseInt(hash[i] as string, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

function byNonce(txs: readonly EvmTx[], encode: (tx: EvmTx) => WireValue): Map<string, WireValue> {
  const sorted = [...txs].sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
  return new Map(sorted.map((tx) => [tx.nonce.toString(10), encode(tx)]));
}

function bySender(txs: readonly EvmTx[], encode: (tx: EvmTx) => WireValue): Map<string, WireValue> {
  const groups = new Map<string, EvmTx[]>();
  for (const tx of txs) {
    const key = checksumAddress(tx.from);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [tx]);
    else list.push(tx);
  }
  return new Map([...groups].map(([k, list]) => [k, byNonce(list, encode)]));
}

const full = (tx: EvmTx) => encodeTransaction(tx, undefined);

/** geth's inspect line: "0xTo: 1 wei + 21000 gas × 2 wei". */
function summary(tx: EvmTx): string {
  const price = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
  const to = tx.to === undefined ? "contract creation" : toAddress(tx.to);
  return `${to}: ${tx.value} wei + ${tx.gasLimit} gas × ${price} wei`;
}

export const txpool = {
  content: method([], async (_, s) => {
    const c = await s.mempool.content();
    return { pending: bySender(c.pending, full), queued: bySender(c.queued, full) };
  }),
  contentFrom: method([p.address], async ([who], s) => {
    const c = await s.mempool.content();
    const mine = (txs: readonly EvmTx[]) => txs.filter((tx) => Buffer.compare(tx.from, who) === 0);
    return { pending: byNonce(mine(c.pending), full), queued: byNonce(mine(c.queued), full) };
  }),
  inspect: method([], async (_, s) => {
    const c = await s.mempool.content();
    return { pending: bySender(c.pending, summary), queued: bySender(c.queued, summary) };
  }),
  status: method([], async (_, s) => {
    const c = await s.mempool.content();
    return { pending: toQuantity(c.pending.length), queued: toQuantity(c.queued.length) };
  }),
} satisfies Namespace;
