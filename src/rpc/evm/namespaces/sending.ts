import { bytesEqual } from "../../../util/bytes.js";
import { TxSyncTimeoutError, type WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { toData } from "../encode/hex.js";
import { encodeReceipt } from "../encode/receipt.js";
import { methodNotFound, serverError } from "../errors.js";
import { type CallRequest, type DevKeyring, type EvmServices, TX_TYPE } from "../services.js";
import { signTransaction, type UnsignedTx } from "../tx/buildTx.js";
import { RawTxDecodeError, summarizeRawTx } from "../tx/rawTx.js";
import { estimateGas } from "./execution.js";

/**
 * Sending transactions: eth_sendRawTransaction's checks before CheckTx, the pending nonce, and
 * the dev keyring path (defaults as geth's setDefaults, sign, submit).
 */

/** The sender's next nonce including its executable mempool txs (what wallets ask with "pending"). */
export async function pendingNonce(address: Uint8Array, s: EvmServices): Promise<bigint> {
  let next = await s.state.nonce(address, s.chain.latestHeight());
  const { pending } = await s.mempool.content();
  for (const tx of pending) {
    if (bytesEqual(tx.from, address) && tx.nonce >= next) next = tx.nonce + 1n;
  }
  return next;
}

/** geth checkTxFee: gas × fee cap must stay under txfee-cap (0 = no cap). */
export function checkTxFee(gas: bigint, feeCap: bigint, capWei: bigint): void {
  if (capWei === 0n) return;
  const fee = gas * feeCap;
  if (fee <= capWei) return;
  const eth = (wei: bigint) => (Number(wei / 10n ** 12n) / 1e6).toFixed(2);
  throw serverError(`tx fee (${eth(fee)} ether) exceeds the configured cap (${eth(capWei)} ether)`);
}

/** eth_sendRawTransaction: admitted as below, then (dev chain automine) answered once its block is in. */
export async function submitRawTransaction(
  raw: Uint8Array,
  s: EvmServices,
  ctx: EvmCallContext,
  signer?: Uint8Array,
): Promise<string> {
  const hash = await admitRawTransaction(raw, s, ctx, signer);
  // A dev chain's automine: answer once the block holding the tx is committed (its receipt exists).
  if (s.dev !== undefined) await s.dev.afterSubmit(raw, hash);
  return toData(hash);
}

/**
 * Decode, EIP-155 and chain-id checks, fee cap, then CheckTx; the tx hash once the mempool took it.
 * `signer`: the keyring account that signed `raw` here (MempoolAccess.submit).
 */
async function admitRawTransaction(
  raw: Uint8Array,
  s: EvmServices,
  ctx: EvmCallContext,
  signer?: Uint8Array,
): Promise<Uint8Array> {
  let summary: ReturnType<typeof summarizeRawTx>;
  try {
    summary = summarizeRawTx(raw);
  } catch (err) {
    if (err instanceof RawTxDecodeError) throw serverError(err.message, err);
    throw err;
  }
  const settings = ctx.runtime.settings;
  const chainId = s.node.chainId();
  if (summary.chainId === undefined) {
    if (!settings.allowUnprotectedTxs) {
      throw serverError("only replay-protected (EIP-155) transactions allowed over RPC");
    }
  } else if (summary.chainId !== chainId) {
    throw serverError(`incorrect chain-id; expected ${chainId}, got ${summary.chainId}`);
  }
  checkTxFee(summary.gasLimit, summary.feeCap, settings.txFeeCapWei);
  const result = await s.mempool.submit(raw, signer);
  if (!result.accepted) throw serverError(result.log === "" ? `CheckTx failed with code ${result.code}` : result.log);
  return result.hash;
}

/** eth_sendRawTransactionSync's wait when the client names none, and the most it may ask (geth's defaults). */
export const TX_SYNC_DEFAULT_TIMEOUT_MS = 20_000;
export const TX_SYNC_MAX_TIMEOUT_MS = 60_000;

/** A whole number of milliseconds as Go's time.Duration prints it ("500ms", "1.5s", "1m0s"). */
export function formatGoDurationMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const restMs = ms - minutes * 60_000;
  const whole = Math.floor(restMs / 1000);
  const frac = restMs % 1000;
  const seconds = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, "0").replace(/0+$/, "")}`;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/**
 * eth_sendRawTransactionSync (EIP-7966): eth_sendRawTransaction, then the receipt once the tx is in a
 * block. The wait is the client's `timeoutMs` (0 or absent: 20 s; at most 60 s, geth's defaults); when
 * it passes, error 4 with the tx hash as data, in geth's words; the wait ends a second before the
 * server's http-timeout would answer for the request. On a dev chain with automine the block comes at
 * once and the same wait sees it. A rollback (evm_revert) or the node stopping while it waits ends
 * the call with a server error that says so.
 */
export async function sendRawTransactionSync(
  raw: Uint8Array,
  timeoutMs: number | undefined,
  s: EvmServices,
  ctx: EvmCallContext,
): Promise<WireValue> {
  let wait =
    timeoutMs === undefined || timeoutMs <= 0
      ? TX_SYNC_DEFAULT_TIMEOUT_MS
      : Math.min(timeoutMs, TX_SYNC_MAX_TIMEOUT_MS);
  // End before the server's own request deadline (http-timeout), so the client gets code 4 and the hash.
  const limit = ctx.runtime.settings.requestTimeoutMs;
  if (limit > 0 && wait > limit - 1000) wait = Math.max(limit - 1000, 1);
  // The node's one "tx included" wait, started before admission so that a block made at once
  // (automine) is not missed. Not submitRawTransaction: its automine wait is not bounded by this
  // call's timeout.
  const pending = s.events.waitForTx(raw, { timeoutMs: wait });
  let hash: Uint8Array;
  try {
    hash = await admitRawTransaction(raw, s, ctx);
  } catch (err) {
    pending.cancel();
    throw err;
  }
  const outcome = await pending.outcome;
  // Also when the block landed as the timer fired.
  const receipt = await s.chain.receiptByHash(hash);
  if (receipt !== undefined) return encodeReceipt(receipt);
  if (outcome.kind === "timeout") {
    throw new TxSyncTimeoutError(
      `The transaction was added to the transaction pool but wasn't processed in ${formatGoDurationMs(wait)}`,
      toData(hash),
    );
  }
  const why = outcome.kind === "included" ? `its block ${outcome.height} has no receipt for it` : outcome.reason;
  throw serverError(`The transaction was added to the transaction pool but no block included it: ${why}`);
}

/** The keyring, when unlocked access is allowed; otherwise geth/Cosmos EVM's errors. */
export function requireKeyring(s: EvmServices, ctx: EvmCallContext): DevKeyring {
  if (!ctx.runtime.settings.allowInsecureUnlock) throw serverError("account unlock with HTTP access is forbidden");
  if (s.keyring === undefined) {
    throw serverError("this node has no dev keyring: sign the transaction yourself and use eth_sendRawTransaction");
  }
  return s.keyring;
}

async function requireAccount(keyring: DevKeyring, address: Uint8Array | undefined): Promise<Uint8Array> {
  if (address === undefined) throw serverError('missing "from": name the dev keyring account that signs');
  const accounts = await keyring.accounts();
  if (!accounts.some((a) => bytesEqual(a, address))) {
    throw serverError(`unknown account ${toData(address)}: it is not in the node's dev keyring`);
  }
  return address;
}

/** geth TransactionArgs.setDefaults for a keyring-signed transaction. */
export async function fillTransaction(req: CallRequest, s: EvmServices, ctx: EvmCallContext): Promise<UnsignedTx> {
  const chainId = s.node.chainId();
  if (req.chainId !== undefined && req.chainId !== chainId) {
    throw serverError(`chainId does not match node's (have=${req.chainId}, want=${chainId})`);
  }
  if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
    throw serverError("both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
  }
  if (req.blobVersionedHashes !== undefined && req.blobVersionedHashes.length > 0) {
    throw serverError("transaction type not supported: blob transactions cannot be sent through the dev keyring");
  }
  if (req.authorizationList !== undefined && req.authorizationList.length > 0) {
    throw serverError("transaction type not supported: set-code transactions cannot be sent through the dev keyring");
  }
  const from = req.from as Uint8Array;
  const nonce = req.nonce ?? (await pendingNonce(from, s));
  const accessList = req.accessList ?? [];
  let fees: Pick<UnsignedTx, "type" | "gasPrice" | "maxFeePerGas" | "maxPriorityFeePerGas">;
  const baseFee = await s.fees.nextBaseFee();
  if (req.gasPrice !== undefined || (baseFee === undefined && req.maxFeePerGas === undefined)) {
    let gasPrice = req.gasPrice;
    if (gasPrice === undefined) {
      gasPrice = await s.fees.suggestTipCap();
      const min = await s.fees.minGasPrice();
      if (gasPrice < min) gasPrice = min;
    }
    fees = { type: req.accessList === undefined ? TX_TYPE.legacy : TX_TYPE.accessList, gasPrice };
  } else {
    const tip = req.maxPriorityFeePerGas ?? (await s.fees.suggestTipCap());
    const feeCap = req.maxFeePerGas ?? tip + 2n * (baseFee ?? 0n);
    if (feeCap < tip) throw serverError(`maxFeePerGas (${feeCap}) < maxPriorityFeePerGas (${tip})`);
    fees = { type: TX_TYPE.dynamicFee, maxFeePerGas: feeCap, maxPriorityFeePerGas: tip };
  }
  const priced: CallRequest = { ...req, nonce };
  if (fees.gasPrice !== undefined) priced.gasPrice = fees.gasPrice;
  if (fees.maxFeePerGas !== undefined) priced.maxFeePerGas = fees.maxFeePerGas;
  if (fees.maxPriorityFeePerGas !== undefined) priced.maxPriorityFeePerGas = fees.maxPriorityFeePerGas;
  // The estimate a send makes for itself prints no console.log lines (the mined tx does).
  const gasLimit = req.gas ?? (await estimateGas(priced, s.chain.latestHeight(), undefined, s, ctx, true));
  return {
    ...fees,
    chainId,
    nonce,
    gasLimit,
    to: req.to,
    value: req.value ?? 0n,
    data: req.data ?? new Uint8Array(0),
    accessList,
  };
}

/**
 * eth_sendUnsignedTransaction (Anvil, dev chains): sends from `from` without a signature, whatever
 * the impersonation settings; defaults filled as for eth_sendTransaction.
 */
export async function sendUnsigned(req: CallRequest, s: EvmServices, ctx: EvmCallContext): Promise<string> {
  const dev = s.dev;
  if (dev === undefined) throw methodNotFound(ctx.method, "it needs a dev chain: start one with `cometh dev`");
  if (req.from === undefined) throw serverError('missing "from": name the address the tx is sent from');
  const from = req.from;
  const unsigned = await fillTransaction({ ...req, from }, s, ctx);
  return toData(await dev.sendImpersonated({ ...unsigned, from }));
}

/** Fills, signs with the keyring and submits; returns the tx hash. */
export async function sendWithKeyring(req: CallRequest, s: EvmServices, ctx: EvmCallContext): Promise<string> {
  const dev = s.dev;
  if (dev !== undefined && req.from !== undefined && dev.isImpersonated(req.from)) {
    const keys = s.keyring === undefined ? [] : await s.keyring.accounts();
    // A dev key signs for its own address; an impersonated one is sent unsigned (Anvil, Hardhat).
    if (!keys.some((a) => bytesEqual(a, req.from as Uint8Array))) {
      const from = req.from;
      const unsigned = await fillTransaction({ ...req, from }, s, ctx);
      return toData(await dev.sendImpersonated({ ...unsigned, from }));
    }
  }
  const { from, raw } = await signedByKeyring(req, s, ctx);
  return submitRawTransaction(raw, s, ctx, from);
}

/**
 * eth_signTransaction (Anvil and geth; dev chains): signed as eth_sendTransaction signs, answered as the
 * signed tx's bytes (Anvil's answer, which ethers' and viem's JSON-RPC accounts read), sending nothing.
 */
export async function signWithKeyring(req: CallRequest, s: EvmServices, ctx: EvmCallContext): Promise<string> {
  return toData((await signedByKeyring(req, s, ctx)).raw);
}

/** The defaults filled (geth's setDefaults), the fee cap checked, signed by the dev keyring account `from`. */
async function signedByKeyring(
  req: CallRequest,
  s: EvmServices,
  ctx: EvmCallContext,
): Promise<{ from: Uint8Array; raw: Uint8Array }> {
  const keyring = requireKeyring(s, ctx);
  const from = await requireAccount(keyring, req.from);
  const unsigned = await fillTransaction({ ...req, from }, s, ctx);
  checkTxFee(unsigned.gasLimit, unsigned.gasPrice ?? unsigned.maxFeePerGas ?? 0n, ctx.runtime.settings.txFeeCapWei);
  return { from, raw: await signTransaction(unsigned, (digest) => keyring.signDigest(from, digest)) };
}

/** Signs a 32-byte digest with a keyring account; V as 27/28 (eth_sign convention). */
export async function signDigest27(
  s: EvmServices,
  ctx: EvmCallContext,
  address: Uint8Array,
  digest: Uint8Array,
): Promise<string> {
  const keyring = requireKeyring(s, ctx);
  await requireAccount(keyring, address);
  const sig = new Uint8Array(await keyring.signDigest(address, digest));
  sig[64] = (sig[64] ?? 0) + 27;
  return toData(sig);
}
