import type { Registry } from "prom-client";

/**
 * Metric families that cost O(1) per update on hot paths (a tx, a p2p message, an RPC call): each
 * label combination is resolved once to a child object whose fields are plain numbers, and the text
 * is built only when Prometheus scrapes. prom-client's own metrics hash the label object on every
 * update. These register in a prom-client Registry (it only calls `get()`), so its default labels
 * (`chain_id`) and text format apply to both.
 */

type MetricType = "counter" | "gauge" | "histogram";

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What prom-client's Registry reads from a registered metric. */
interface RegistrableMetric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  get(): Promise<{ name: string; help: string; type: MetricType; values: MetricValue[]; aggregator: "sum" }>;
}

function register(registry: Registry, metric: RegistrableMetric): void {
  (registry as unknown as { registerMetric(m: RegistrableMetric): void }).registerMetric(metric);
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) out[names[i] as string] = values[i] ?? "";
  return out;
}

/** One label combination of a counter or gauge. */
export interface ScalarChild {
  value: number;
}

/**
 * A counter or gauge with fixed label names. Without labels it has one child (shown as 0 until
 * set); with labels, a combination appears once `child(...)` is first asked for it.
 */
export class ScalarFamily implements RegistrableMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly #labelNames: readonly string[];
  readonly #children = new Map<string, { labels: Record<string, string>; child: ScalarChild }>();
  readonly #collect: ((family: ScalarFamily) => void) | undefined;

  constructor(
    registry: Registry,
    opts: {
      name: string;
      help: string;
      type: "counter" | "gauge";
      labelNames?: readonly string[];
      /** Runs before each scrape (gauges read from the node). */
      collect?: (family: ScalarFamily) => void;
    },
  ) {
    this.name = opts.name;
    this.help = opts.help;
    this.type = opts.type;
    this.#labelNames = opts.labelNames ?? [];
    this.#collect = opts.collect;
    if (this.#labelNames.length === 0) this.child();
    register(registry, this);
  }

  /** The child of these label values (in labelNames order); created on first use. */
  child(...values: string[]): ScalarChild {
    const key = values.length === 1 ? (values[0] as string) : values.join("\u0000");
    let entry = this.#children.get(key);
    if (entry === undefined) {
      entry = { labels: labelsOf(this.#labelNames, values), child: { value: 0 } };
      this.#children.set(key, entry);
    }
    return entry.child;
  }

  /** The value of the unlabelled child. */
  set(value: number): void {
    this.child().value = value;
  }

  inc(delta = 1): void {
    this.child().value += delta;
  }

  /** Forgets every labelled child (gauges rebuilt at each scrape). */
  reset(): void {
    this.#children.clear();
    if (this.#labelNames.length === 0) this.child();
  }

  async get() {
    this.#collect?.(this);
    const values: MetricValue[] = [];
    for (const { labels, child } of this.#children.values()) values.push({ value: child.value, labels });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" as const };
  }
}

/** One label combination of a histogram. */
export class HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  readonly #upper: readonly number[];

  constructor(upper: readonly number[]) {
    this.#upper = upper;
    this.counts = new Float64Array(upper.length);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const upper = this.#upper;
    for (let i = 0; i < upper.length; i++) {
      if (v <= (upper[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }
}

export class HistogramFamily implements RegistrableMetric {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram" as const;
  readonly buckets: readonly number[];
  readonly #labelNames: readonly string[];
  readonly #children = new Map<string, { labels: Record<string, string>; child: HistogramChild }>();

  constructor(
    registry: Registry,
    opts: { name: string; help: string; buckets: readonly number[]; labelNames?: string[] },
  ) {
    this.name = opts.name;
    this.help = opts.help;
    this.buckets = [...opts.buckets].sort((a, b) => a - b);
    this.#labelNames = opts.labelNames ?? [];
    if (this.#labelNames.length === 0) this.child();
    register(registry, this);
  }

  child(...values: string[]): HistogramChild {
    const key = values.length === 1 ? (values[0] as string) : values.join("\u0000");
    let entry = this.#children.get(key);
    if (entry === undefined) {
      entry = { labels: labelsOf(this.#labelNames, values), child: new HistogramChild(this.buckets) };
      this.#children.set(key, entry);
    }
    return entry.child;
  }

  observe(v: number): void {
    this.child().observe(v);
  }

  async get() {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, child } of this.#children.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += child.counts[i] as number;
        values.push({
          metricName: bucketName,
          labels: { ...labels, le: this.buckets[i] as number },
          value: cumulative,
        });
      }
      values.push({ metricName: bucketName, labels: { ...labels, le: "+Inf" }, value: child.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: child.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: child.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" as const };
  }
}

/** prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** prometheus.ExponentialBucketsRange(min, max, count): count buckets from min to max, growing evenly. */
export function exponentialBucketsRange(min: number, max: number, count: number): number[] {
  const factor = (max / min) ** (1 / (count - 1));
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(min * factor ** i);
  return out;
}

/** prometheus.LinearBuckets(start, width, count). */
export function linearBuckets(start: number, width: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(start + i * width);
  return out;
}

/** prometheus.DefBuckets. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
