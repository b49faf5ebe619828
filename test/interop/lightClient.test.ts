/**
 * Go's light client on cometh's chain: `cometbft light` (CometBFT v0.38's light client proxy), given a
 * trusted height and hash, fetches headers, commits and validator sets from a cometh node (the
 * primary), checks them against its witnesses and serves the verified node RPC. Shown on a single
 * cometh validator and on a 2 Go + 2 cometh network, across validator set changes: the proxy answers
 * for heights after the change, and its answers equal the primary's.
 */
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome } from "../integration/testNode.js";
import { type LightProxy, spawnBinary, startLightProxy } from "./binaries.js";
import {
  broadcastTx,
  cometbftMissing,
  type MixedNetwork,
  type MixedNode,
  makeMixedNetwork,
  rpcPost,
  waitForTx,
} from "./mixedNetwork.js";
import { describe as describeDiffs, diffValues, RpcAsker } from "./rpcDiff.js";

const missing = cometbftMissing();
const suiteName = missing === undefined ? "Go's light client" : `Go's light client (skipped: ${missing})`;
if (missing !== undefined) console.warn(`test/interop/lightClient.test.ts is skipped: ${missing}`);

/** A fresh Ed25519 public key (base64), for a validator that joins the set and never runs. */
function newValidatorKey(): string {
  const spki = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" });
  return Buffer.from(spki.subarray(spki.length - 32)).toString("base64");
}

async function blockHash(node: MixedNode, height: number): Promise<string> {
  return (await rpcPost<{ block_id: { hash: string } }>(node, "block", { height: String(height) })).block_id.hash;
}

/** Sends a `val=` tx and returns the height of the block holding it (the change applies at +2). */
async function changeValidator(via: MixedNode, pubKey: string, power: number): Promise<number> {
  return (await waitForTx(via, await broadcastTx(via, `val=ed25519!${pubKey}!${power}`))).height;
}

/**
 * The proxy decodes the primary's JSON into Go values and encodes them again, and cmtjson reads an
 * empty list as a nil slice: it writes it back as null, or leaves it out where the field is
 * `omitempty` (a proof's `aunts`). So empty lists, nulls and absent keys compare equal here; the
 * differential (rpcDiff.test.ts) compares the primary's own JSON with a Go node's.
 */
function reencoded(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? null : v.map(reencoded);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .map(([k, x]) => [k, reencoded(x)])
      .filter(([, x]) => x !== null),
  );
}

/**
 * Asks the proxy and the primary the same URI GETs (blocks, commits, validators, headers, results,
 * params at each height; the tx by hash with its proof) and expects the same answers, none an error.
 * The proxy answers only what it verified: an error from it is a verification failure.
 */
async function expectVerifiedAnswers(
  proxy: LightProxy,
  primary: MixedNode,
  heights: readonly number[],
  txHash: string,
): Promise<void> {
  const fromProxy = new RpcAsker(proxy.rpcUrl);
  const fromPrimary = new RpcAsker(primary.rpcUrl);
  const paths = [`/tx?hash=0x${txHash}&prove=true`];
  for (const h of heights) {
    const hash = await blockHash(primary, h);
    paths.push(
      `/block?height=${h}`,
      `/commit?height=${h}`,
      `/validators?height=${h}`,
      `/header?height=${h}`,
      `/block_results?height=${h}`,
      `/consensus_params?height=${h}`,
      `/block_by_hash?hash=0x${hash}`,
      `/header_by_hash?hash=0x${hash}`,
    );
  }
  const failures: string[] = [];
  for (const path of paths) {
    const [p, q] = await Promise.all([fromProxy.get(path), fromPrimary.get(path)]);
    if (p.body?.error !== undefined || p.status !== 200) {
      failures.push(`${path}: the light proxy refused it (${p.status}): ${p.text}`);
      continue;
    }
    const diffs = diffValues(reencoded(q.body), reencoded(p.body));
    if (diffs.length > 0) failures.push(describeDiffs(`${path} (primary vs proxy)`, diffs));
  }
  expect(failures.join("\n"), proxy.output().slice(-3000)).toBe("");
  // It verified headers from the primary on its own (not only served the trusted one).
  expect(proxy.output()).toMatch(/VerifyHeader/);
}

async function validatorPowers(url: string, height: number): Promise<Record<string, string>> {
  const r = await new RpcAsker(url).get(`/validators?height=${height}&per_page=100`);
  const list = r.body.result.validators as { pub_key: { value: string }; voting_power: string }[];
  return Object.fromEntries(list.map((v) => [v.pub_key.value, v.voting_power]));
}

describe.skipIf(missing !== undefined)(suiteName, () => {
  const proxies: LightProxy[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  async function lightProxy(opts: Omit<Parameters<typeof startLightProxy>[0], "homeDir">): Promise<LightProxy> {
    const { home, cleanup } = await makeTempHome("cometh-light-");
    cleanups.push(cleanup);
    const proxy = await startLightProxy({ ...opts, homeDir: join(home, "light") });
    proxies.push(proxy);
    return proxy;
  }

  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.stop(5_000)));
    for (const c of cleanups) await c();
  });

  describe("a single cometh validator", () => {
    let net: MixedNetwork | undefined;

    beforeAll(async () => {
      net = await makeMixedNetwork({ goValidators: 0, comethValidators: 1, timeoutCommit: "100ms" });
      await net.startValidators();
      await (net.validators[0] as MixedNode).waitForHeight(2);
    }, 120_000);

    afterAll(async () => {
      await net?.close();
    });

    it("behavior: the proxy verifies and serves the chain across a power change (skipping and sequential verification)", async () => {
      const node = (net as MixedNetwork).validators[0] as MixedNode;
      const changedAt = await changeValidator(node, node.validatorPubKey, 5);
      const txHash = await broadcastTx(node, "light=single");
      const { height: txHeight } = await waitForTx(node, txHash);
      const last = Math.max(changedAt + 4, txHeight + 1);
      await node.waitForHeight(last + 1);
      const heights = [changedAt, changedAt + 1, changedAt + 2, txHeight, last];
      const trusted = { height: 1, hash: await blockHash(node, 1) };

      for (const sequential of [false, true]) {
        const proxy = await lightProxy({
          chainId: (net as MixedNetwork).chainId,
          primary: node.rpcUrl,
          witnesses: [node.rpcUrl],
          ...trusted,
          sequential,
        });
        await expectVerifiedAnswers(proxy, node, heights, txHash);
        expect(await validatorPowers(proxy.rpcUrl, changedAt + 1)).toEqual({ [node.validatorPubKey]: "1" });
        expect(await validatorPowers(proxy.rpcUrl, changedAt + 2)).toEqual({ [node.validatorPubKey]: "5" });
      }
    }, 120_000);

    it("error: a trusted hash that is not the chain's stops the light client before it serves", async () => {
      const node = (net as MixedNetwork).validators[0] as MixedNode;
      const { home, cleanup } = await makeTempHome("cometh-light-");
      cleanups.push(cleanup);
      const wrong = (await blockHash(node, 2)).replace(/^./, (c) => (c === "A" ? "B" : "A"));
      const proc = spawnBinary("cometbft", [
        "light",
        (net as MixedNetwork).chainId,
        "--primary",
        node.rpcUrl,
        "--witnesses",
        node.rpcUrl,
        "--height",
        "2",
        "--hash",
        wrong,
        "--laddr",
        "tcp://127.0.0.1:0",
        "--home-dir",
        join(home, "light"),
      ]);
      const timer = setTimeout(() => void proc.kill(), 30_000);
      const code = await proc.exited;
      clearTimeout(timer);
      expect(code).not.toBe(0);
      expect(proc.output()).toMatch(/expected header's hash/);
      expect(proc.output()).not.toMatch(/Starting RPC HTTP server/);
    }, 60_000);
  });

  describe("2 Go + 2 cometh validators", () => {
    let net: MixedNetwork | undefined;

    beforeAll(async () => {
      net = await makeMixedNetwork({ goValidators: 2, comethValidators: 2, timeoutCommit: "100ms" });
      await net.startValidators();
      await Promise.all(net.validators.map((n) => n.waitForHeight(2)));
    }, 120_000);

    afterAll(async () => {
      await net?.close();
    });

    it("behavior: with a cometh primary and Go witnesses (skipping and sequential), and a Go primary with cometh witnesses, the proxy verifies the chain across a validator joining and one leaving", async () => {
      const { chainId, validators } = net as MixedNetwork;
      const [go0, go1, cometh0, cometh1] = validators as [MixedNode, MixedNode, MixedNode, MixedNode];
      // A new validator (power 1, never running: the four others keep 4/5) joins through a Go node;
      // then cometh1 leaves through a cometh node.
      const joiner = newValidatorKey();
      const joinedAt = await changeValidator(go0, joiner, 1);
      const leftAt = await changeValidator(cometh0, cometh1.validatorPubKey, 0);
      const txHash = await broadcastTx(cometh0, "light=mixed");
      const { height: txHeight } = await waitForTx(cometh0, txHash);
      const last = Math.max(leftAt + 4, txHeight + 1);
      await Promise.all([go0, go1, cometh0].map((n) => n.waitForHeight(last + 1)));
      const heights = [joinedAt + 1, joinedAt + 2, leftAt + 1, leftAt + 2, txHeight, last];
      const trusted = { height: 1, hash: await blockHash(cometh0, 1) };

      const cases = [
        { primary: cometh0, witnesses: [go0, go1], sequential: false },
        { primary: cometh0, witnesses: [go0, cometh1], sequential: true },
        { primary: go0, witnesses: [cometh0, cometh1], sequential: false },
      ];
      for (const { primary, witnesses, sequential } of cases) {
        const proxy = await lightProxy({
          chainId,
          primary: primary.rpcUrl,
          witnesses: witnesses.map((w) => w.rpcUrl),
          ...trusted,
          sequential,
        });
        await expectVerifiedAnswers(proxy, primary, heights, txHash);
        const before = await validatorPowers(proxy.rpcUrl, joinedAt + 1);
        const joined = await validatorPowers(proxy.rpcUrl, joinedAt + 2);
        const left = await validatorPowers(proxy.rpcUrl, leftAt + 2);
        expect(Object.keys(before).length).toBe(4);
        expect(joined[joiner]).toBe("1");
        expect(Object.keys(joined).length).toBe(5);
        expect(left[cometh1.validatorPubKey]).toBeUndefined();
        expect(Object.keys(left).length).toBe(4);
      }
    }, 180_000);
  });
});
