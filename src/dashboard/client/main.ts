import "uplot/dist/uPlot.min.css";
import "./style.css";
import { Model, stepName } from "./model.js";
import { arr, call, EventStream, type JsonObject, num, obj, str } from "./rpc.js";
import { View } from "./view.js";

/**
 * The node's live dashboard (served at /dashboard when `[rpc] dashboard = true`). State comes from
 * the node RPC once at load and then by polling every 2 s (peers, mempool, sync state); height,
 * round, step, votes and blocks come as WebSocket events.
 */

const POLL_MS = 2000;
/** Blocks loaded at start for the charts (20 per blockchain call). */
const BACKFILL_BLOCKS = 300;
/** Blocks whose gas is loaded at start (one block_results call each). */
const BACKFILL_GAS = 15;

const model = new Model();
const root = document.getElementById("app");
if (root === null) throw new Error("no #app");
const view = new View(root, model);
let validatorsHash = "";

async function loadValidators(): Promise<void> {
  const all: JsonObject[] = [];
  let height = 0;
  for (let page = 1; page <= 100; page++) {
    const r = await call("validators", { page: String(page), per_page: "100" });
    height = num(r.block_height);
    for (const v of arr(r.validators)) all.push(obj(v));
    if (all.length >= num(r.total)) break;
  }
  model.applyValidators(height, all);
}

async function loadGas(height: number): Promise<void> {
  const r = await call("block_results", { height: String(height) });
  let gas = 0;
  for (const t of arr(r.txs_results)) gas += num(obj(t).gas_used);
  model.setGas(height, gas);
}

async function backfill(): Promise<void> {
  const status = await call("status");
  model.applyStatus(status);
  await loadValidators();
  const latest = num(obj(status.sync_info).latest_block_height);
  const from = Math.max(1, latest - BACKFILL_BLOCKS + 1);
  for (let max = latest; max >= from; max -= 20) {
    const r = await call("blockchain", { minHeight: String(Math.max(from, max - 19)), maxHeight: String(max) });
    model.applyBlockMetas(arr(r.block_metas));
  }
  if (latest > 0) {
    const c = await call("commit", { height: String(latest) });
    const commit = obj(obj(c.signed_header).commit);
    model.applyCommit(num(commit.height), arr(commit.signatures));
  }
  await poll();
  for (const b of model.blocks.slice(-BACKFILL_GAS)) if (b.gas === undefined) await loadGas(b.height);
}

let polling = false;
let polls = 0;
async function poll(): Promise<void> {
  if (polling) return;
  polling = true;
  try {
    const [dump, net, mempool] = await Promise.all([
      call("dump_consensus_state"),
      call("net_info"),
      call("num_unconfirmed_txs"),
    ]);
    model.applyDump(dump, net);
    model.applyMempool(mempool);
    if (++polls % 5 === 0) model.applyStatus(await call("status"));
  } finally {
    polling = false;
  }
}

function onEvent(e: { type: string; value: JsonObject }): void {
  switch (e.type) {
    case "NewBlock": {
      model.onNewBlock(e.value);
      const hash = str(obj(obj(e.value.block).header).validators_hash);
      if (validatorsHash !== "" && hash !== validatorsHash) void loadValidators().catch(report);
      validatorsHash = hash;
      break;
    }
    case "NewRound":
      model.onNewRound(e.value);
      break;
    case "RoundState":
    case "NewRoundStep":
      model.setRoundStep(num(e.value.height), num(e.value.round), stepName(e.value.step));
      break;
    case "Vote":
      model.onVote(obj(e.value.Vote));
      break;
  }
}

function report(err: unknown): void {
  console.warn("dashboard:", err);
}

new EventStream(
  ["tm.event='NewBlock'", "tm.event='NewRound'", "tm.event='NewRoundStep'", "tm.event='Vote'"],
  onEvent,
  (connected) => {
    model.connected = connected;
    model.touch();
    // Back after a disconnect: the node may have restarted; reload what events would have told.
    if (connected) void backfill().catch(report);
  },
);
setInterval(() => void poll().catch(report), POLL_MS);

function frame(): void {
  view.render();
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
