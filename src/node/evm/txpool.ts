import { type EvmReader, type EvmTxView, keccak256, txKey } from "../../app/evm/index.js";
import type { Mempool } from "../../mempool/index.js";
import type { EvmTx, MempoolAccess, SubmitResult } from "../../rpc/evm/index.js";
import type { EvmFeed } from "./feed.js";

/** The RPC's `mempool` (eth_sendRawTransaction, txpool_*): sends through CheckTx, reads the waiting txs. */
export class EvmTxPoolAdapter implements MempoolAccess {
  readonly #mempool: Mempool;
  readonly #reader: EvmReader;
  readonly #feed: EvmFeed;

  /** The app's EvmApplication.hintSender: CheckTx takes a known signer instead of recovering it. */
  readonly #hintSender: ((key: string, sender: Uint8Array) => void) | undefined;

  constructor(
    mempool: Mempool,
    reader: EvmReader,
    feed: EvmFeed,
    hintSender?: (key: string, sender: Uint8Array) => void,
  ) {
    this.#mempool = mempool;
    this.#reader = reader;
    this.#feed = feed;
    this.#hintSender = hintSender;
  }

  async submit(raw: Uint8Array, signer?: Uint8Array): Promise<SubmitResult> {
    let res: { code: number; log: string };
    if (signer !== undefined) this.#hintSender?.(txKey(raw), signer);
    try {
      res = await this.#mempool.checkTx(raw);
    } catch (err) {
      // Pre-CheckTx refusals: duplicate in cache, too large, mempool full.
      const msg = err instanceof Error ? err.message : String(err);
      return { accepted: false, code: -1, log: msg === "tx already exists in cache" ? "already known" : msg };
    }
    if (res.code !== 0) return { accepted: false, code: res.code, log: res.log };
    const hash = keccak256(raw);
    this.#feed.pendingTransaction(hash);
    return { accepted: true, hash };
  }

  /** Per sender, in nonce order: the run from the committed nonce on is pending, the rest (after a gap) queued. */
  content(): { pending: EvmTx[]; queued: EvmTx[] } {
    const bySender = new Map<string, EvmTxView[]>();
    for (const tx of this.#waiting()) {
      const k = Buffer.from(tx.from).toString("hex");
      const list = bySender.get(k) ?? [];
      list.push(tx);
      bySender.set(k, list);
    }
    const pending: EvmTx[] = [];
    const queued: EvmTx[] = [];
    for (const list of bySender.values()) {
      list.sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
      const first = list[0];
      if (first === undefined) continue;
      let next = this.#reader.nonce(first.from);
      for (const tx of list) {
        if (tx.nonce === next) {
          pending.push(tx);
          next++;
        } else {
          queued.push(tx);
        }
      }
    }
    return { pending, queued };
  }

  transactionByHash(hash: Uint8Array): EvmTx | undefined {
    return this.#waiting().find((t) => Buffer.from(t.hash).equals(Buffer.from(hash)));
  }

  /** The mempool's Ethereum txs, decoded. */
  #waiting(): EvmTxView[] {
    const out: EvmTxView[] = [];
    for (const raw of this.#mempool.txs()) {
      try {
        out.push(this.#reader.decodeTransaction(raw));
      } catch {
        // Not an Ethereum tx (cannot be admitted by the EVM app); skip.
      }
    }
    return out;
  }
}
