import type { Common } from "@ethereumjs/common";
import {
  activePrecompiles,
  createAddress,
  type EngineLog,
  EngineTxError,
  executeCall,
  floorDataGas,
  intrinsicGas,
  type OpcodeStep,
  recoverAuthorization,
  type TxResult,
  type Word,
  toBig as wordToBig,
} from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { CallMemo } from "./callMemo.js";
import { COSMOS_PRECOMPILES } from "./cosmosPrecompiles.js";
import { checksumAddress, keccak256 } from "./crypto.js";
import { EvmCallError, GasEstimationError, StateUnavailableError } from "./errors.js";
import { type ExecBlockContext, joinHooks, TxExecutor } from "./executor.js";
import { baseFeeForHeight, baseFeeWei, nextBlockBaseFee } from "./feeMarket.js";
import type {
  AccessListEntry,
  CallArgs,
  CallBlockOverrides,
  CallOptions,
  CallResult,
  EvmAccountView,
  EvmLogView,
  EvmReader,
  EvmTxView,
  LogFilter,
  StateOverride,
} from "./readerTypes.js";
import {
  type ChainSettings,
  type EvmBlock,
  type EvmReceipt,
  equalBytes,
  setLengthLeft,
  stripZeros,
} from "./records.js";
import { type SimulatedBlock, type SimulateRequest, simulate } from "./simulate.js";
import type { EvmStateDb, StateReader } from "./stateDb.js";
import type { OverlayStateManager } from "./stateManager.js";
import { type StateProof, StateProver } from "./stateProof.js";
import type { EvmTracer } from "./tracer.js";
import { type DecodedTx, maxBig } from "./txDecode.js";

export interface EvmReaderDeps {
  db: EvmStateDb;
  common: () => Common;
  /** The Common txs are built with (see createTxCommon). */
  txCommon: () => Common;
  settings: () => ChainSettings | undefined;
  pendingNonce: (address: Uint8Array) => bigint;
  decode: (raw: Uint8Array) => DecodedTx;
  /** Dev chains: where a call's console.log lines go (undefined: not recorded). */
  consoleLog?: () => ((lines: string[]) => void) | undefined;
}

const DEFAULT_GAS_CAP = 25_000_000n;
const DEFAULT_CALL_TIMEOUT_MS = 5000;
const MAX_UINT64 = (1n << 64n) - 1n;
const TX_GAS = 21000n;
/** geth estimateGasErrorRatio. */
const ESTIMATE_ERROR_RATIO = 0.015;

function bloomMayContain(bloom: Uint8Array, hash: Uint8Array): boolean {
  for (let i = 0; i < 6; i += 2) {
    const bit = (((hash[i] as number) << 8) | (hash[i + 1] as number)) & 2047;
    const byte = 255 - Math.floor(bit / 8);
    if (((bloom[byte] as number) & (1 << (bit % 8))) === 0) return false;
  }
  return true;
}

export class EvmReaderImpl implements EvmReader {
  readonly #d: EvmReaderDeps;
  readonly #idle: TxExecutor[] = [];
  #lastContext: ExecBlockContext | undefined;
  /** Results of plain calls asked more than once, by height and arguments (callMemo.ts). */
  readonly #callMemo = new CallMemo();
  readonly #prover: StateProver;

  constructor(deps: EvmReaderDeps) {
    this.#d = deps;
    this.#prover = new StateProver(deps.db);
  }

  chainId(): bigint {
    return this.#d.common().chainId();
  }

  latestHeight(): number {
    return this.#d.db.latestHeight();
  }

  earliestStateHeight(): number {
    return this.#d.db.meta()?.earliestStateHeight ?? 0;
  }

  #reader(height?: number): StateReader {
    return this.#d.db.reader(height ?? this.latestHeight());
  }

  account(address: Uint8Array, height?: number): EvmAccountView {
    const a = this.#reader(height).account(address);
    return { exists: a.exists, nonce: a.nonce, balance: a.balance, codeHash: a.codeHash };
  }

  balance(address: Uint8Array, height?: number): bigint {
    return this.#reader(height).account(address).balance;
  }

  nonce(address: Uint8Array, height?: number): bigint {
    return this.#reader(height).account(address).nonce;
  }

  code(address: Uint8Array, height?: number): Uint8Array {
    const r = this.#reader(height);
    const a = r.account(address);
    return a.exists ? r.code(a.codeHash) : new Uint8Array(0);
  }

  storageAt(address: Uint8Array, slot: Uint8Array, height?: number): Uint8Array {
    const r = this.#reader(height);
    const a = r.account(address);
    return setLengthLeft(r.storage(address, a.incarnation, setLengthLeft(slot, 32)), 32);
  }

  async proof(address: Uint8Array, slots: readonly Uint8Array[], height?: number): Promise<StateProof> {
    const h = height ?? this.#d.db.latestHeight();
    this.#d.db.assertStateAvailable(h);
    return this.#prover.prove(
      address,
      slots.map((s) => setLengthLeft(s, 32)),
      h,
    );
  }

  pendingNonce(address: Uint8Array): bigint {
    return this.#d.pendingNonce(address);
  }

  block(height: number): EvmBlock | undefined {
    return this.#d.db.block(height);
  }

  blockStamp(height: number): { readonly hash: Uint8Array; readonly timestamp: bigint } | undefined {
    return this.#d.db.blockWithoutRoots(height);
  }

  blockByHash(hash: Uint8Array): EvmBlock | undefined {
    const h = this.#d.db.heightByBlockHash(hash);
    return h === undefined ? undefined : this.#d.db.block(h);
  }

  receipts(height: number): EvmReceipt[] {
    return this.#d.db.receipts(height);
  }

  receiptByHash(ethTxHash: Uint8Array): EvmReceipt | undefined {
    const loc = this.#d.db.txLocation(ethTxHash);
    return loc === undefined ? undefined : this.#d.db.receipt(loc.height, loc.index);
  }

  txLocation(ethTxHash: Uint8Array): { height: number; index: number } | undefined {
    return this.#d.db.txLocation(ethTxHash);
  }

  transaction(ethTxHash: Uint8Array): EvmTxView | undefined {
    const r = this.receiptByHash(ethTxHash);
    if (r === undefined) return undefined;
    const view = this.decodeTransaction(r.rawTx);
    const block = this.#d.db.blockWithoutRoots(r.height);
    view.location = { height: r.height, index: r.txIndex, blockHash: block?.hash ?? new Uint8Array(32) };
    return view;
  }

  decodeTransaction(raw: Uint8Array): EvmTxView {
    const d = this.#d.decode(raw);
    const tx = d.tx;
    const legacyPrice = d.type === 0 || d.type === 1;
    return {
      hash: d.hash,
      raw: d.raw,
      type: d.type,
      chainId: d.chainId,
      from: d.from,
      to: d.to,
      nonce: d.nonce,
      gasLimit: d.gasLimit,
      value: d.value,
      input: tx.data,
      gasPrice: legacyPrice ? d.maxFeePerGas : undefined,
      maxFeePerGas: legacyPrice ? undefined : d.maxFeePerGas,
      maxPriorityFeePerGas: legacyPrice ? undefined : d.maxPriorityFeePerGas,
      accessList:
        "accessList" in tx ? tx.accessList.map(([address, keys]) => ({ address, storageKeys: keys })) : undefined,
      authorizationList:
        "authorizationList" in tx
          ? tx.authorizationList.map((a) => ({
              chainId: toBig(a[0]),
              address: a[1],
              nonce: toBig(a[2]),
              yParity: Number(toBig(a[3])),
              r: toBig(a[4]),
              s: toBig(a[5]),
            }))
          : undefined,
      v: tx.v ?? 0n,
      r: tx.r ?? 0n,
      s: tx.s ?? 0n,
      location: undefined,
    };
  }

  logs(filter: LogFilter): EvmLogView[] {
    const out: EvmLogView[] = [];
    const addrs = filter.addresses ?? [];
    const topics = filter.topics ?? [];
    const addrSet = new Set(addrs.map((a) => bytesToHex(a)));
    // One emitter (the usual filter): compare bytes, no hex per log.
    const onlyAddr = addrs.length === 1 ? addrs[0] : undefined;
    const topicSets = topics.map((t) => (t === null || t.length === 0 ? null : new Set(t.map((x) => bytesToHex(x)))));
    const from = Math.max(filter.fromHeight, 0);
    const to = Math.min(filter.toHeight, this.latestHeight());
    for (let h = from; h <= to; h++) {
      const block = this.#d.db.blockWithoutRoots(h);
      if (block === undefined || block.txHashes.length === 0) continue;
      if (!this.#bloomMatches(block.logsBloom, addrs, topics)) continue;
      for (const r of this.#d.db.receiptLogs(h)) {
        for (const l of r.logs) {
          if (onlyAddr !== undefined) {
            if (!equalBytes(onlyAddr, l.address)) continue;
          } else if (addrSet.size > 0 && !addrSet.has(bytesToHex(l.address))) continue;
          if (topicSets.length > l.topics.length) continue;
          let ok = true;
          for (let i = 0; i < topicSets.length; i++) {
            const set = topicSets[i];
            if (set != null && !set.has(bytesToHex(l.topics[i] as Uint8Array))) {
              ok = false;
              break;
            }
          }
          if (!ok) continue;
          out.push({
            ...l,
            height: h,
            blockHash: block.hash,
            blockTimestamp: block.timestamp,
            txHash: r.txHash,
            txIndex: r.txIndex,
          });
          if (filter.limit !== undefined && out.length >= filter.limit) return out;
        }
      }
    }
    return out;
  }

  #bloomMatches(bloom: Uint8Array, addrs: Uint8Array[], topics: (Uint8Array[] | null)[]): boolean {
    if (addrs.length > 0 && !addrs.some((a) => bloomMayContain(bloom, keccak256(a)))) return false;
    for (const t of topics) {
      if (t === null || t.length === 0) continue;
      if (!t.some((x) => bloomMayContain(bloom, keccak256(x)))) return false;
    }
    return true;
  }

  baseFee(height: number): bigint | undefined {
    if (height === this.latestHeight() + 1) return this.nextBaseFee();
    const stored = this.#d.db.blockWithoutRoots(height)?.baseFee;
    if (stored !== undefined || height !== 0) return stored;
    // The genesis has no stored block: x/feemarket gives the block at enable_height (0) the
    // initial base fee, as Ethereum's genesis shows its baseFeePerGas.
    const s = this.#d.settings();
    const m = this.#d.db.meta();
    if (s === undefined || m === undefined) return undefined;
    const dec = baseFeeForHeight(0, s.feeMarket, m.feeMarket, s.maxGas);
    return dec === undefined ? undefined : baseFeeWei(dec);
  }

  nextBaseFee(): bigint {
    const s = this.#d.settings();
    const m = this.#d.db.meta();
    if (s === undefined || m === undefined) return 0n;
    return baseFeeWei(nextBlockBaseFee(m.height + 1, s.feeMarket, m.feeMarket, s.maxGas, m.nextBaseFee));
  }

  gasUsed(height: number): bigint | undefined {
    return this.#d.db.blockWithoutRoots(height)?.gasUsed;
  }

  // ---- calls --------------------------------------------------------------------------------------

  #executor(height: number): TxExecutor {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    return new TxExecutor(this.chainId(), this.#reader(height), this.#blockHash);
  }

  /** BLOCKHASH: stored CometBFT block hashes (zero when unknown). */
  readonly #blockHash = (n: bigint): Uint8Array => this.#d.db.blockHash(Number(n));

  #release(e: TxExecutor): void {
    e.overlay.deadline = undefined;
    e.takeConsoleLogs();
    if (this.#idle.length < 4) this.#idle.push(e);
  }

  #context(height: number): ExecBlockContext {
    const s = this.#d.settings();
    // A stored block never changes: its context is kept for the height asked most (the latest).
    const kept = this.#lastContext;
    if (kept !== undefined && kept.height === height) return { ...kept };
    const b = this.#d.db.blockWithoutRoots(height);
    if (b !== undefined) {
      const ctx = {
        height,
        timestamp: b.timestamp,
        coinbase: b.coinbase,
        baseFee: b.baseFee,
        gasLimit: b.gasLimit,
        hash: b.hash,
      };
      this.#lastContext = ctx;
      // A copy: callers set baseFee to 0 for priceless calls.
      return { ...ctx };
    }
    const gasLimit = s === undefined || s.maxGas <= 0n ? MAX_UINT64 : s.maxGas;
    return { height, timestamp: 0n, coinbase: new Uint8Array(20), baseFee: 0n, gasLimit, hash: new Uint8Array(32) };
  }

  /** Forgets memoized results and the kept block context (a dev chain rolled back: heights are reused). */
  forgetResults(): void {
    this.#callMemo.clear();
    this.#lastContext = undefined;
  }

  peekCall(args: CallArgs, opts: CallOptions = {}): CallResult | undefined {
    if (this.#d.consoleLog?.() !== undefined) return undefined;
    return this.#callMemo.peek(args, opts, opts.height ?? this.latestHeight());
  }

  keepCall(args: CallArgs, opts: CallOptions, result: CallResult): void {
    if (this.#d.consoleLog?.() !== undefined) return;
    const key = this.#callMemo.admit(args, opts, opts.height ?? this.latestHeight());
    if (key !== undefined) this.#callMemo.set(key, result);
  }

  async call(args: CallArgs, opts: CallOptions = {}): Promise<CallResult> {
    return this.callNow(args, opts);
  }

  callNow(args: CallArgs, opts: CallOptions = {}): CallResult {
    // A dev chain prints each call's console.log lines, so every call runs.
    const key =
      this.#d.consoleLog?.() === undefined
        ? this.#callMemo.admit(args, opts, opts.height ?? this.latestHeight())
        : undefined;
    if (key === undefined) return this.#run(args, opts, undefined);
    const kept = this.#callMemo.get(key);
    if (kept !== undefined) return kept;
    const result = this.#run(args, opts, undefined);
    this.#callMemo.set(key, result);
    return result;
  }

  async traceCall<T>(args: CallArgs, tracer: EvmTracer<T>, opts: CallOptions = {}): Promise<T> {
    const result = this.#run(args, opts, tracer);
    return tracer.result({
      gasUsed: result.gasUsed,
      failed: result.status !== "success",
      returnData: result.returnData,
      vmError: result.vmError,
    });
  }

  /**
   * Runs a call on cometh's EVM (engine/) over an overlay of the asked height: the checks geth's
   * eth_call makes (funds, intrinsic gas, fee fields), then executeCall; the deadline is checked every
   * few thousand jumps and at every call frame. Builds no transaction object and no VM. `tracer`
   * (debug_traceCall) gets its hooks on the state before the call and sees the state after it.
   */
  #run(args: CallArgs, opts: CallOptions, tracer: EvmTracer<unknown> | undefined): CallResult {
    const height = opts.height ?? this.latestHeight();
    const exec = this.#executor(height);
    try {
      const timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      const ctx = this.#context(height);
      if (opts.block !== undefined) applyBlockOverrides(ctx, opts.block);
      const zeroPrice =
        (args.gasPrice ?? 0n) === 0n && (args.maxFeePerGas ?? 0n) === 0n && (args.maxPriorityFeePerGas ?? 0n) === 0n;
      const feeCap = args.gasPrice ?? args.maxFeePerGas;
      // geth runs calls with NoBaseFee: a call that names no price pays nothing. Cosmos EVM's calls
      // and estimates never compare the fee cap with the base fee, so a price below it runs too
      // (paying that price), as when a wallet prices a legacy tx for the next, cheaper block.
      if (zeroPrice || (feeCap !== undefined && feeCap < ctx.baseFee)) ctx.baseFee = 0n;
      // A committed height's state already holds its EIP-2935 hash: no history write.
      exec.begin(ctx, this.#reader(height), 0n, false);
      const overlay = exec.overlay;
      applyOverrides(overlay, opts.overrides ?? []);
      overlay.timeoutMs = timeoutMs;
      overlay.deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
      const from = args.from ?? new Uint8Array(20);
      const cap = capOf(opts);
      let gas = args.gas ?? cap;
      // The gas cap bounds a call, not the block's gas limit (geth's and Cosmos EVM's eth_call).
      if (gas > cap) gas = cap;
      checkFeeFields(args, ctx.baseFee);
      const price = effectivePrice(args, ctx.baseFee);
      const acct = overlay.storedAccount(from);
      const value = args.value ?? 0n;
      const want = gas * price + value;
      if (acct.balance < want) {
        throw new EvmCallError(
          `insufficient funds for gas * price + value: address ${checksumAddress(from)} have ${acct.balance} want ${want}`,
        );
      }
      const data = args.data ?? new Uint8Array(0);
      const accessList = (args.accessList ?? []).map((e) => ({
        address: e.address,
        storageKeys: e.storageKeys.map((k) => setLengthLeft(k, 32)),
      }));
      const authorizations = (args.authorizationList ?? []).map((a) =>
        recoverAuthorization({ ...a, yParity: BigInt(a.yParity) }),
      );
      const min = maxBig(intrinsicGas(data, accessList, authorizations, args.to === undefined), floorDataGas(data));
      if (gas < min) throw new EvmCallError(`intrinsic gas too low: have ${gas}, want ${min}`);
      // A tracer starts on the state before the call, no gas bought yet (geth's OnTxStart).
      const hooks = tracer?.hooks({ from, to: args.to, coinbase: ctx.coinbase, gasLimit: gas, state: overlay });
      // geth buys the gas before the call runs (BALANCE of the sender sees it spent).
      if (price > 0n) overlay.setStoredAccount(from, { ...acct, balance: acct.balance - gas * price });
      const consoleSink = this.#d.consoleLog?.();
      if (consoleSink !== undefined) exec.enableConsoleLog();
      let r: TxResult;
      try {
        r = executeCall(
          overlay,
          {
            from,
            to: args.to,
            value,
            data,
            gasLimit: gas,
            gasPrice: price,
            accessList,
            authorizationList: authorizations,
          },
          exec.env,
          "prague",
          {
            interrupt: () => overlay.checkDeadline(),
            hooks: joinHooks(hooks, exec.consoleHooks),
            extensions: COSMOS_PRECOMPILES,
          },
        );
      } catch (err) {
        if (err instanceof EngineTxError) throw new EvmCallError(err.message, { cause: err });
        throw err;
      }
      if (price > 0n) {
        // ... and, as geth's state transition, refunds what was not used and pays the tip.
        const after = overlay.storedAccount(from);
        overlay.setStoredAccount(from, { ...after, balance: after.balance + (gas - r.gasUsed) * price });
        const tip = price - exec.env.baseFee;
        if (tip > 0n) {
          const cb = overlay.storedAccount(exec.env.coinbase);
          overlay.setStoredAccount(exec.env.coinbase, { ...cb, exists: true, balance: cb.balance + r.gasUsed * tip });
        }
      }
      tracer?.afterTx?.(overlay);
      const lines = exec.takeConsoleLogs();
      if (consoleSink !== undefined && lines.length > 0 && opts.quietConsole !== true) consoleSink(lines);
      return new CallOutcome(
        r.success ? "success" : r.error === "execution reverted" ? "reverted" : "failed",
        r.returnData,
        r.gasUsed,
        r.error,
        r.success ? r.logs : [],
      );
    } finally {
      this.#release(exec);
    }
  }

  async estimateGas(args: CallArgs, opts: CallOptions = {}): Promise<bigint> {
    const height = opts.height ?? this.latestHeight();
    const ctx = this.#context(height);
    const cap = capOf(opts);
    let hi = args.gas !== undefined && args.gas >= TX_GAS ? args.gas : ctx.gasLimit;
    if (hi > cap) hi = cap;
    const price = effectivePrice(args, ctx.baseFee);
    const overrideOf = (who: Uint8Array) => (opts.overrides ?? []).find((o) => equalBytes(o.address, who));
    if (price > 0n) {
      const from = args.from ?? new Uint8Array(20);
      const balance = overrideOf(from)?.balance ?? this.account(from, height).balance;
      const value = args.value ?? 0n;
      if (value > balance) throw new GasEstimationError("insufficient funds for transfer");
      const allowance = (balance - value) / price;
      if (hi > allowance) hi = allowance;
    }
    const attempt = async (gas: bigint, printConsole = false): Promise<CallResult | EvmCallError> => {
      try {
        return await this.call(
          { ...args, gas },
          { ...opts, height, gasCap: 0n, quietConsole: opts.quietConsole === true || !printConsole },
        );
      } catch (err) {
        if (err instanceof EvmCallError) return err;
        throw err;
      }
    };
    // Plain transfer to an account without code: 21000.
    if (args.to !== undefined && (args.data === undefined || args.data.length === 0)) {
      // The recipient's code as the call sees it (its state override, else the chain's).
      const code = overrideOf(args.to)?.code ?? this.code(args.to, height);
      if (code.length === 0) {
        const r = await attempt(TX_GAS);
        if (!(r instanceof EvmCallError) && r.status === "success") return TX_GAS;
      }
    }
    const top = await attempt(hi, true);
    if (top instanceof EvmCallError) {
      // geth's gasestimator wraps what stopped the call at the cap.
      if (/insufficient funds/.test(top.message)) throw new GasEstimationError(`failed with ${hi} gas: ${top.message}`);
      if (/intrinsic gas too low/.test(top.message))
        throw new GasEstimationError(`gas required exceeds allowance (${hi})`);
      throw new GasEstimationError(top.message);
    }
    if (top.status === "reverted") {
      throw new GasEstimationError("execution reverted", top.returnData);
    }
    if (top.status !== "success") {
      // geth's gasestimator: a failure other than running out of gas is the answer ("invalid opcode:
      // INVALID", a precompile's "invalid input length"); more gas would not help.
      if (top.vmError !== "" && top.vmError !== "out of gas") throw new GasEstimationError(top.vmError);
      throw new GasEstimationError(`gas required exceeds allowance (${hi})`);
    }
    let lo = top.gasUsed - 1n;
    // geth's optimistic guess: used gas plus the call stipend, with the 63/64 rule.
    const optimistic = ((top.gasUsed + 2300n) * 64n) / 63n;
    if (optimistic < hi) {
      const r = await attempt(optimistic);
      if (!(r instanceof EvmCallError) && r.status === "success") hi = optimistic;
      else lo = optimistic;
    }
    while (lo + 1n < hi) {
      if (Number(hi - lo) / Number(hi) < ESTIMATE_ERROR_RATIO) break;
      let mid = (hi + lo) / 2n;
      if (mid > lo * 2n) mid = lo * 2n;
      const r = await attempt(mid);
      if (!(r instanceof EvmCallError) && r.status === "success") hi = mid;
      else lo = mid;
    }
    return hi;
  }

  /**
   * eth_createAccessList (geth's AccessList): runs the call with an access-list tracer, again with the
   * list it found, until the list no longer changes. The sender, the recipient (or the created
   * address), the precompiles and the authorities of valid authorizations are left out, as geth does.
   */
  async createAccessList(
    args: CallArgs,
    opts: CallOptions = {},
  ): Promise<{ accessList: AccessListEntry[]; gasUsed: bigint; error?: string }> {
    const height = opts.height ?? this.latestHeight();
    const from = args.from ?? new Uint8Array(20);
    const override = (opts.overrides ?? []).find((o) => equalBytes(o.address, from));
    const nonce = override?.nonce ?? this.account(from, height).nonce;
    const to = args.to ?? createAddress(from, nonce);
    const excluded = new Set<string>([bytesToHex(from), bytesToHex(to)]);
    for (const p of activePrecompiles("prague", COSMOS_PRECOMPILES)) excluded.add(bytesToHex(p));
    const chainId = this.chainId();
    for (const a of args.authorizationList ?? []) {
      if ((a.chainId !== 0n && a.chainId !== chainId) || a.nonce >= (1n << 64n) - 1n) continue;
      const authority = recoverAuthorization({ ...a, yParity: BigInt(a.yParity) }).authority;
      if (authority !== undefined) excluded.add(bytesToHex(authority));
    }
    let list = sortedAccessList(accessListOf(args.accessList ?? [], excluded));
    for (let round = 0; ; round++) {
      const found = accessListOf(list, excluded);
      const tracer: EvmTracer<void> = {
        hooks: () => ({ onOpcode: (step) => recordAccess(step, found, excluded) }),
        result: () => undefined,
      };
      const result = this.#run({ ...args, accessList: list }, { ...opts, height }, tracer);
      const next = sortedAccessList(found);
      if (sameAccessList(next, list) || round >= MAX_ACCESS_LIST_ROUNDS) {
        return {
          accessList: list,
          gasUsed: result.gasUsed,
          ...(result.status === "success"
            ? {}
            : { error: result.vmError === "" ? "execution failed" : result.vmError }),
        };
      }
      list = next;
    }
  }

  // ---- simulation ---------------------------------------------------------------------------------

  simulate(req: SimulateRequest): SimulatedBlock[] {
    const latest = this.latestHeight();
    if (req.height > latest || req.height < this.earliestStateHeight()) {
      throw new StateUnavailableError(req.height, this.earliestStateHeight(), latest);
    }
    return simulate(
      {
        chainId: this.chainId(),
        state: (h) => this.#reader(h),
        header: (h) => {
          const b = this.#d.db.blockWithoutRoots(h);
          if (b !== undefined) {
            return {
              hash: b.hash,
              timestamp: b.timestamp,
              gasLimit: b.gasLimit,
              gasUsed: b.gasUsed,
              baseFee: b.baseFee,
              coinbase: b.coinbase,
            };
          }
          if (h < 0 || h > latest) return undefined;
          // The genesis state has no stored block: the context calls at that height run in.
          const ctx = this.#context(h);
          return {
            hash: ctx.hash,
            timestamp: ctx.timestamp,
            gasLimit: ctx.gasLimit,
            gasUsed: 0n,
            baseFee: ctx.baseFee,
            coinbase: ctx.coinbase,
          };
        },
        nextBaseFee: (h) => (h === latest ? this.nextBaseFee() : (this.baseFee(h + 1) ?? 0n)),
      },
      req,
    );
  }

  // ---- tracing ------------------------------------------------------------------------------------

  async traceTransaction<T>(
    ethTxHash: Uint8Array,
    tracer: EvmTracer<T>,
    opts: { timeoutMs?: number } = {},
  ): Promise<T> {
    const loc = this.#d.db.txLocation(ethTxHash);
    const settings = this.#d.settings();
    const block = loc === undefined ? undefined : this.#d.db.block(loc.height);
    if (loc === undefined || block === undefined || settings === undefined) {
      throw new EvmCallError(`transaction 0x${bytesToHex(ethTxHash)} not found`);
    }
    if (loc.height - 1 < this.earliestStateHeight()) {
      throw new StateUnavailableError(loc.height - 1, this.earliestStateHeight(), this.latestHeight());
    }
    const receipts = this.#d.db.receipts(loc.height);
    const exec = this.#executor(loc.height - 1);
    try {
      exec.begin(
        {
          height: block.height,
          timestamp: block.timestamp,
          coinbase: block.coinbase,
          baseFee: block.baseFee,
          gasLimit: block.gasLimit,
          hash: block.hash,
        },
        this.#d.db.reader(loc.height - 1),
        settings.feeMarket.minGasMultiplier,
      );
      const timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      exec.overlay.timeoutMs = timeoutMs;
      exec.overlay.deadline = timeoutMs > 0 ? performance.now() + timeoutMs : undefined;
      let logIndex = 0;
      for (const r of receipts) {
        const d = this.#d.decode(r.rawTx);
        if (r.txIndex !== loc.index) {
          exec.apply(d);
          logIndex += r.logs.length;
          continue;
        }
        const state = exec.overlay;
        const hooks = tracer.hooks({
          from: d.from,
          to: d.to,
          coinbase: block.coinbase,
          gasLimit: d.gasLimit,
          logIndex,
          state,
        });
        const o = exec.apply(d, hooks);
        if (o.kind === "invalid") throw new EvmCallError(o.error.message);
        tracer.afterTx?.(state);
        return tracer.result({
          gasUsed: o.gasUsed,
          failed: o.status === 0,
          returnData: o.returnData,
          vmError: o.vmError,
        });
      }
      throw new EvmCallError(`transaction 0x${bytesToHex(ethTxHash)} not found in block ${loc.height}`);
    } finally {
      this.#release(exec);
    }
  }
}

function toBig(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${bytesToHex(b)}`);
}

/** The fee-field checks geth's call arguments make (ToMessage). */
function checkFeeFields(args: CallArgs, baseFee: bigint): void {
  const from = args.from ?? new Uint8Array(20);
  if (args.gasPrice !== undefined && (args.maxFeePerGas !== undefined || args.maxPriorityFeePerGas !== undefined)) {
    throw new EvmCallError("both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
  }
  if (args.gasPrice !== undefined) return;
  const tip = args.maxPriorityFeePerGas ?? 0n;
  const maxFee = args.maxFeePerGas ?? (args.maxPriorityFeePerGas === undefined ? 0n : baseFee + tip);
  if (tip > maxFee) {
    throw new EvmCallError(
      `max priority fee per gas higher than max fee per gas: address ${checksumAddress(from)}, maxPriorityFeePerGas: ${tip}, maxFeePerGas: ${maxFee}`,
    );
  }
  if (args.authorizationList !== undefined && args.authorizationList.length > 0 && args.to === undefined) {
    throw new EvmCallError("EIP-7702 calls need a `to` address");
  }
}

function capOf(opts: CallOptions): bigint {
  const cap = opts.gasCap ?? DEFAULT_GAS_CAP;
  return cap === 0n ? (1n << 63n) - 1n : cap;
}

function effectivePrice(args: CallArgs, baseFee: bigint): bigint {
  if (args.gasPrice !== undefined) return args.gasPrice;
  const tip = args.maxPriorityFeePerGas ?? 0n;
  const maxFee = args.maxFeePerGas ?? (args.maxPriorityFeePerGas === undefined ? 0n : baseFee + tip);
  const p = baseFee + tip;
  return p < maxFee ? p : maxFee;
}

function applyOverrides(overlay: OverlayStateManager, overrides: StateOverride[]): void {
  for (const o of overrides) {
    const cur = overlay.storedAccount(o.address);
    let next = { ...cur, exists: true };
    if (o.balance !== undefined) next = { ...next, balance: o.balance };
    if (o.nonce !== undefined) next = { ...next, nonce: o.nonce };
    if (o.state !== undefined) next = { ...next, incarnation: next.incarnation + 1 };
    overlay.setStoredAccount(o.address, next);
    if (o.code !== undefined) overlay.setCode(o.address, o.code);
    for (const s of o.state ?? []) overlay.setStorageValue(o.address, setLengthLeft(s.slot, 32), stripZeros(s.value));
    for (const s of o.stateDiff ?? []) {
      overlay.setStorageValue(o.address, setLengthLeft(s.slot, 32), stripZeros(s.value));
    }
  }
}

/** geth repeats until the list is stable; a list that keeps growing stops after this many rounds. */
const MAX_ACCESS_LIST_ROUNDS = 32;

type AccessSets = Map<string, Set<string>>;

/** The entries of `list` not excluded, as address → slot sets (hex keys). */
function accessListOf(list: readonly AccessListEntry[], excluded: ReadonlySet<string>): AccessSets {
  const out: AccessSets = new Map();
  for (const e of list) {
    const key = bytesToHex(e.address);
    if (excluded.has(key)) continue;
    let slots = out.get(key);
    if (slots === undefined) {
      slots = new Set();
      out.set(key, slots);
    }
    for (const k of e.storageKeys) slots.add(bytesToHex(setLengthLeft(k, 32)));
  }
  return out;
}

/** geth's AccessListTracer.OnOpcode. */
function recordAccess(step: OpcodeStep, found: AccessSets, excluded: ReadonlySet<string>): void {
  const n = step.stackSize;
  const top = n >= 1 ? wordToBig(step.stack[n - 1] as Word) : 0n;
  const address = (v: bigint) => v.toString(16).padStart(64, "0").slice(24);
  const add = (addr: string) => {
    if (!found.has(addr)) found.set(addr, new Set());
  };
  switch (step.op) {
    case 0x54: // SLOAD
    case 0x55: // SSTORE
      if (n >= 1) {
        const addr = bytesToHex(step.address);
        add(addr);
        found.get(addr)?.add(top.toString(16).padStart(64, "0"));
      }
      return;
    case 0x3c: // EXTCODECOPY
    case 0x3f: // EXTCODEHASH
    case 0x3b: // EXTCODESIZE
    case 0x31: // BALANCE
    case 0xff: // SELFDESTRUCT
      if (n >= 1 && !excluded.has(address(top))) add(address(top));
      return;
    case 0xf4: // DELEGATECALL
    case 0xf1: // CALL
    case 0xfa: // STATICCALL
    case 0xf2: // CALLCODE
      if (n >= 5) {
        const addr = address(wordToBig(step.stack[n - 2] as Word));
        if (!excluded.has(addr)) add(addr);
      }
      return;
  }
}

/** geth's accessList(): addresses ascending, each with its slots ascending. */
function sortedAccessList(sets: AccessSets): AccessListEntry[] {
  return [...sets.keys()].sort().map((addr) => ({
    address: Buffer.from(addr, "hex") as Uint8Array,
    storageKeys: [...(sets.get(addr) as Set<string>)].sort().map((k) => Buffer.from(k, "hex") as Uint8Array),
  }));
}

function sameAccessList(a: readonly AccessListEntry[], b: readonly AccessListEntry[]): boolean {
  const ka = a.map((e) => `${bytesToHex(e.address)}:${[...e.storageKeys.map((k) => bytesToHex(k))].sort().join(",")}`);
  const kb = b.map((e) => `${bytesToHex(e.address)}:${[...e.storageKeys.map((k) => bytesToHex(k))].sort().join(",")}`);
  return ka.sort().join(";") === kb.sort().join(";");
}

/**
 * A call's result. The logs become plain records only when read: eth_call never reads them, and a
 * token loop leaves thousands whose topics would each become bytes. The getter is the class's, not an
 * object literal's (defining an accessor on every result cost ~1 µs a call); a structured clone sees
 * own fields only, so the read worker sends `plainCallResult` of it.
 */
class CallOutcome implements CallResult {
  readonly status: CallResult["status"];
  readonly returnData: Uint8Array;
  readonly gasUsed: bigint;
  readonly vmError: string;
  readonly #engineLogs: readonly EngineLog[];
  #logs: CallResult["logs"] | undefined;

  constructor(
    status: CallResult["status"],
    returnData: Uint8Array,
    gasUsed: bigint,
    vmError: string,
    engineLogs: readonly EngineLog[],
  ) {
    this.status = status;
    this.returnData = returnData;
    this.gasUsed = gasUsed;
    this.vmError = vmError;
    this.#engineLogs = engineLogs;
  }

  get logs(): CallResult["logs"] {
    this.#logs ??= this.#engineLogs.map((l) => ({ address: l.address, topics: l.topics, data: l.data }));
    return this.#logs;
  }

  /** JSON sees the logs too, as it did the plain result this replaced. */
  toJSON(): CallResult {
    return plainCallResult(this);
  }
}

/** A call result as own fields only (logs included), for a structured clone to another thread. */
export function plainCallResult(r: CallResult): CallResult {
  return { status: r.status, returnData: r.returnData, gasUsed: r.gasUsed, vmError: r.vmError, logs: r.logs };
}

/** geth's BlockOverrides.Apply on a call's block context (before a priceless call's base fee goes to 0). */
function applyBlockOverrides(ctx: ExecBlockContext, o: CallBlockOverrides): void {
  if (o.number !== undefined) ctx.height = Number(o.number);
  if (o.time !== undefined) ctx.timestamp = o.time;
  if (o.gasLimit !== undefined) ctx.gasLimit = o.gasLimit;
  if (o.coinbase !== undefined) ctx.coinbase = o.coinbase;
  if (o.prevRandao !== undefined) ctx.prevRandao = o.prevRandao;
  if (o.baseFee !== undefined) ctx.baseFee = o.baseFee;
  if (o.blobBaseFee !== undefined) ctx.blobBaseFee = o.blobBaseFee;
}
