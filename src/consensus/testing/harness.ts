import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { KvStoreApplication } from "../../app/kvstore/index.js";
import { EventBus } from "../../events/index.js";
import { Mempool } from "../../mempool/index.js";
import { FilePV } from "../../privval/index.js";
import { BlockStore, type KvStore, openKvStore, openMemoryKvStore, StateStore } from "../../store/index.js";
import {
  addressFromPubKey,
  blockIdKey,
  defaultConsensusParams,
  type GenesisDoc,
  generateEd25519PrivKey,
  type PrivKey,
  pubKeyFromPrivKey,
  type Vote,
} from "../../types/index.js";
import { bytesToHex } from "../../util/bytes.js";
import type { ManualClock } from "../../util/clock.js";
import { ComethError } from "../../util/errors.js";
import { createLogger, type Logger, silentLogger } from "../../util/logger.js";
import { type Consensus, createConsensus } from "../consensus.js";
import { type ConsensusOptions, defaultConsensusOptions } from "../consensusState.js";
import type {
  ConsensusApp,
  ConsensusEventMap,
  EventPublisher,
  EvidencePoolAccess,
  EvidenceReporter,
  FailPointHook,
  Gossip,
  Signer,
} from "../deps.js";
import type { ConsensusMessage } from "../messages.js";

/** Test support: real store/mempool/kvstore/privval over in-memory databases and temp files. */

/** A test precondition that does not hold (src/ code never throws a bare Error). */
export class TestSetupError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** What a fail-point hook throws to simulate a crash (kill -9) at that point. */
export class SimulatedCrash extends ComethError {
  constructor(point: string) {
    super(`simulated crash at ${point}`);
  }
}

export function tempDir(prefix = "cometh-cs-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestChain {
  genesis: GenesisDoc;
  privKeys: PrivKey[];
}

export function makeTestChain(nVals: number, genesisTime: bigint, opts: { power?: bigint[] } = {}): TestChain {
  const privKeys = Array.from({ length: nVals }, (_, i) => generateEd25519PrivKey(new Uint8Array(32).fill(i + 1)));
  return {
    privKeys,
    genesis: {
      genesisTime,
      chainId: "test-chain-cs",
      initialHeight: 1,
      consensusParams: defaultConsensusParams(),
      validators: privKeys.map((k, i) => {
        const pubKey = pubKeyFromPrivKey(k);
        return { address: addressFromPubKey(pubKey), pubKey, power: opts.power?.[i] ?? 10n, name: `v${i}` };
      }),
      appHash: new Uint8Array(0),
      appState: undefined,
    },
  };
}

/** Records every published event (and forwards to a real EventBus). */
export class RecordingEvents implements EventPublisher {
  readonly bus = new EventBus();
  readonly log: { type: keyof ConsensusEventMap; data: unknown }[] = [];
  publish<K extends keyof ConsensusEventMap>(type: K, data: ConsensusEventMap[K]): void {
    this.log.push({ type, data });
    this.bus.publish(type, data as never);
  }
  types(): string[] {
    return this.log.map((e) => e.type);
  }
}

/** Durable storage of one node: survives a simulated crash (the process objects do not). */
export interface NodeDisk {
  dir: string;
  blockDb: KvStore;
  stateDb: KvStore;
  appDb: KvStore;
  privKey: PrivKey | undefined;
}

export function makeDisk(dir: string, privKey: PrivKey | undefined): NodeDisk {
  return { dir, blockDb: openMemoryKvStore(), stateDb: openMemoryKvStore(), appDb: openMemoryKvStore(), privKey };
}

/** A disk backed by real LMDB databases under `dir` (close them with closeDisk). */
export async function openLmdbDisk(dir: string, privKey: PrivKey | undefined): Promise<NodeDisk> {
  return {
    dir,
    blockDb: await openKvStore(join(dir, "blockstore.db", "data.mdb")),
    stateDb: await openKvStore(join(dir, "state.db", "data.mdb")),
    appDb: await openKvStore(join(dir, "kvstore.db", "data.mdb")),
    privKey,
  };
}

export async function closeDisk(disk: NodeDisk): Promise<void> {
  await Promise.all([disk.blockDb.close(), disk.stateDb.close(), disk.appDb.close()]);
}

export interface TestNode {
  consensus: Consensus;
  app: KvStoreApplication;
  mempool: Mempool;
  blockStore: BlockStore;
  stateStore: StateStore;
  events: RecordingEvents;
  signer: FilePV | undefined;
  disk: NodeDisk;
}

export interface StartNodeArgs {
  disk: NodeDisk;
  genesis: GenesisDoc;
  clock: ManualClock;
  options?: Partial<ConsensusOptions>;
  gossip?: Gossip;
  failPoint?: FailPointHook;
  /** Wraps the app (e.g. to count calls). */
  wrapApp?: (app: KvStoreApplication) => ConsensusApp;
  /** Every signature the node makes is recorded here (key: height/round/type). */
  signLog?: SignLog;
  /** Wraps the node's signer (e.g. one that fails while a remote signer is away). */
  wrapSigner?: (signer: Signer) => Signer;
  log?: Logger;
  /** Builds the node's evidence pool over its stores (reported conflicting votes, evidence in blocks). */
  evidencePool?: (stores: {
    blockStore: BlockStore;
    stateStore: StateStore;
    log: Logger;
  }) => EvidenceReporter & EvidencePoolAccess;
}

/** A logger that keeps every record's message (and err text) for assertions. */
export function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        const rec = JSON.parse(line) as { msg?: string; err?: unknown };
        lines.push(
          `${rec.msg ?? ""}${rec.err === undefined ? "" : ` ${typeof rec.err === "string" ? rec.err : JSON.stringify(rec.err)}`}`,
        );
      }
      cb();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines };
}

/** Signatures made, per height/round/type: more than one distinct block id for a key is a double sign. */
export class SignLog {
  readonly votes = new Map<string, Set<string>>();
  record(vote: Vote): void {
    const key = `${bytesToHex(vote.validatorAddress)}/${vote.height}/${vote.round}/${vote.type}`;
    const set = this.votes.get(key) ?? new Set<string>();
    set.add(blockIdKey(vote.blockId));
    this.votes.set(key, set);
  }
  conflicts(): string[] {
    return [...this.votes.entries()].filter(([, ids]) => ids.size > 1).map(([k]) => k);
  }
}

function recordingSigner(pv: FilePV, log: SignLog): Signer {
  return {
    pubKey: () => pv.pubKey(),
    address: () => pv.address(),
    signProposal: (chainId, p) => pv.signProposal(chainId, p),
    signVote: async (chainId, v) => {
      const signed = await pv.signVote(chainId, v);
      log.record(signed);
      return signed;
    },
  };
}

function wrapSigner(pv: FilePV, args: StartNodeArgs): Signer {
  const signer = args.signLog ? recordingSigner(pv, args.signLog) : pv;
  return args.wrapSigner ? args.wrapSigner(signer) : signer;
}

/** Builds a node's process objects over its disk, runs the handshake; does not start consensus. */
export async function createTestNode(args: StartNodeArgs): Promise<TestNode> {
  const level = process.env.CS_TEST_LOG;
  const log = args.log ?? (level ? createLogger({ level, destination: 1 }) : silentLogger());
  const { disk } = args;
  const app = KvStoreApplication.open(disk.appDb, { log });
  const mempool = new Mempool(
    {
      size: 5000,
      maxTxsBytes: 1 << 30,
      maxTxBytes: 1 << 20,
      cacheSize: 10000,
      keepInvalidTxsInCache: false,
      recheck: true,
    },
    { app, log },
  );
  const blockStore = new BlockStore(disk.blockDb);
  const stateStore = new StateStore(disk.stateDb);
  const events = new RecordingEvents();
  const evidencePool = args.evidencePool?.({ blockStore, stateStore, log });
  let signer: FilePV | undefined;
  if (disk.privKey !== undefined) {
    const keyPath = join(disk.dir, "priv_validator_key.json");
    const statePath = join(disk.dir, "priv_validator_state.json");
    try {
      signer = await FilePV.load(keyPath, statePath);
    } catch {
      signer = await FilePV.generate(keyPath, statePath, disk.privKey);
    }
  }
  const options: ConsensusOptions = {
    ...defaultConsensusOptions(join(disk.dir, "cs.wal", "wal")),
    timeoutProposeMs: 3000,
    timeoutCommitMs: 1000,
    ...args.options,
  };
  const consensus = await createConsensus(options, {
    app: args.wrapApp ? args.wrapApp(app) : app,
    blockStore,
    stateStore,
    mempool,
    events,
    genesis: args.genesis,
    ...(signer === undefined ? {} : { signer: wrapSigner(signer, args) }),
    clock: args.clock,
    log,
    ...(args.gossip === undefined ? {} : { gossip: args.gossip }),
    ...(args.failPoint === undefined ? {} : { failPoint: args.failPoint }),
    ...(evidencePool === undefined ? {} : { evidence: evidencePool, evidencePool }),
  });
  return { consensus, app, mempool, blockStore, stateStore, events, signer, disk };
}

/** An in-memory, fully connected gossip network; nodes can be cut off. */
export class MemoryNetwork {
  readonly #nodes = new Map<string, Consensus>();
  readonly #down = new Set<string>();
  /** Optional filter: return false to drop a message. */
  filter: ((from: string, to: string, msg: ConsensusMessage) => boolean) | undefined;

  gossipFor(id: string): Gossip {
    return {
      broadcast: (msg) => {
        for (const [to, node] of this.#nodes) if (to !== id) this.#deliver(id, to, node, msg);
      },
      sendTo: (peerId, msg) => {
        const node = this.#nodes.get(peerId);
        if (node !== undefined) this.#deliver(id, peerId, node, msg);
      },
    };
  }

  #deliver(from: string, to: string, node: Consensus, msg: ConsensusMessage): void {
    if (!this.#nodes.has(from) || this.#down.has(from) || this.#down.has(to)) return;
    if (this.filter !== undefined && !this.filter(from, to, msg)) return;
    node.receivePeerMessage(from, msg);
  }

  /** Registers a node and connects it to every other one (both directions). */
  join(id: string, node: Consensus): void {
    this.#nodes.set(id, node);
    for (const [other, n] of this.#nodes) {
      if (other === id) continue;
      n.addPeer(id, `${id}@127.0.0.1:26656`);
      node.addPeer(other, `${other}@127.0.0.1:26656`);
    }
  }

  leave(id: string): void {
    this.#nodes.delete(id);
    for (const n of this.#nodes.values()) n.removePeer(id);
  }

  setDown(id: string, isDown: boolean): void {
    if (isDown) this.#down.add(id);
    else this.#down.delete(id);
  }
}

/** Waits until every node has nothing queued or in progress (microtasks and I/O included). */
export async function settle(nodes: readonly Consensus[]): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    await Promise.all(nodes.map((n) => n.idle()));
    // Let queued microtasks (kick) and I/O callbacks run, then check again.
    await new Promise((r) => setImmediate(r));
    if (nodes.every((n) => n.isIdle())) return;
  }
  throw new TestSetupError("nodes never settled");
}

/** Alternates settling and advancing the manual clock until `done()` or `maxMs` elapses. */
export async function runUntil(
  nodes: readonly Consensus[],
  clock: ManualClock,
  done: () => boolean,
  opts: { stepMs?: number; maxMs?: number } = {},
): Promise<void> {
  const step = opts.stepMs ?? 100;
  const max = opts.maxMs ?? 120_000;
  for (let t = 0; ; t += step) {
    await settle(nodes);
    if (done()) return;
    if (t >= max) {
      const halted = nodes.map((n) => n.haltError()).find((e) => e !== undefined);
      const rs = nodes.map((n) => n.roundStateView()).map((r) => `${r.height}/${r.round}/${r.step}`);
      throw new TestSetupError(`condition not reached within ${max} ms of manual time (at ${rs.join(", ")})`, {
        cause: halted,
      });
    }
    clock.advance(step);
  }
}

export function heightOf(n: { consensus: Consensus }): number {
  return n.consensus.chainState().lastBlockHeight;
}
