import type { CheckTxResponse } from "../../types/abci.js";
import { errorText, InternalError, type WireValue } from "../jsonrpc/index.js";
import type { CometCallContext } from "./context.js";
import { EMPTY_EXEC_TX_RESULT, encodeCheckTxJsonpb, encodeExecTxResultJsonpb } from "./encode/abci.js";
import { hex, i64 } from "./encode/wire.js";
import type { CometServices } from "./services.js";
import { checkSubscriptionLimits } from "./subscriptions.js";

/** broadcast_tx_async / _sync / _commit (rpc/core/mempool.go). */

function checkTxFailure(err: unknown, prefix = ""): InternalError {
  return new InternalError(`${prefix}${errorText(err)}`, { cause: err });
}

/** ResultBroadcastTx: `data` is HexBytes here, unlike check_tx. */
function encodeBroadcastResult(res: Pick<CheckTxResponse, "code" | "data" | "log" | "codespace">, hash: Uint8Array) {
  return { code: res.code, data: hex(res.data), log: res.log, codespace: res.codespace, hash: hex(hash) };
}

/**
 * Returns once the mempool has taken the tx for checking. The mempool's pre-checks (cache, size,
 * full) fail synchronously or on the first turn of the event loop; the app's verdict is not awaited.
 */
export async function broadcastTxAsync(tx: Uint8Array, services: CometServices): Promise<WireValue> {
  const pending = services.mempool.checkTx(tx);
  const early = await Promise.race([
    pending.then(
      () => undefined,
      (err: unknown) => ({ err }),
    ),
    new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
  ]);
  if (early !== undefined) throw checkTxFailure(early.err);
  pending.catch(() => undefined);
  return encodeBroadcastResult({ code: 0, data: new Uint8Array(0), log: "", codespace: "" }, services.types.txHash(tx));
}

export async function broadcastTxSync(tx: Uint8Array, services: CometServices): Promise<WireValue> {
  let res: CheckTxResponse;
  try {
    res = await services.mempool.checkTx(tx);
  } catch (err) {
    throw checkTxFailure(err);
  }
  return encodeBroadcastResult(res, services.types.txHash(tx));
}

function commitResult(check: CheckTxResponse, txResult: WireValue, hash: Uint8Array, height: number): WireValue {
  return { check_tx: encodeCheckTxJsonpb(check), tx_result: txResult, hash: hex(hash), height: i64(height) };
}

/**
 * Starts waiting for the tx's block before CheckTx (as CometBFT subscribes to its Tx event first),
 * then waits for inclusion or `timeout_broadcast_tx_commit`. The wait is the node's one "tx included"
 * primitive (services.txWaits); it counts as one of the client's subscriptions, as CometBFT's does.
 */
export async function broadcastTxCommit(
  tx: Uint8Array,
  services: CometServices,
  ctx: CometCallContext,
): Promise<WireValue> {
  const subscriber = ctx.remoteAddr;
  checkSubscriptionLimits(services, ctx, subscriber);
  const hash = services.types.txHash(tx);
  // libs/pubsub refuses a second subscription of one client to the same tx's query.
  if (services.txWaits.isWaiting(subscriber, tx))
    throw new InternalError("failed to subscribe to tx: already subscribed");
  const wait = services.txWaits.waitOutcome(tx, {
    timeoutMs: ctx.runtime.settings.timeoutBroadcastTxCommitMs,
    owner: subscriber,
  });
  let check: CheckTxResponse;
  try {
    check = await services.mempool.checkTx(tx);
  } catch (err) {
    wait.cancel();
    throw checkTxFailure(err, "error on broadcastTxCommit: ");
  }
  if (check.code !== 0) {
    wait.cancel();
    return commitResult(check, encodeExecTxResultJsonpb(EMPTY_EXEC_TX_RESULT), hash, 0);
  }
  const outcome = await wait.outcome;
  if (outcome.kind === "timeout") throw new InternalError("timed out waiting for tx to be included in a block");
  if (outcome.kind !== "included") throw new InternalError(`txSub was canceled (reason: ${outcome.reason})`);
  return commitResult(check, encodeExecTxResultJsonpb(outcome.result), hash, outcome.height);
}
