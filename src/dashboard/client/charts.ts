import uPlot from "uplot";
import type { BlockRow } from "./model.js";

/** The two time-series charts (uPlot, bundled into the page): block interval and tx/s. */

/** How far back the charts look. */
export const CHART_WINDOW_S = 5 * 60;

const AXIS = { stroke: "#9aa4b2", grid: { stroke: "#263040", width: 1 }, ticks: { stroke: "#263040", width: 1 } };

function options(title: string, unit: string, color: string, width: number): uPlot.Options {
  return {
    width,
    height: 180,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] } },
    axes: [{ ...AXIS }, { ...AXIS, size: 50, values: (_u, ticks) => ticks.map((t) => `${+t.toFixed(2)}${unit}`) }],
    series: [{}, { label: title, stroke: color, width: 1.5, fill: `${color}22`, points: { show: false } }],
  };
}

export class Charts {
  readonly #interval: uPlot;
  readonly #tps: uPlot;
  readonly #intervalEl: HTMLElement;

  constructor(intervalEl: HTMLElement, tpsEl: HTMLElement) {
    this.#intervalEl = intervalEl;
    const w = Math.max(200, intervalEl.clientWidth);
    this.#interval = new uPlot(options("block interval", "s", "#4cc2ff", w), [[], []], intervalEl);
    this.#tps = new uPlot(options("tx/s", "", "#7ee787", w), [[], []], tpsEl);
    window.addEventListener("resize", () => this.resize());
  }

  resize(): void {
    const w = Math.max(200, this.#intervalEl.clientWidth);
    this.#interval.setSize({ width: w, height: 180 });
    this.#tps.setSize({ width: w, height: 180 });
  }

  update(blocks: readonly BlockRow[]): void {
    const last = blocks[blocks.length - 1];
    if (last === undefined) return;
    const from = last.timeMs - CHART_WINDOW_S * 1000;
    const xs: number[] = [];
    const intervals: (number | null)[] = [];
    const tps: (number | null)[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i] as BlockRow;
      if (b.timeMs < from) continue;
      xs.push(b.timeMs / 1000);
      intervals.push(b.interval ?? null);
      // Txs over the last 5 blocks divided by the time they took: steadier than one block's ratio.
      let txs = 0;
      let span = 0;
      for (let j = Math.max(0, i - 4); j <= i; j++) {
        const x = blocks[j] as BlockRow;
        if (x.interval === undefined) continue;
        txs += x.txs;
        span += x.interval;
      }
      tps.push(span > 0 ? txs / span : null);
    }
    this.#interval.setData([xs, intervals]);
    this.#tps.setData([xs, tps]);
  }
}
