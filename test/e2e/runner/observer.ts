// Watches the network while it runs: every running node's status (height, catching_up) a few times a
// second, the time each height was first seen on any node, each block once (hash, txs, evidence, the
// round and signers of the previous height's commit), and the validators' privval sign states.
import { createHash } from "node:crypto";
import type { E2eNode } from "./nodeProcess.js";
import { type BlockResult, cometRpc, type StatusResult } from "./rpc.js";

export const POLL_MS = 200;

export interface BlockInfo {
  height: number;
  hash: string;
  appHash: string;
  /** The header's validators hash (the set that signs this height). */
  validatorsHash: string;
  /** Header time, ms since the epoch. */
  timeMs: number;
  proposer: string;
  /** sha256 of each tx, upper-case hex (the CometBFT tx hash). */
  txs: string[];
  evidence: { type: string; value: unknown }[];
}

export interface CommitInfo {
  round: number;
  /** Validator addresses whose COMMIT signature is in the canonical commit. */
  signers: string[];
}

export interface SignState {
  t: number;
  height: number;
  round: number;
  step: number;
}

export interface NodeStatusSample {
  t: number;
  height: number;
  catchingUp: boolean;
}

export function rfc3339ToMs(s: string): number {
  return Date.parse(s.replace(/(\.\d{3})\d*Z$/, "$1Z"));
}

export function sha256Hex(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex").toUpperCase();
}

export class Observer {
  readonly #nodes: readonly E2eNode[];
  readonly #now: () => number;
  /** When each height was first seen on any node (ms since the run started). */
  readonly firstSeen = new Map<number, number>();
  readonly blocks = new Map<number, BlockInfo>();
  /** From block h+1's last_commit: the round height h was decided in and who signed it. */
  readonly commits = new Map<number, CommitInfo>();
  readonly status = new Map<string, NodeStatusSample>();
  readonly signStates = new Map<string, SignState[]>();
  maxHeight = 0;
  #fetched = 0;
  #timer: NodeJS.Timeout | undefined;
  #signTimer: NodeJS.Timeout | undefined;
  #polling = false;
  readonly #waiters = new Set<() => void>();
  readonly #blockListeners: ((b: BlockInfo) => void)[] = [];

  constructor(nodes: readonly E2eNode[], now: () => number) {
    this.#nodes = nodes;
    this.#now = now;
    for (const n of nodes) if (n.spec.isValidator) this.signStates.set(n.name, []);
  }

  start(): void {
    this.#timer = setInterval(() => void this.#poll(), POLL_MS);
    this.#signTimer = setInterval(() => this.sampleSignStates(), 1000);
  }

  stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#signTimer);
  }

  onBlock(f: (b: BlockInfo) => void): void {
    this.#blockListeners.push(f);
  }

  /** Reads every validator's priv_validator_state.json and records it when it changed. */
  sampleSignStates(): void {
    for (const n of this.#nodes) this.sampleSignState(n);
  }

  sampleSignState(n: E2eNode): void {
    const s = n.signState();
    const list = this.signStates.get(n.name);
    if (s === undefined || list === undefined) return;
    const last = list.at(-1);
    if (last !== undefined && last.height === s.height && last.round === s.round && last.step === s.step) return;
    list.push({ t: this.#now(), ...s });
  }

  /** Resolves when some node reports `height` (or `signal` aborts). */
  async waitForHeight(height: number, signal: AbortSignal): Promise<void> {
    while (this.maxHeight < height) {
      if (signal.aborted) throw signal.reason;
      await this.#nextChange(signal);
    }
  }

  /** Resolves at the first status of `node` taken after `since` that is not catching up and within one height of the network. */
  async waitCaughtUp(node: string, since: number, signal: AbortSignal): Promise<number> {
    for (;;) {
      const s = this.status.get(node);
      if (s !== undefined && s.t >= since && !s.catchingUp && s.height >= this.maxHeight - 1) return s.t;
      if (signal.aborted) throw signal.reason;
      await this.#nextChange(signal);
    }
  }

  #nextChange(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const running = this.#nodes.filter((n) => n.state === "running");
      await Promise.all(
        running.map(async (n) => {
          try {
            const s = await cometRpc<StatusResult>(n.rpcUrl, "status", {}, 1500);
            const height = Number(s.sync_info.latest_block_height);
            this.status.set(n.name, { t: this.#now(), height, catchingUp: s.sync_info.catching_up });
            if (height > this.maxHeight) {
              const t = this.#now();
              for (let h = this.maxHeight + 1; h <= height; h++) this.firstSeen.set(h, t);
              this.maxHeight = height;
            }
          } catch {
            // Starting, stopping or busy: the next poll asks again.
          }
        }),
      );
      await this.#fetchBlocks();
    } finally {
      this.#polling = false;
      for (const w of [...this.#waiters]) w();
    }
  }

  async #fetchBlocks(): Promise<void> {
    while (this.#fetched < this.maxHeight) {
      const h = this.#fetched + 1;
      const b = await this.fetchBlock(h);
      if (b === undefined) return;
      this.#fetched = h;
    }
  }

  /** Fetches block h from some running node that has it, records it and its commit of h-1. */
  async fetchBlock(h: number): Promise<BlockInfo | undefined> {
    const have = this.#nodes.filter((n) => n.state === "running" && (this.status.get(n.name)?.height ?? 0) >= h);
    for (const n of have) {
      try {
        const r = await cometRpc<BlockResult>(n.rpcUrl, "block", { height: String(h) }, 3000);
        const info = blockInfo(r);
        this.recordBlock(info, r);
        return info;
      } catch {
        // Try another node.
      }
    }
    return undefined;
  }

  recordBlock(info: BlockInfo, r: BlockResult): void {
    if (this.blocks.has(info.height)) return;
    this.blocks.set(info.height, info);
    if (info.height > 1) this.commits.set(info.height - 1, commitInfo(r.block.last_commit));
    for (const f of this.#blockListeners) f(info);
  }
}

export function blockInfo(r: BlockResult): BlockInfo {
  return {
    height: Number(r.block.header.height),
    hash: r.block_id.hash,
    appHash: r.block.header.app_hash,
    validatorsHash: r.block.header.validators_hash,
    timeMs: rfc3339ToMs(r.block.header.time),
    proposer: r.block.header.proposer_address,
    txs: (r.block.data.txs ?? []).map((t) => sha256Hex(Buffer.from(t, "base64"))),
    evidence: r.block.evidence.evidence ?? [],
  };
}

export function commitInfo(c: {
  round: number;
  signatures: { block_id_flag: number; validator_address: string }[];
}): CommitInfo {
  return {
    round: Number(c.round),
    signers: c.signatures.filter((s) => s.block_id_flag === 2).map((s) => s.validator_address.toUpperCase()),
  };
}
