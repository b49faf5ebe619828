// The tx load: at a fixed rate, to a random running node. EVM: ETH transfers and ERC-20 calls signed
// with ethers from the ten dev accounts, sent with eth_sendRawTransaction (a few unmined txs per account
// at most, in nonce order); kvstore: key=value txs with broadcast_tx_sync. Every tx is tracked from
// its first submission to the block that holds it; one not mined a while after its last submission is
// sent again (the same bytes) to another node, as a wallet would.
import { readFileSync } from "node:fs";
import { getCreateAddress, HDNodeWallet, Interface, keccak256, Mnemonic, type Wallet } from "ethers";
import type { LoadSpec } from "./manifest.js";
import type { E2eNode } from "./nodeProcess.js";
import { type BlockInfo, sha256Hex } from "./observer.js";
import { cometRpc, ethRpc, RpcError } from "./rpc.js";

const DEV_MNEMONIC = "test test test test test test test test test test test junk";
const ERC20 = JSON.parse(readFileSync(new URL("../../data/erc20.json", import.meta.url), "utf8")) as {
  abi: string[];
  bytecode: string;
};
const TOKEN = new Interface(ERC20.abi);
const GWEI = 1_000_000_000n;

export type TxKind = "transfer" | "contract" | "deploy" | "kv";

export interface Submission {
  t: number;
  node: string;
  outcome: "accepted" | "rejected" | "unreachable";
  reason: string;
}

export interface TxRecord {
  id: number;
  kind: TxKind;
  /** 0x-hex bytes. */
  raw: string;
  /** sha256 of the bytes, upper-case hex (CometBFT's tx hash). */
  cometHash: string;
  /** keccak256 of the bytes (the Ethereum tx hash), evm only. */
  ethHash: string;
  from: number;
  nonce: number;
  submissions: Submission[];
  /** Heights of the blocks that hold it (filled from the observer's blocks; more than one is a bug). */
  minedHeights: number[];
}

/** Mempool answers to a resend of a tx it already has or already included: the tx is not rejected. */
const ALREADY = /already (exists|known|in)|tx already|known transaction|nonce too low/i;

export class TxLoad {
  readonly txs: TxRecord[] = [];
  readonly #byCometHash = new Map<string, TxRecord>();
  readonly #spec: LoadSpec;
  readonly #app: "evm" | "kvstore";
  readonly #targets: () => E2eNode[];
  readonly #now: () => number;
  readonly #rand: () => number;
  readonly #log: (line: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #resendTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  #resending = false;
  #seq = 0;
  // evm
  #wallets: Wallet[] = [];
  readonly #nonces: number[] = [];
  #chainId = 0n;
  #maxFee = 0n;
  #tokenAddress = "";
  #tokenReady = false;
  readonly #inflight: Set<TxRecord>[] = [];
  readonly #pending = new Set<Promise<void>>();

  constructor(
    spec: LoadSpec,
    app: "evm" | "kvstore",
    targets: () => E2eNode[],
    now: () => number,
    rand: () => number,
    log: (line: string) => void,
  ) {
    this.#spec = spec;
    this.#app = app;
    this.#targets = targets;
    this.#now = now;
    this.#rand = rand;
    this.#log = log;
  }

  /** Reads the chain id and gas price (evm), derives the accounts and starts sending. */
  async start(): Promise<void> {
    if (this.#app === "evm") {
      const node = this.#pick();
      if (node === undefined) throw new Error("no running node to send the load to");
      this.#chainId = BigInt(await ethRpc<string>(node.evmUrl, "eth_chainId", []));
      const gasPrice = BigInt(await ethRpc<string>(node.evmUrl, "eth_gasPrice", []));
      this.#maxFee = gasPrice * 4n > 10n * GWEI ? gasPrice * 4n : 10n * GWEI;
      const mnemonic = Mnemonic.fromPhrase(DEV_MNEMONIC);
      for (let i = 0; i < 10; i++) {
        this.#wallets.push(HDNodeWallet.fromMnemonic(mnemonic, `m/44'/60'/0'/0/${i}`) as unknown as Wallet);
        this.#nonces.push(0);
        this.#inflight.push(new Set());
      }
      this.#tokenAddress = getCreateAddress({ from: this.#wallets[0]?.address as string, nonce: 0 });
      await this.#send(await this.#evmTx("deploy", 0));
    }
    this.#timer = setInterval(() => this.#tick(), Math.max(5, Math.round(1000 / this.#spec.rate)));
    this.#resendTimer = setInterval(() => this.#resendDue(this.#spec.resendAfterMs), 1000);
  }

  /** Called with each new block: marks the txs it holds as mined. */
  onBlock(b: BlockInfo): void {
    for (const h of b.txs) {
      const rec = this.#byCometHash.get(h);
      if (rec === undefined) continue;
      rec.minedHeights.push(b.height);
      this.#inflight[rec.from]?.delete(rec);
      if (rec.kind === "deploy") this.#tokenReady = true;
    }
  }

  /** Stops new txs, then resends unmined ones until all are mined or `timeoutMs` passes. */
  async drain(timeoutMs: number): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    const end = Date.now() + timeoutMs;
    while (Date.now() < end && this.unmined().length > 0) {
      this.#resendDue(Math.min(this.#spec.resendAfterMs, 5000));
      await new Promise((r) => setTimeout(r, 1000));
    }
    clearInterval(this.#resendTimer);
    await Promise.all([...this.#pending]);
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#resendTimer);
  }

  unmined(): TxRecord[] {
    return this.txs.filter((t) => t.minedHeights.length === 0);
  }

  #pick(except?: string): E2eNode | undefined {
    const all = this.#targets();
    const others = all.filter((n) => n.name !== except);
    const from = others.length > 0 ? others : all;
    return from[Math.floor(this.#rand() * from.length)];
  }

  #tick(): void {
    if (this.#stopped) return;
    const p = (async () => {
      if (this.#app === "kvstore") {
        const id = this.#seq;
        const text = `e2e-${id}=${Math.floor(this.#rand() * 1e9)}`;
        const bytes = Buffer.from(text);
        await this.#send(this.#record("kv", `0x${bytes.toString("hex")}`, sha256Hex(bytes), "", -1, -1));
        return;
      }
      const contract = this.#tokenReady && this.#rand() < this.#spec.contractShare;
      // The account with the fewest unmined txs, if it has room.
      let best = -1;
      for (let i = 0; i < this.#wallets.length; i++) {
        if (best < 0 || (this.#inflight[i]?.size ?? 0) < (this.#inflight[best]?.size ?? 0)) best = i;
      }
      if (best < 0 || (this.#inflight[best]?.size ?? 0) >= this.#spec.inflightPerAccount) return;
      await this.#send(await this.#evmTx(contract ? "contract" : "transfer", best));
    })().catch((err: unknown) => this.#log(`load: ${(err as Error).message}`));
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }

  #record(kind: TxKind, raw: string, cometHash: string, ethHash: string, from: number, nonce: number): TxRecord {
    const rec: TxRecord = {
      id: this.#seq++,
      kind,
      raw,
      cometHash,
      ethHash,
      from,
      nonce,
      submissions: [],
      minedHeights: [],
    };
    this.txs.push(rec);
    this.#byCometHash.set(cometHash, rec);
    return rec;
  }

  async #evmTx(kind: "transfer" | "contract" | "deploy", account: number): Promise<TxRecord> {
    const w = this.#wallets[account] as Wallet;
    const nonce = this.#nonces[account] as number;
    this.#nonces[account] = nonce + 1;
    const to = `0x${Buffer.from(Array.from({ length: 20 }, () => Math.floor(this.#rand() * 256))).toString("hex")}`;
    let fields: { to?: string; value?: bigint; data?: string; gasLimit: bigint };
    if (kind === "deploy") fields = { data: ERC20.bytecode, gasLimit: 3_000_000n };
    else if (kind === "transfer") fields = { to, value: BigInt(1 + Math.floor(this.#rand() * 1e6)), gasLimit: 21_000n };
    else if (account === 0) {
      fields = { to: this.#tokenAddress, data: TOKEN.encodeFunctionData("transfer", [to, 1n]), gasLimit: 100_000n };
    } else {
      const amount = BigInt(1 + Math.floor(this.#rand() * 1000));
      fields = { to: this.#tokenAddress, data: TOKEN.encodeFunctionData("approve", [to, amount]), gasLimit: 100_000n };
    }
    const raw = await w.signTransaction({
      type: 2,
      chainId: this.#chainId,
      nonce,
      maxFeePerGas: this.#maxFee,
      maxPriorityFeePerGas: GWEI,
      ...fields,
    });
    const rec = this.#record(kind, raw, sha256Hex(Buffer.from(raw.slice(2), "hex")), keccak256(raw), account, nonce);
    this.#inflight[account]?.add(rec);
    return rec;
  }

  /** Submits to a random running node; an unreachable node is replaced by another, up to three tries. */
  async #send(rec: TxRecord): Promise<void> {
    let except: string | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const node = this.#pick(except);
      if (node === undefined) return;
      except = node.name;
      const sub = await this.#submitTo(rec, node);
      rec.submissions.push(sub);
      if (sub.outcome !== "unreachable") return;
    }
  }

  async #submitTo(rec: TxRecord, node: E2eNode): Promise<Submission> {
    const t = this.#now();
    try {
      if (this.#app === "evm") {
        await ethRpc<string>(node.evmUrl, "eth_sendRawTransaction", [rec.raw], 5000);
        return { t, node: node.name, outcome: "accepted", reason: "" };
      }
      const r = await cometRpc<{ code: number; log: string }>(node.rpcUrl, "broadcast_tx_sync", { tx: rec.raw }, 5000);
      if (r.code === 0) return { t, node: node.name, outcome: "accepted", reason: "" };
      return { t, node: node.name, outcome: "rejected", reason: r.log === "" ? `code ${r.code}` : r.log };
    } catch (err) {
      const answered = err instanceof RpcError && err.answered;
      const reason = (err as Error).message;
      return { t, node: node.name, outcome: answered ? "rejected" : "unreachable", reason };
    }
  }

  /** Sends again, in nonce order, each unmined tx whose last submission is older than `afterMs` (2 s after a failed one). */
  #resendDue(afterMs: number): void {
    if (this.#resending) return;
    const now = this.#now();
    const due = this.unmined()
      .filter((tx) => {
        const last = tx.submissions.at(-1);
        if (last === undefined) return true;
        const wait = last.outcome === "accepted" || ALREADY.test(last.reason) ? afterMs : 2000;
        return now - last.t >= wait;
      })
      .sort((a, b) => a.from - b.from || a.nonce - b.nonce || a.id - b.id);
    if (due.length === 0) return;
    this.#resending = true;
    const p = (async () => {
      for (const tx of due) await this.#send(tx);
    })().finally(() => {
      this.#resending = false;
    });
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }
}

/** The ALREADY pattern, for the checks: a rejection of a resend that only says "I have it". */
export function isAlreadyKnown(reason: string): boolean {
  return ALREADY.test(reason);
}
