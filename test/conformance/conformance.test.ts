import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { httpPost } from "../../src/rpc/evm/testing/evmClient.js";
import { type ProofResult, verifyProof } from "../gethdiff/proof.js";
import { differences, type IoCase, loadCases, replaceAll } from "./cases.js";
import { FIXTURES_DIR, FIXTURES_PRESENT, REPLAY_GAPS, startTestChain, type TestChain } from "./testChain.js";

/**
 * `npm run test:conformance`: the execution-apis conformance cases replayed against cometh on a dev
 * chain rebuilt from the set's test chain (testChain.ts). Each case passes only when every answer
 * equals geth's recorded one (speconly cases: has its structure), after the test chain's block hashes
 * are swapped for ours, fields in MUST_DIFFER aside. The cases that cannot apply to a CometBFT chain,
 * and those where cometh differs on purpose, are skipped with the reason (SKIPS, one list); at the end
 * the per-method counts and every skip reason with its cases are printed.
 */

/** Fields never compared, with the reason. */
const MUST_DIFFER: Record<string, string> = {
  stateRoot: "cometh keeps no Ethereum state trie for its blocks (Cosmos EVM state): simulated blocks show a zero root",
};
const IGNORE = new Set(Object.keys(MUST_DIFFER));
/** eth_getProof: the proofs are verified instead of compared (proof.ts); every other field is compared. */
const PROOF_FIELDS = new Set([...IGNORE, "accountProof", "proof"]);

const named =
  (...names: string[]) =>
  (c: IoCase) =>
    names.includes(c.name);
const method =
  (...methods: string[]) =>
  (c: IoCase) =>
    methods.includes(c.method);

/** The test chain's merge block (genesis.json mergeNetsplitBlock): blocks below it are proof-of-work blocks. */
const TEST_CHAIN_MERGE_BLOCK = 36n;

/**
 * Every case that is not compared, with the reason, in one list. `cannot apply`: the case depends on
 * the test chain's own Ethereum blocks (their headers, hashes, RLP, fork history) or on Ethereum's
 * consensus layer, which a CometBFT chain does not have. `differs on purpose`: cometh answers
 * otherwise on purpose, each a row of docs/compatibility.md.
 */
const SKIPS: { match: (c: IoCase) => boolean; kind: "cannot apply" | "differs on purpose"; reason: string }[] = [
  {
    match: named(
      "debug_getRawBlock/get-block-n",
      "debug_getRawBlock/get-genesis",
      "debug_getRawHeader/get-block-n",
      "debug_getRawHeader/get-genesis",
    ),
    kind: "cannot apply",
    reason:
      "the RLP of the test chain's own Ethereum block or header: a CometBFT chain's blocks are CometBFT blocks with no RLP header (and cometh answers -32601, docs/ethereum-rpc.md)",
  },
  {
    match: (c) =>
      (c.method === "eth_getBlockByNumber" || c.method === "eth_getBlockByHash") &&
      c.name !== "eth_getBlockByNumber/get-block-notfound" &&
      !c.name.endsWith("-by-empty-hash") &&
      !c.name.endsWith("-by-notfound-hash"),
    kind: "cannot apply",
    reason:
      "the test chain's own headers: proof-of-work difficulty, nonce and mixHash, its gas limit before London, extraData, its state and receipt roots, the beacon root and blob gas of the consensus layer, the RLP size — a CometBFT block has none of them",
  },
  {
    match: named(
      "debug_getRawReceipts/get-block-n",
      "eth_getBlockReceipts/get-block-receipts-by-hash",
      "eth_getBlockReceipts/get-block-receipts-n",
      "eth_getTransactionReceipt/get-legacy-contract",
      "eth_getTransactionReceipt/get-legacy-input",
      "eth_getTransactionReceipt/get-legacy-receipt",
    ),
    kind: "cannot apply",
    reason:
      "a receipt of a pre-Byzantium block (test chain blocks 1–8): it carries the post-state root of the test chain's trie instead of a status, and its gas follows Homestead's schedule; a CometBFT chain runs one fork (Prague) from its first block",
  },
  {
    match: named("eth_getLogs/contract-addr"),
    kind: "cannot apply",
    reason:
      "logs of test chain block 2, executed there under Homestead's gas schedule: its first tx logs in a loop while GAS > 10000, and under Prague (cheaper calldata, EIP-2028) it has more gas left and logs 11 times instead of 10, so the next log's block-wide logIndex is one higher (a CometBFT chain runs one fork from genesis)",
  },
  {
    match: named(
      "eth_getTransactionByHash/get-blob-tx",
      "eth_getTransactionReceipt/get-blob-tx",
      "eth_sendRawTransaction/send-blob-tx",
    ),
    kind: "cannot apply",
    reason:
      "an EIP-4844 blob transaction: blobs live on Ethereum's consensus layer; a CometBFT chain has none and Cosmos EVM refuses type-3 txs (the replay sent the test chain's blob txs as plain EIP-1559 txs)",
  },
  {
    match: method("testing_buildBlockV1"),
    kind: "cannot apply",
    reason:
      "builds an execution payload for Ethereum's engine API on a given parent; CometBFT builds blocks through its own consensus (PrepareProposal), there is no engine API",
  },
  {
    match: method("eth_config"),
    kind: "cannot apply",
    reason:
      "EIP-7910's fork configuration (fork id, activation times, blob schedule, system contracts) of an Ethereum fork schedule; a CometBFT chain has one fork from genesis and no fork id",
  },
  {
    match: (c) => {
      if (c.method !== "eth_simulateV1") return false;
      const base = /,\s*"(0x[0-9a-f]+)"\s*\]\s*}\s*$/.exec(c.exchanges[0]?.request ?? "")?.[1];
      return base !== undefined && BigInt(base) < TEST_CHAIN_MERGE_BLOCK;
    },
    kind: "cannot apply",
    reason:
      "simulates on a pre-merge block of the test chain (an ethash header: difficulty, its gas limit, no base fee rules)",
  },
  {
    match: named("eth_getBlockReceipts/get-block-receipts-empty", "eth_getBlockByHash/get-block-by-empty-hash"),
    kind: "differs on purpose",
    reason: "block 0 has the zero hash (CometBFT has no block 0), so the zero hash names it",
  },
  {
    match: named(
      "eth_getBalance/get-balance-default-block",
      "eth_getCode/get-code-default-block",
      "eth_getProof/get-account-proof-default-block",
      "eth_getStorageAt/get-storage-default-block",
      "eth_getTransactionCount/get-nonce-default-block",
    ),
    kind: "differs on purpose",
    reason: "state reads without a block parameter: -32602 missing value (Cosmos EVM v0.5; geth reads at latest)",
  },
  {
    match: named("eth_getStorageAt/get-storage-invalid-key", "eth_getStorageAt/get-storage-invalid-key-too-large"),
    kind: "differs on purpose",
    reason: "texts of -32602 errors: Cosmos EVM v0.5's storage key text",
  },
  {
    match: named("debug_traceBlockByNumber/trace-block-invalid-number"),
    kind: "differs on purpose",
    reason: "texts of -32602 errors: cometh names the accepted block forms",
  },
  {
    match: (c) =>
      c.method.startsWith("debug_getRaw") ||
      ["eth_blobBaseFee", "eth_baseFee", "eth_capabilities", "eth_getStorageValues"].includes(c.method),
    kind: "differs on purpose",
    reason:
      "methods Cosmos EVM v0.5 does not serve: debug_getRaw* (-32601 not implemented), eth_blobBaseFee, eth_baseFee, eth_capabilities, eth_getStorageValues (-32601)",
  },
  {
    match: named("eth_call/call-callenv", "eth_call/call-callenv-options-eip1559"),
    kind: "differs on purpose",
    reason: "PREVRANDAO is 2^256-1 in every block (Cosmos EVM v0.5 sets the block context's Random to MaxHash)",
  },
];

const cases = FIXTURES_PRESENT ? loadCases(FIXTURES_DIR) : [];
const tally = new Map<string, { passed: number; failed: number; skipped: number; differs: number }>();
const skipReasons = new Map<string, string[]>();
const failures: string[] = [];

function count(method: string, outcome: "passed" | "failed" | "skipped" | "differs"): void {
  const t = tally.get(method) ?? { passed: 0, failed: 0, skipped: 0, differs: 0 };
  t[outcome]++;
  tally.set(method, t);
}

describe.skipIf(!FIXTURES_PRESENT)("execution-apis conformance", () => {
  let chain: TestChain;

  beforeAll(async () => {
    chain = await startTestChain({ replay: true });
  });

  afterAll(async () => {
    await chain?.close();
    const lines = ["execution-apis conformance, per method: passed / failed / cannot apply / differs on purpose"];
    for (const [method, t] of [...tally].sort()) {
      lines.push(`  ${method}: ${t.passed} / ${t.failed} / ${t.skipped} / ${t.differs}`);
    }
    const blobs = REPLAY_GAPS.blobTxs;
    if (blobs.length > 0) {
      lines.push(
        `  replay: ${blobs.length} blob txs sent as impersonated EIP-1559 txs (blocks ${[...new Set(blobs.map((b) => b.block))].join(", ")})`,
      );
    }
    for (const [reason, names] of skipReasons) lines.push(`  skipped ${names.length}: ${reason}`);
    for (const f of failures) lines.push(`  FAILED ${f}`);
    process.stdout.write(`${lines.join("\n")}\n`);
  });

  test.for(cases)("$name", async (c, ctx) => {
    // The first entry that matches decides (cannot-apply entries come first).
    const skip = SKIPS.find((s) => s.match(c));
    if (skip !== undefined) {
      count(c.method, skip.kind === "cannot apply" ? "skipped" : "differs");
      const reason = `${skip.kind}: ${skip.reason}`;
      skipReasons.set(reason, [...(skipReasons.get(reason) ?? []), c.name]);
      ctx.skip(reason);
      return;
    }
    const problems: string[] = [];
    for (const [i, x] of c.exchanges.entries()) {
      const request = replaceAll(x.request, chain.hashSwaps);
      const reply = await httpPost(chain.node.evmHttpUrl, request, { headers: { "content-type": "application/json" } });
      const got = reply.body as { result?: unknown; error?: unknown };
      // The expected answer with block hashes swapped for ours: the test chain's, then eth_simulateV1's
      // simulated blocks' (by position).
      let text = replaceAll(x.response, chain.hashSwaps);
      const first = JSON.parse(text);
      if (c.method === "eth_simulateV1" && Array.isArray(first.result) && Array.isArray(got.result)) {
        const simulated = new Map<string, string>();
        first.result.forEach((b: { hash: string }, j: number) => {
          const ours = (got.result as { hash?: string }[])[j]?.hash;
          if (typeof ours === "string") simulated.set(b.hash.slice(2), ours.slice(2));
        });
        text = replaceAll(text, simulated);
      }
      const want = JSON.parse(text);
      const diffs = differences(
        want.error === undefined ? { result: want.result } : { error: want.error },
        want.error === undefined
          ? { result: got.result, ...(got.error === undefined ? {} : { error: got.error }) }
          : { error: got.error },
        {
          ignore: c.method === "eth_getProof" ? PROOF_FIELDS : IGNORE,
          shapeOnly: c.specOnly && want.error === undefined,
        },
      );
      if (c.method === "eth_getProof" && got.result !== undefined && got.result !== null) {
        diffs.push(...(await verifyProof(got.result as ProofResult)));
      }
      for (const d of diffs) problems.push(c.exchanges.length > 1 ? `#${i + 1} ${d}` : d);
    }
    count(c.method, problems.length === 0 ? "passed" : "failed");
    if (problems.length > 0) failures.push(`${c.name}: ${problems.slice(0, 3).join(" | ")}`);
    expect(problems, c.name).toEqual([]);
  });
});

if (!FIXTURES_PRESENT) {
  test("skipped: execution-apis fixtures not found", (ctx) => {
    ctx.skip(
      `execution-apis fixtures not found at ${FIXTURES_DIR}: set EXECUTION_APIS_TESTS to a checkout's tests/ folder`,
    );
  });
}
