import type { JsonNode } from "../../jsonrpc/index.js";
import type { EvmCallContext, SubscriptionSink } from "../context.js";
import { encodeHeader } from "../encode/block.js";
import { toData } from "../encode/hex.js";
import { encodeLog } from "../encode/receipt.js";
import { encodeTransaction } from "../encode/transaction.js";
import { invalidParams, notImplemented, notificationsUnsupported, unknownSubscription } from "../errors.js";
import { logMatches } from "../filters/match.js";
import { newRpcId } from "../ids.js";
import { ParamError, p } from "../params.js";
import type { EvmServices } from "../services.js";

/**
 * eth_subscribe / eth_unsubscribe over WebSocket (geth's eth filter API): newHeads (the same
 * header as eth_getBlockByNumber, so hashes agree), logs (address/topics; from/to ignored as in
 * geth and Cosmos EVM), newPendingTransactions (hashes, or full txs with `true`). Notifications
 * start after the subscription id has been sent. Closing the socket cancels everything.
 */

function decodeOption<T>(decode: (n: JsonNode) => T, node: JsonNode): T {
  try {
    return decode(node);
  } catch (err) {
    if (err instanceof ParamError) throw invalidParams(`invalid argument 1: ${err.message}`);
    throw err;
  }
}

function start(sink: SubscriptionSink, id: string, listen: () => () => void): string {
  let stop: (() => void) | undefined;
  let cancelled = false;
  sink.subscriptions.set(id, {
    cancel: () => {
      cancelled = true;
      stop?.();
    },
  });
  sink.afterReply(() => {
    if (!cancelled) stop = listen();
  });
  return id;
}

export function subscribe(kind: string, options: JsonNode | undefined, s: EvmServices, ctx: EvmCallContext): string {
  const sink = ctx.sink;
  if (sink === undefined) throw notificationsUnsupported();
  const feed = ctx.runtime.feed;
  const id = newRpcId();
  switch (kind) {
    case "newHeads":
      // geth: newHeads takes no argument after its name.
      if (options !== undefined) throw invalidParams("too many arguments, want at most 1");
      return start(sink, id, () => feed.onBlock((e) => sink.notify(id, encodeHeader(e.block)), { withLogs: false }));
    case "logs": {
      const criteria = options === undefined ? undefined : decodeOption(p.filter.decode, options);
      const addresses = criteria?.addresses ?? [];
      const topics = criteria?.topics ?? [];
      return start(sink, id, () =>
        feed.onBlock(
          (e) => {
            for (const log of e.logs) if (logMatches(log, addresses, topics)) sink.notify(id, encodeLog(log));
          },
          { withLogs: true },
        ),
      );
    }
    case "newPendingTransactions": {
      const fullTx = options === undefined ? false : decodeOption(p.bool.decode, options);
      let chain: Promise<void> = Promise.resolve();
      return start(sink, id, () =>
        feed.onPendingTransaction((hash) => {
          if (!fullTx) {
            sink.notify(id, toData(hash));
            return;
          }
          // Keep notifications in arrival order while the tx objects load.
          chain = chain.then(
            async () => {
              const tx = await s.mempool.transactionByHash(hash);
              if (tx !== undefined) sink.notify(id, encodeTransaction(tx, undefined));
            },
            () => undefined,
          );
        }),
      );
    }
    case "syncing":
      throw notImplemented(`eth_subscribe("syncing")`, "CometBFT nodes have no sync subscription; poll eth_syncing");
    default:
      throw unknownSubscription(kind);
  }
}

/** true when the id was live on this connection; false otherwise (Cosmos EVM: no error). */
export function unsubscribe(id: string, ctx: EvmCallContext): boolean {
  const live = ctx.sink?.subscriptions.get(id);
  if (live === undefined) return false;
  ctx.sink?.subscriptions.delete(id);
  live.cancel();
  return true;
}
