import { Charts } from "./charts.js";
import { type BlockRow, type CommitMark, MISS_WINDOW, type Model, STEP_NAMES, type VoteMark } from "./model.js";

/** Draws the model into the page. Built once; each render updates text and attributes in place. */

const SHOWN_BLOCKS = 15;
/** Above this many validators the grid uses small cells without labels. */
const COMPACT_ABOVE = 32;

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function short(hex: string, n = 6): string {
  return hex.length > n ? `${hex.slice(0, n)}…` : hex;
}

/** At most 12 names, then how many more (a 100-validator set stays readable). */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, 12).map(esc).join(", ");
  return names.length > 12 ? `${shown} and ${names.length - 12} more` : shown;
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function fmtTime(ms: number): string {
  const d = new Date(ms);
  const p = (x: number, w = 2) => String(x).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`missing #${id}`);
  return el as T;
}

const PAGE = `
<header class="top">
  <div class="brand"><span class="logo">◆</span> cometh <span class="muted">dashboard</span></div>
  <div class="node" id="node"></div>
  <div class="badges"><span id="conn" class="badge"></span><span id="sync" class="badge"></span></div>
</header>
<section class="hrs">
  <div class="stat big"><label>Height</label><b id="height" data-testid="height">–</b></div>
  <div class="stat big"><label>Round</label><b id="round">–</b></div>
  <div class="stat big"><label>Step</label><b id="step">–</b></div>
  <div class="steps" id="steps"></div>
  <div class="stat"><label>Proposer</label><b id="proposer" class="mono">–</b></div>
  <div class="stat"><label>Mempool</label><b id="mempool">–</b></div>
  <div class="stat"><label>Peers</label><b id="npeers">–</b></div>
</section>
<section class="panel">
  <h2>Validators <span id="vote-caption" class="muted"></span></h2>
  <div class="tally" id="tally"></div>
  <div class="grid" id="grid"></div>
  <div class="legend">
    <span><i class="sw block"></i>voted for the block</span>
    <span><i class="sw nil"></i>voted nil</span>
    <span><i class="sw none"></i>no vote yet</span>
    <span><i class="sw absent"></i>missing (no vote / absent from the last commit)</span>
    <span><i class="sw proposer"></i>proposer</span>
    <span class="muted">top half: prevote · bottom half: precommit · bar: signed the last commit</span>
  </div>
  <div class="missing" id="missing"></div>
</section>
<section class="two">
  <div class="panel"><h2>Block interval <span class="muted">(s, last 5 minutes)</span></h2><div id="chart-interval" class="chart"></div></div>
  <div class="panel"><h2>Throughput <span class="muted">(tx/s, 5-block window)</span></h2><div id="chart-tps" class="chart"></div></div>
</section>
<section class="two">
  <div class="panel"><h2>Last blocks</h2>
    <table><thead><tr><th>height</th><th>time</th><th>txs</th><th>gas</th><th>interval</th><th>proposer</th></tr></thead>
    <tbody id="blocks"></tbody></table>
  </div>
  <div class="panel"><h2>Peers</h2>
    <table><thead><tr><th>peer</th><th>address</th><th>height</th><th>round</th><th>step</th><th>in/out</th><th>send/recv</th></tr></thead>
    <tbody id="peers"></tbody></table>
  </div>
</section>
<footer class="muted">Fed by this node's RPC (status, validators, dump_consensus_state, net_info, num_unconfirmed_txs, blockchain, block_results) and its WebSocket events (NewBlock, NewRound, NewRoundStep, Vote).</footer>
`;

const STEP_PILLS = ["Propose", "Prevote", "Precommit", "Commit"] as const;

export class View {
  readonly #model: Model;
  readonly #charts: Charts;
  #gridKey = "";
  #cells: HTMLElement[] = [];
  #drawn = -1;
  #chartsDrawnAt = 0;
  #chartsVersion = -1;

  constructor(root: HTMLElement, model: Model) {
    this.#model = model;
    root.innerHTML = PAGE;
    byId("steps").innerHTML = STEP_PILLS.map((s) => `<span class="pill" data-step="${s}">${s}</span>`).join("");
    this.#charts = new Charts(byId("chart-interval"), byId("chart-tps"));
  }

  /** Redraws what changed since the last call; charts at most once a second. */
  render(): void {
    const m = this.#model;
    if (m.version_ !== this.#drawn) {
      this.#drawn = m.version_;
      this.#header();
      this.#grid();
      this.#blocks();
      this.#peers();
    }
    const now = performance.now();
    if (this.#chartsVersion !== m.version_ && now - this.#chartsDrawnAt > 1000) {
      this.#chartsVersion = m.version_;
      this.#chartsDrawnAt = now;
      this.#charts.update(m.blocks);
    }
  }

  #header(): void {
    const m = this.#model;
    byId("node").innerHTML =
      m.chainId === ""
        ? ""
        : `<b>${esc(m.moniker)}</b> <span class="mono muted">${esc(short(m.nodeId, 12))}</span> · chain <b>${esc(m.chainId)}</b> · v${esc(m.version)}`;
    const conn = byId("conn");
    conn.textContent = m.connected ? "live" : "reconnecting";
    conn.className = `badge ${m.connected ? "ok" : "bad"}`;
    const sync = byId("sync");
    sync.textContent = m.catchingUp ? "block syncing" : "in consensus";
    sync.className = `badge ${m.catchingUp ? "warn" : "ok"}`;
    sync.dataset.syncing = String(m.catchingUp);
    byId("height").textContent = m.height > 0 ? fmtInt(m.height) : "–";
    byId("height").dataset.height = String(m.height);
    byId("round").textContent = String(m.round);
    byId("step").textContent = m.step || "–";
    byId("step").dataset.step = m.step;
    const stepIndex = STEP_NAMES.indexOf(m.step as (typeof STEP_NAMES)[number]);
    for (const pill of byId("steps").children) {
      const s = (pill as HTMLElement).dataset.step ?? "";
      const pillIndex = STEP_NAMES.indexOf(s as (typeof STEP_NAMES)[number]);
      const active =
        s === m.step ||
        (s === "Prevote" && m.step === "PrevoteWait") ||
        (s === "Precommit" && m.step === "PrecommitWait");
      pill.className = `pill${active ? " active" : stepIndex > pillIndex ? " done" : ""}`;
    }
    const proposer = m.validators.find((v) => v.address === m.proposer);
    byId("proposer").textContent = m.proposer === "" ? "–" : `#${proposer?.index ?? "?"} ${short(m.proposer)}`;
    byId("mempool").textContent = `${fmtInt(m.mempoolTxs)} txs · ${fmtBytes(m.mempoolBytes)}`;
    byId("npeers").textContent = String(m.peers.length);
  }

  #grid(): void {
    const m = this.#model;
    const grid = byId("grid");
    const key = m.validators.map((v) => v.address).join(",");
    if (key !== this.#gridKey) {
      this.#gridKey = key;
      grid.classList.toggle("compact", m.validators.length > COMPACT_ABOVE);
      grid.innerHTML = m.validators
        .map(
          (v) =>
            `<div class="val" data-index="${v.index}" data-address="${esc(v.address)}"><span class="pv"></span><span class="pc"></span><span class="lc"></span><span class="idx">${v.index}</span></div>`,
        )
        .join("");
      this.#cells = [...grid.children] as HTMLElement[];
    }
    const { votes, live } = m.shownRound();
    byId("vote-caption").textContent =
      `· height ${fmtInt(votes.height)}, round ${votes.round} ${live ? "(in progress)" : "(finished)"}${m.commitHeight > 0 ? ` · last commit: height ${fmtInt(m.commitHeight)}` : ""}`;
    let prevotePower = 0;
    let precommitPower = 0;
    let prevotes = 0;
    let precommits = 0;
    const missing: string[] = [];
    const notYet: string[] = [];
    for (const v of m.validators) {
      const cell = this.#cells[v.index];
      if (cell === undefined) continue;
      const pv: VoteMark = votes.prevotes.get(v.address) ?? "none";
      const pc: VoteMark = votes.precommits.get(v.address) ?? "none";
      const lc: CommitMark = m.commitMarks.get(v.address) ?? "unknown";
      if (pv !== "none") {
        prevotes++;
        prevotePower += v.power;
      }
      if (pc !== "none") {
        precommits++;
        precommitPower += v.power;
      }
      const missed = m.misses.get(v.address)?.length ?? 0;
      const isMissing = lc === "absent" || (!live && pc === "none");
      if (isMissing) missing.push(`#${v.index} ${short(v.address)}`);
      else if (live && (pv === "none" || pc === "none")) notYet.push(`#${v.index}`);
      cell.dataset.prevote = pv;
      cell.dataset.precommit = pc;
      cell.dataset.commit = lc;
      cell.dataset.missing = String(isMissing);
      cell.dataset.proposer = String(v.address === m.proposer);
      cell.title =
        `#${v.index} ${v.address}\npower ${fmtInt(v.power)}` +
        `\nprevote: ${pv} · precommit: ${pc}\nlast commit: ${lc}` +
        `\nmissed ${missed} of the last ${MISS_WINDOW} blocks`;
    }
    const pct = (p: number) => (m.totalPower > 0 ? Math.round((p / m.totalPower) * 100) : 0);
    const n = m.validators.length;
    byId("tally").innerHTML =
      `<span>prevotes <strong>${prevotes}/${n}</strong> (${pct(prevotePower)}% power)</span>` +
      `<span>precommits <strong>${precommits}/${n}</strong> (${pct(precommitPower)}% power)</span>` +
      `<span>total power <strong>${fmtInt(m.totalPower)}</strong></span>`;
    const miss = byId("missing");
    miss.innerHTML =
      (missing.length > 0 ? `<span class="bad-text">Missing (${missing.length}): ${listed(missing)}</span>` : "") +
      (notYet.length > 0 ? `<span class="muted">Not voted yet this round: ${listed(notYet)}</span>` : "");
    miss.dataset.missing = missing.length.toString();
  }

  #blocks(): void {
    const m = this.#model;
    const rows = m.blocks.slice(-SHOWN_BLOCKS).reverse();
    byId("blocks").innerHTML = rows
      .map((b: BlockRow) => {
        const proposer = m.validators.find((v) => v.address === b.proposer);
        return (
          `<tr data-height="${b.height}"><td>${fmtInt(b.height)}</td><td>${fmtTime(b.timeMs)}</td><td>${fmtInt(b.txs)}</td>` +
          `<td>${b.gas === undefined ? "…" : fmtInt(b.gas)}</td><td>${b.interval === undefined ? "–" : `${b.interval.toFixed(3)} s`}</td>` +
          `<td class="mono">${proposer === undefined ? "" : `#${proposer.index} `}${esc(short(b.proposer))}</td></tr>`
        );
      })
      .join("");
  }

  #peers(): void {
    const m = this.#model;
    byId("peers").innerHTML =
      m.peers.length === 0
        ? `<tr><td colspan="7" class="muted">no peers</td></tr>`
        : m.peers
            .map((p) => {
              const behind = m.peersAtHeight - p.height;
              return (
                `<tr data-peer="${esc(p.id)}"><td><b>${esc(p.moniker || short(p.id, 10))}</b> <span class="mono muted">${esc(short(p.id, 8))}</span></td>` +
                `<td class="mono">${esc(p.address)}</td><td class="${behind > 1 ? "bad-text" : ""}">${fmtInt(p.height)}</td>` +
                `<td>${p.round}</td><td>${esc(STEP_NAMES[p.step] ?? String(p.step))}</td><td>${p.outbound ? "out" : "in"}</td>` +
                `<td>${fmtBytes(p.sendRate)}/s · ${fmtBytes(p.recvRate)}/s</td></tr>`
              );
            })
            .join("");
  }
}
