import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonRpcProvider, parseEther, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadGenesis, saveGenesis } from "../../src/config/index.js";
import { addressFromPubKey, generateEd25519PrivKey, pubKeyFromPrivKey } from "../../src/types/index.js";
import { rpcGet } from "./testNode.js";
import { makeTestnet, type Testnet } from "./testnetHarness.js";

/**
 * The dashboard in a real browser: headless Chromium (Debian's `chromium` package, which .ci/run
 * installs) driven by playwright-core opens node0's /dashboard on a running 4-validator testnet.
 * Skipped, with a message saying why, where no Chromium is installed.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The screenshot this test leaves behind (a CI artefact; README's picture is docs/img/dashboard.png). */
const SCREENSHOT = join(ROOT, "test-results", "dashboard.png");

function findChromium(): string | undefined {
  const candidates = [
    process.env.COMETH_CHROMIUM,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ];
  return candidates.find((p): p is string => p !== undefined && p !== "" && existsSync(p));
}

/** A funded dev account (the testnet genesis funds Hardhat's ten) and a recipient. */
const KEY0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** Sends small transfers to `url` until stopped, so blocks carry txs and gas (bounded: 400 txs). */
function startTransfers(url: string): { stop(): Promise<number> } {
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true });
  const wallet = new Wallet(KEY0, provider);
  let stopped = false;
  let sent = 0;
  const loop = (async () => {
    let nonce = await provider.getTransactionCount(wallet.address, "pending");
    while (!stopped && sent < 400) {
      await Promise.all(
        [0, 1, 2].map(() => wallet.sendTransaction({ to: TO, value: parseEther("0.001"), nonce: nonce++ })),
      );
      sent += 3;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop.catch(() => undefined);
      provider.destroy();
      return sent;
    },
  };
}

/**
 * The few DOM calls the page-side checks make (this project's TypeScript has no DOM library). The
 * functions passed to waitForFunction run in the page: they can use nothing from this module.
 */
interface PageDocument {
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
}

type Page = import("playwright-core").Page;

/**
 * Waits until `count(selector)` compares to `n` in the page (functions, not strings: the page's
 * Content-Security-Policy forbids evaluating strings, and it stays on here).
 */
function untilCount(page: Page, selector: string, op: "==" | ">=", n: number, timeoutMs = 30_000): Promise<unknown> {
  return page.waitForFunction(
    ([sel, o, k]) => {
      const c = (globalThis as unknown as { document: PageDocument }).document.querySelectorAll(sel).length;
      return o === "==" ? c === k : c >= k;
    },
    [selector, op, n] as const,
    { timeout: timeoutMs },
  );
}

/** Waits until the height the page shows is above `h`. */
function untilHeightAbove(page: Page, h: number): Promise<unknown> {
  return page.waitForFunction(
    (k) =>
      Number(
        (globalThis as unknown as { document: PageDocument }).document
          .querySelector("#height")
          ?.getAttribute("data-height"),
      ) > k,
    h,
    { timeout: 30_000 },
  );
}

const chromium = findChromium();
if (chromium === undefined) {
  console.warn(
    "dashboard browser test skipped: no Chromium found (install Debian's `chromium` package, as .ci/run does, or set COMETH_CHROMIUM)",
  );
}

describe.skipIf(chromium === undefined)("dashboard in headless Chromium", () => {
  /** Every testnet started here, closed at the end even when a test fails half-way. */
  const nets: Testnet[] = [];
  let browser: import("playwright-core").Browser;
  const testnet = async (...args: Parameters<typeof makeTestnet>): Promise<Testnet> => {
    const net = await makeTestnet(...args);
    nets.push(net);
    return net;
  };

  beforeAll(async () => {
    const { chromium: pw } = await import("playwright-core");
    browser = await pw.launch({
      executablePath: chromium as string,
      headless: true,
      // Root in CI containers has no user namespace for Chromium's sandbox.
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(nets.map((n) => n.close()));
  });

  test("behavior: height advances, every validator's votes show, a killed validator shows missing, only the node is contacted", async () => {
    const net = await testnet(4, { "consensus.timeout_commit": "300ms" }, { proxyApp: "evm" });
    await Promise.all(net.nodes.map((n) => n.start()));
    await net.nodes[0]?.waitForHeight(2);
    const node0 = net.nodes[0];
    const node3 = net.nodes[3];
    if (node0 === undefined || node3 === undefined) throw new Error("no nodes");
    const origin = node0.rpcUrl;
    const transfers = startTransfers(node0.evmUrl);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const outside: string[] = [];
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    // Every request the page makes goes through here: anything not to this node is refused and recorded.
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`)) return route.continue();
      outside.push(url);
      return route.abort();
    });
    const sockets: string[] = [];
    page.on("websocket", (ws) => sockets.push(ws.url()));

    await page.goto(`${origin}/dashboard`);
    const height = async () => Number(await page.locator("#height").getAttribute("data-height"));
    await untilHeightAbove(page, 0);
    const first = await height();
    await untilHeightAbove(page, first + 2);
    expect(await height()).toBeGreaterThan(first);

    // All four validators: a prevote and a precommit for the block in the round shown.
    await untilCount(page, '.val[data-prevote="block"][data-precommit="block"]', "==", 4);
    expect(await page.locator(".val").count()).toBe(4);
    expect(await page.locator('.val[data-missing="true"]').count()).toBe(0);
    // The peers table lists node0's three peers with their heights.
    await untilCount(page, "#peers tr[data-peer]", "==", 3);
    await untilCount(page, "#blocks tr[data-height]", ">=", 3);

    // Kill node3's validator: the page shows it missing within a few seconds.
    const status = await rpcGet<{ validator_info: { address: string } }>(node3.rpcUrl, "status");
    const address = status.validator_info.address;
    expect(await page.locator(`.val[data-address="${address}"]`).count()).toBe(1);
    const killedAt = Date.now();
    await node3.kill();
    await page.waitForSelector(`.val[data-address="${address}"][data-missing="true"]`, { timeout: 10_000 });
    const seenAfterMs = Date.now() - killedAt;
    expect(seenAfterMs).toBeLessThan(10_000);
    // The chain goes on without it (3 of 4 is above two thirds), and the page follows.
    const afterKill = await height();
    await untilHeightAbove(page, afterKill + 1);
    await untilCount(page, `.val[data-address="${address}"][data-commit="absent"]`, "==", 1);
    expect(await page.locator("#missing").textContent()).toContain("Missing");
    // Blocks carry the transfers: the table shows their gas (from the NewBlock event's results).
    await page.waitForFunction(
      () =>
        Array.from(
          (globalThis as unknown as { document: PageDocument }).document.querySelectorAll(
            "#blocks tr[data-height] td:nth-child(4)",
          ),
        ).some((td) => Number((td.textContent ?? "").replaceAll(",", "")) > 0),
      undefined,
      { timeout: 30_000 },
    );
    // Let the charts draw a few points, then keep a picture of a round the three live validators decided.
    await page.waitForTimeout(1500);
    await untilCount(page, '.val[data-precommit="block"]', "==", 3, 10_000).catch(() => undefined);
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    if (process.env.COMETH_DASHBOARD_SCREENSHOT !== undefined) {
      await page.screenshot({ path: process.env.COMETH_DASHBOARD_SCREENSHOT, fullPage: true });
    }
    expect(existsSync(SCREENSHOT)).toBe(true);

    expect(await transfers.stop()).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
    expect(outside).toEqual([]);
    expect(sockets.length).toBeGreaterThan(0);
    for (const ws of sockets) expect(ws).toBe(`${origin.replace("http://", "ws://")}/websocket`);
    console.log(`dashboard: validator shown missing ${seenAfterMs} ms after its kill; screenshot ${SCREENSHOT}`);
    await page.close();
    await net.close();
  }, 180_000);

  test("behavior: a 100-validator set fits a compact grid, the 96 that never ran shown missing", async () => {
    // Four running validators with 100 power each and 96 that never start with 1 each: 400 of 496
    // is above two thirds, so the chain runs while most of the set is absent.
    const net = await testnet(4, { "consensus.timeout_commit": "300ms" });
    const first = net.nodes[0];
    if (first === undefined) throw new Error("no nodes");
    const genesisFile = join(first.node.home, "config", "genesis.json");
    const genesis = loadGenesis(genesisFile);
    const idle = Array.from({ length: 96 }, (_, i) => {
      const pubKey = pubKeyFromPrivKey(generateEd25519PrivKey());
      return { address: addressFromPubKey(pubKey), pubKey, power: 1n, name: `idle${i}` };
    });
    genesis.validators = [...genesis.validators.map((v) => ({ ...v, power: 100n })), ...idle];
    for (const n of net.nodes) saveGenesis(join(n.node.home, "config", "genesis.json"), genesis);
    await Promise.all(net.nodes.map((n) => n.start()));
    await first.waitForHeight(3);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    await page.goto(`${first.rpcUrl}/dashboard`);
    await untilCount(page, ".val", "==", 100);
    expect(await page.locator("#grid.compact").count()).toBe(1);
    await untilCount(page, '.val[data-commit="absent"]', "==", 96);
    await untilCount(page, '.val[data-prevote="block"]', "==", 4);
    // Usable: the whole grid stays within a short panel.
    const box = await page.locator("#grid").boundingBox();
    expect(box?.height ?? 0).toBeLessThan(300);
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: join(dirname(SCREENSHOT), "dashboard-100.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 180_000);
});
