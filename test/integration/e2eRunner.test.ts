import { describe, expect, test } from "vitest";
import { ManifestError, parseManifest } from "../e2e/runner/manifest.js";
import { formatResult, runManifest } from "../e2e/runner/run.js";

// The e2e runner (test/e2e/runner, docs/e2e.md): its manifest parser, and one tiny network run end to
// end (two kvstore validators, one SIGKILL: the chain stops without the killed one and resumes).

const GOOD = `
app = "evm"
target_height = 30
deadline = "3m"

[config]
"consensus.timeout_commit" = "500ms"
consensus = { timeout_propose = "2s" }

[load]
rate = 5
resend_after = "8s"

[node.v1]
power = 20
perturb = [
  { kind = "kill", height = 5, down = "1s" },
  { kind = "pause", time = "20s", duration = "3s" },
  { kind = "kill", height = 12, repeat = 3, every = "4s" },
]

[node.v2]
config = { "mempool.size" = 100 }
perturb = [{ kind = "disconnect", height = 8, duration = "5s" }]

[node.v3]

[node.f1]
mode = "full"
state_sync = true
perturb = [{ kind = "join", height = 10 }]

[[partition]]
groups = [["v1", "f1"], ["v2", "v3"]]
time = "40s"
duration = "10s"
`;

function errorKey(text: string): string {
  try {
    parseManifest(text, "m.toml");
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return `${(err as ManifestError).key} | ${(err as Error).message}`;
  }
  throw new Error("no error");
}

describe("e2e manifest parser", () => {
  test("behavior: reads nodes, powers, config (dotted and nested), perturbations, partitions and the load", () => {
    const m = parseManifest(GOOD, "m.toml");
    expect(m).toMatchObject({ name: "m", app: "evm", targetHeight: 30, deadlineMs: 180_000 });
    expect(m.config).toEqual({ "consensus.timeout_commit": "500ms", "consensus.timeout_propose": "2s" });
    expect(m.nodes.map((n) => [n.name, n.mode, n.power])).toEqual([
      ["v1", "validator", 20],
      ["v2", "validator", 10],
      ["v3", "validator", 10],
      ["f1", "full", 0],
    ]);
    expect(m.nodes[0]?.perturb).toEqual([
      { kind: "kill", at: { height: 5 }, durationMs: 1000, repeat: 1, every: undefined, key: "node.v1.perturb[0]" },
      {
        kind: "pause",
        at: { timeMs: 20_000 },
        durationMs: 3000,
        repeat: 1,
        every: undefined,
        key: "node.v1.perturb[1]",
      },
      { kind: "kill", at: { height: 12 }, durationMs: 0, repeat: 3, every: { ms: 4000 }, key: "node.v1.perturb[2]" },
    ]);
    expect(m.nodes[1]?.config).toEqual({ "mempool.size": 100 });
    expect(m.nodes.map((n) => n.stateSync)).toEqual([undefined, undefined, undefined, { expect: "restore" }]);
    expect(m.partitions[0]).toMatchObject({
      groups: [
        ["v1", "f1"],
        ["v2", "v3"],
      ],
      at: { timeMs: 40_000 },
      durationMs: 10_000,
    });
    expect(m.load).toMatchObject({ rate: 5, resendAfterMs: 8000, contractShare: 0.4, inflightPerAccount: 4 });
  });

  test("error: each problem names the bad key", () => {
    const cases: [string, string][] = [
      ["target_height = 5\ncolour = 1\n[node.a]", "colour"],
      ["[node.a]", "target_height"],
      ['target_height = 5\napp = "wasm"\n[node.a]', "app"],
      ["target_height = 5\n[node.a]\npertub = []", "node.a.pertub"],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "kil", height = 3 }]', "node.a.perturb[0].kind"],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "pause", height = 3 }]', "node.a.perturb[0].duration"],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "kill" }]', "node.a.perturb[0]"],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "kill", height = 3, repeat = 4 }]', "node.a.perturb[0].every"],
      [
        'target_height = 5\n[node.a]\nperturb = [{ kind = "kill", height = 3, down = "soon" }]',
        "node.a.perturb[0].down",
      ],
      ['target_height = 5\n[config]\n"consensus.timeout_comit" = "1s"\n[node.a]', 'config."consensus.timeout_comit"'],
      [
        'target_height = 5\n[config]\n"consensus.timeout_commit" = "fast"\n[node.a]',
        'config."consensus.timeout_commit"',
      ],
      [
        'target_height = 5\n[node.a]\nconfig = { p2p = { persistent_peers = "x" } }',
        'node.a.config."p2p.persistent_peers"',
      ],
      ['target_height = 5\n[node.a]\n[node.b]\nmode = "full"\npower = 3', "node.b.power"],
      [
        'target_height = 5\n[node.a]\n[[partition]]\ngroups = [["a"], ["zz"]]\nheight = 3\nduration = "2s"',
        "partition[0].groups[1][0]",
      ],
      ['target_height = 5\n[node.a]\n[load]\nrate = "fast"', "load.rate"],
      [
        'target_height = 5\n[node.a]\nperturb = [{ kind = "corrupt_snapshot", height = 3, down = "1s" }]',
        "node.a.perturb[0].down",
      ],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "set_power", height = 3 }]', "node.a.perturb[0].power"],
      ['target_height = 5\n[node.a]\nperturb = [{ kind = "set_power", height = 3, power = 5 }]', "node.a.perturb[0]"],
      ["target_height = 5\n[node.a]\n[node.b]\nstate_sync = true", "node.b.state_sync"],
      ['target_height = 5\n[node.a]\n[node.b]\nstate_sync = "yes"', "node.b.state_sync"],
      ['target_height = 5\n[node.a]\n[node.b]\nstate_sync_expect = "fallback"', "node.b.state_sync_expect"],
      [
        'target_height = 5\n[node.a]\n[node.b]\nstate_sync = true\nstate_sync_expect = "maybe"\nperturb = [{ kind = "join", height = 3 }]',
        "node.b.state_sync_expect",
      ],
      [
        'target_height = 5\n[node.a]\nconfig = { "statesync.trust_hash" = "AB" }',
        'node.a.config."statesync.trust_hash"',
      ],
      ["target_height = [", ""],
    ];
    for (const [text, key] of cases) expect(errorKey(text).split(" | ")[0], text).toBe(key);
    expect(errorKey('target_height = 5\n[node.a]\nperturb = [{ kind = "kil", height = 3 }]')).toContain(
      'must be one of "kill", "restart", "pause", "disconnect", "join", "corrupt_snapshot", "set_power"; got "kil"',
    );
  });
});

describe("e2e runner", () => {
  test("behavior: a 2-validator kvstore network survives a SIGKILL of one validator; every check passes", async () => {
    // Deadline 60 s: the runner keeps 30 s of it for the checks and drains the load only within the
    // rest. With 45 s a busy machine reached height 10 after 21 s, the drain got 0 s and a tx accepted
    // as the load stopped counted as lost (the drain ends as soon as every tx is mined).
    const m = parseManifest(
      `
      app = "kvstore"
      target_height = 10
      deadline = "60s"
      [config]
      "consensus.timeout_propose" = "3s"
      "consensus.timeout_commit" = "200ms"
      [load]
      rate = 10
      drain = "10s"
      [node.v1]
      [node.v2]
      perturb = [{ kind = "kill", height = 4 }]
      `,
      "tiny.toml",
    );
    const lines: string[] = [];
    const r = await runManifest(m, { log: (l) => lines.push(l) });
    const report = [...lines, ...formatResult(r)].join("\n");
    expect(r.failed, report).toBe(0);
    expect(r.checks.map((c) => c.name)).toHaveLength(10);
    expect(r.outages).toHaveLength(1);
    expect(r.outages[0]).toMatchObject({ nodes: ["v2"], kind: "kill" });
    expect(r.stats?.heights).toBeGreaterThanOrEqual(9);
    expect(r.kept).toBe("nothing");
    expect(report).toMatch(/e2e: 10 passed, 0 failed/);
  }, 90_000);
});
