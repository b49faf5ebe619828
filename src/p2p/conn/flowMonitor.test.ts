import { describe, expect, test } from "vitest";
import { FlowMonitor } from "./flowMonitor.js";

function clocked(): { monitor: FlowMonitor; advance: (ms: number) => void } {
  let now = 1_000;
  return { monitor: new FlowMonitor(() => now), advance: (ms) => (now += ms) };
}

describe("FlowMonitor", () => {
  test("default: a fresh monitor reports nothing transferred", () => {
    const s = new FlowMonitor().status();
    expect(s).toMatchObject({ bytes: 0, samples: 0, instRate: 0, curRate: 0, avgRate: 0, peakRate: 0, active: true });
    expect(s.startMs).toBeGreaterThan(0);
  });

  test("behavior: bytes are counted per 100 ms sample into inst, EMA, average and peak rates", () => {
    const { monitor, advance } = clocked();
    monitor.update(1_000);
    expect(monitor.status().bytes).toBe(0); // the sample is still open
    advance(100);
    let s = monitor.status();
    expect(s).toMatchObject({ bytes: 1_000, samples: 1, instRate: 10_000, curRate: 10_000, peakRate: 10_000 });
    expect(s.avgRate).toBe(10_000);
    expect(s.durationMs).toBe(100);
    monitor.update(3_000);
    advance(100);
    s = monitor.status();
    expect(s.instRate).toBe(30_000);
    expect(s.peakRate).toBe(30_000);
    // EMA over a 1 s window: 30000 + e^-0.1 × (10000 − 30000)
    expect(s.curRate).toBe(Math.round(30_000 + Math.exp(-0.1) * (10_000 - 30_000)));
    expect(s.avgRate).toBe(20_000);
    advance(500);
    expect(monitor.status().idleMs).toBe(600);
  });

  test("behavior: transfer size gives bytes remaining and progress; done() freezes rates", () => {
    const { monitor, advance } = clocked();
    monitor.setTransferSize(4_000);
    monitor.update(1_000);
    advance(100);
    const s = monitor.status();
    expect(s.bytesRem).toBe(3_000);
    expect(s.progress).toBe(0.25);
    expect(s.timeRemMs).toBe(300);
    monitor.done();
    monitor.update(500);
    advance(100);
    expect(monitor.status()).toMatchObject({ active: false, bytes: 1_000, instRate: 0 });
  });

  test("behavior: limit returns at once while the sample has budget, and unlimited at rate 0", async () => {
    const { monitor } = clocked();
    expect(await monitor.limit(1_000, 0, () => false)).toBe(1_000);
    expect(await monitor.limit(1_000, 100_000, () => false)).toBe(1_000);
    monitor.update(9_500);
    expect(await monitor.limit(1_000, 100_000, () => false)).toBe(500);
    monitor.update(500);
    // Budget spent; a stopped connection is let through instead of waiting for the next sample.
    expect(await monitor.limit(1_000, 100_000, () => true)).toBe(0);
  });
});
