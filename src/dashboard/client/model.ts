import { arr, type Json, type JsonObject, num, obj, str } from "./rpc.js";

/** What the page knows, built from RPC answers and events; view.ts draws it. */

export type VoteMark = "block" | "nil" | "none";
/** A validator's signature in a block's last commit: commit, nil, absent, or not known yet. */
export type CommitMark = "commit" | "nil" | "absent" | "unknown";

export interface ValidatorInfo {
  readonly index: number;
  /** Upper-case hex, as the RPC writes it. */
  readonly address: string;
  readonly power: number;
}

export interface RoundVotes {
  readonly height: number;
  readonly round: number;
  /** Validator address → mark. */
  readonly prevotes: Map<string, VoteMark>;
  readonly precommits: Map<string, VoteMark>;
}

export interface BlockRow {
  readonly height: number;
  /** Block time, ms since the epoch. */
  readonly timeMs: number;
  readonly txs: number;
  /** Gas used by the block's txs; undefined until known. */
  gas: number | undefined;
  /** Seconds since the previous block; undefined for the first one known. */
  interval: number | undefined;
  readonly proposer: string;
  readonly sizeBytes: number;
}

export interface PeerRow {
  readonly id: string;
  readonly moniker: string;
  readonly address: string;
  readonly outbound: boolean;
  readonly height: number;
  readonly round: number;
  readonly step: number;
  readonly sendRate: number;
  readonly recvRate: number;
}

/** Blocks kept for the table and the charts. */
export const MAX_BLOCKS = 600;
/** Blocks a validator's missed count looks back over. */
export const MISS_WINDOW = 100;

export const STEP_NAMES = [
  "",
  "NewHeight",
  "NewRound",
  "Propose",
  "Prevote",
  "PrevoteWait",
  "Precommit",
  "PrecommitWait",
  "Commit",
] as const;

/** "RoundStepPrevote" or 4 → "Prevote". */
export function stepName(step: Json | undefined): string {
  if (typeof step === "number") return STEP_NAMES[step] ?? String(step);
  return str(step).replace(/^RoundStep/, "");
}

/** A dump_consensus_state vote string: `Vote{<index>:<addr> <h>/<r>/<type> <hash fingerprint> …}`. */
const VOTE_TEXT = /^Vote\{(\d+):[0-9A-F]+ \d+\/\d+\/\S+ ([0-9A-F]+) /;

export class Model {
  chainId = "";
  moniker = "";
  nodeId = "";
  version = "";
  catchingUp = false;
  connected = false;
  height = 0;
  round = 0;
  step = "";
  proposer = "";
  validators: ValidatorInfo[] = [];
  validatorsHeight = 0;
  totalPower = 0;
  readonly votes = new Map<string, RoundVotes>();
  /** The last height the node moved past, and its last round: shown until the new round has votes. */
  lastCompleted: { height: number; round: number } | undefined;
  /** Height whose commit `commitMarks` describes (block H's last_commit is for H-1). */
  commitHeight = 0;
  readonly commitMarks = new Map<string, CommitMark>();
  /** Per validator: heights of their recent absences (within MISS_WINDOW of commitHeight). */
  readonly misses = new Map<string, number[]>();
  blocks: BlockRow[] = [];
  peers: PeerRow[] = [];
  /** This node's height when `peers` was read (peers are compared with it, not with the live height). */
  peersAtHeight = 0;
  mempoolTxs = 0;
  mempoolBytes = 0;
  /** Last time (ms) something changed; the view redraws on changes only. */
  version_ = 0;

  touch(): void {
    this.version_++;
  }

  roundVotes(height: number, round: number): RoundVotes {
    const key = `${height}/${round}`;
    let rv = this.votes.get(key);
    if (rv === undefined) {
      rv = { height, round, prevotes: new Map(), precommits: new Map() };
      this.votes.set(key, rv);
    }
    return rv;
  }

  /** The round the grid shows: the current one once it has votes, the last completed one until then. */
  shownRound(): { votes: RoundVotes; live: boolean } {
    const cur = this.votes.get(`${this.height}/${this.round}`);
    const hasVotes = cur !== undefined && (cur.prevotes.size > 0 || cur.precommits.size > 0);
    if (hasVotes || this.lastCompleted === undefined)
      return { votes: this.roundVotes(this.height, this.round), live: true };
    return { votes: this.roundVotes(this.lastCompleted.height, this.lastCompleted.round), live: false };
  }

  // ---- RPC answers

  applyStatus(r: JsonObject): void {
    const info = obj(r.node_info);
    const sync = obj(r.sync_info);
    this.chainId = str(info.network);
    this.moniker = str(info.moniker);
    this.nodeId = str(info.id);
    this.version = str(info.version);
    this.catchingUp = sync.catching_up === true;
    this.touch();
  }

  applyValidators(height: number, list: Json[]): void {
    this.validators = list.map((v, index) => {
      const o = obj(v);
      return { index, address: str(o.address), power: num(o.voting_power) };
    });
    this.validatorsHeight = height;
    this.totalPower = this.validators.reduce((s, v) => s + v.power, 0);
    this.touch();
  }

  /** dump_consensus_state: height/round/step, the proposer, every round's votes, the peers' round states. */
  applyDump(r: JsonObject, netInfo: JsonObject | undefined): void {
    const rs = obj(r.round_state);
    const h = num(rs.height);
    const round = num(rs.round);
    // Events are newer than a poll's answer: the dump only moves the page to a later height or round.
    if (this.height === 0 || h > this.height || (h === this.height && round > this.round)) {
      this.setRoundStep(h, round, stepName(rs.step));
    }
    if (h === this.height && round === this.round) {
      const proposer = obj(obj(rs.validators).proposer);
      if (str(proposer.address) !== "") this.proposer = str(proposer.address);
    }
    const vals = arr(obj(rs.validators).validators).map((v) => str(obj(v).address));
    for (const rv of arr(rs.votes)) {
      const o = obj(rv);
      const votes = this.roundVotes(h, num(o.round));
      this.#applyVoteTexts(votes.prevotes, arr(o.prevotes), vals);
      this.#applyVoteTexts(votes.precommits, arr(o.precommits), vals);
    }
    this.peersAtHeight = h;
    const infos = new Map<string, JsonObject>();
    for (const p of arr(obj(netInfo).peers)) {
      const o = obj(p);
      infos.set(str(obj(o.node_info).id), o);
    }
    this.peers = arr(r.peers).map((p) => {
      const o = obj(p);
      const address = str(o.node_address);
      const id = address.split("@")[0] ?? "";
      const prs = obj(obj(o.peer_state).round_state);
      const ni = infos.get(id);
      const cs = obj(ni?.connection_status);
      return {
        id,
        moniker: str(obj(ni?.node_info).moniker),
        address: address.split("@")[1] ?? "",
        outbound: ni?.is_outbound === true,
        height: num(prs.height),
        round: num(prs.round),
        step: num(prs.step),
        sendRate: num(obj(cs.SendMonitor).AvgRate),
        recvRate: num(obj(cs.RecvMonitor).AvgRate),
      };
    });
    this.touch();
  }

  #applyVoteTexts(into: Map<string, VoteMark>, texts: Json[], vals: string[]): void {
    texts.forEach((t, i) => {
      const m = VOTE_TEXT.exec(str(t));
      const address = vals[i];
      if (m === null || address === undefined) return;
      into.set(address, /^0+$/.test(m[2] ?? "") ? "nil" : "block");
    });
  }

  applyMempool(r: JsonObject): void {
    this.mempoolTxs = num(r.total);
    this.mempoolBytes = num(r.total_bytes);
    this.touch();
  }

  /** blockchain's block_metas (any order): merged into the block list. */
  applyBlockMetas(metas: Json[]): void {
    for (const m of metas) {
      const o = obj(m);
      const header = obj(o.header);
      this.#addBlock({
        height: num(header.height),
        timeMs: Date.parse(str(header.time)),
        txs: num(o.num_txs),
        gas: undefined,
        interval: undefined,
        proposer: str(header.proposer_address),
        sizeBytes: num(o.block_size),
      });
    }
    this.touch();
  }

  setGas(height: number, gas: number): void {
    const b = this.blocks.find((x) => x.height === height);
    if (b !== undefined) b.gas = gas;
    this.touch();
  }

  #addBlock(row: BlockRow): void {
    if (this.blocks.some((b) => b.height === row.height)) return;
    this.blocks.push(row);
    this.blocks.sort((a, b) => a.height - b.height);
    if (this.blocks.length > MAX_BLOCKS) this.blocks.splice(0, this.blocks.length - MAX_BLOCKS);
    for (let i = 0; i < this.blocks.length; i++) {
      const b = this.blocks[i] as BlockRow;
      const prev = this.blocks[i - 1];
      b.interval = prev !== undefined && prev.height === b.height - 1 ? (b.timeMs - prev.timeMs) / 1000 : b.interval;
    }
  }

  // ---- events

  setRoundStep(height: number, round: number, step: string): void {
    if (height > this.height && this.height > 0) {
      this.lastCompleted = { height: this.height, round: this.round };
    }
    if (height < this.height) return;
    this.height = height;
    this.round = round;
    this.step = step;
    for (const key of [...this.votes.keys()]) {
      const h = Number(key.split("/")[0]);
      if (h < height - 2) this.votes.delete(key);
    }
    this.touch();
  }

  onVote(v: JsonObject): void {
    const height = num(v.height);
    if (height < this.height - 1) return;
    const rv = this.roundVotes(height, num(v.round));
    const hash = str(obj(v.block_id).hash);
    const mark: VoteMark = hash === "" ? "nil" : "block";
    const into = num(v.type) === 1 ? rv.prevotes : rv.precommits;
    into.set(str(v.validator_address), mark);
    this.touch();
  }

  onNewRound(v: JsonObject): void {
    this.setRoundStep(num(v.height), num(v.round), stepName(v.step));
    const proposer = obj(v.proposer);
    if (str(proposer.address) !== "") this.proposer = str(proposer.address);
    this.touch();
  }

  /** NewBlock: the block row (with its gas from the FinalizeBlock results) and its last commit's signers. */
  onNewBlock(v: JsonObject): void {
    const block = obj(v.block);
    const header = obj(block.header);
    const height = num(header.height);
    let gas = 0;
    for (const r of arr(obj(v.result_finalize_block).tx_results)) gas += num(obj(r).gas_used);
    this.#addBlock({
      height,
      timeMs: Date.parse(str(header.time)),
      txs: arr(obj(block.data).txs).length,
      gas,
      interval: undefined,
      proposer: str(header.proposer_address),
      sizeBytes: 0,
    });
    const lastCommit = obj(block.last_commit);
    const sigs = arr(lastCommit.signatures);
    if (sigs.length > 0) this.applyCommit(num(lastCommit.height), sigs);
    this.touch();
  }

  /** A commit's signatures (block_id_flag 1 absent, 2 commit, 3 nil), in validator-set order. */
  applyCommit(height: number, sigs: Json[]): void {
    if (height <= this.commitHeight) return;
    this.commitHeight = height;
    this.commitMarks.clear();
    sigs.forEach((s, i) => {
      const o = obj(s);
      const flag = num(o.block_id_flag);
      // Absent signatures carry no address: they are placed by index in the validator set.
      const address = str(o.validator_address) || this.validators[i]?.address || "";
      if (address === "") return;
      const mark: CommitMark = flag === 2 ? "commit" : flag === 3 ? "nil" : "absent";
      this.commitMarks.set(address, mark);
      if (mark === "absent") {
        const list = this.misses.get(address) ?? [];
        list.push(height);
        this.misses.set(address, list);
      }
    });
    for (const [address, list] of this.misses) {
      const kept = list.filter((h) => h > height - MISS_WINDOW);
      if (kept.length === 0) this.misses.delete(address);
      else this.misses.set(address, kept);
    }
  }
}
