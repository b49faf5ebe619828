import { afterAll, beforeAll, expect, test } from "vitest";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

let on: InProcessNode;
let off: InProcessNode;
beforeAll(async () => {
  [on, off] = await Promise.all([startInProcessNode({ "--rpc.dashboard": true }), startInProcessNode()]);
});
afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

test("behavior: [rpc] dashboard serves one self-contained page at /dashboard", async () => {
  const res = await fetch(`${on.rpcUrl}/dashboard`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  // Only the node itself may be reached from the page (and nothing is loaded from elsewhere).
  expect(res.headers.get("content-security-policy")).toContain("connect-src 'self'");
  expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  const html = await res.text();
  expect(html).toMatch(/^<!doctype html>/);
  expect(html).toContain('<div id="app"></div>');
  // The script and styles are inline: no src= or href= to fetch.
  expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
  expect(html).toContain("uplot");
  expect(html).not.toMatch(/cdn\.|unpkg\.com|jsdelivr|googleapis/);
  const head = await fetch(`${on.rpcUrl}/dashboard`, { method: "HEAD" });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe("");
  expect((await fetch(`${on.rpcUrl}/dashboard`, { method: "POST" })).status).toBe(405);
  // The routes are unchanged beside it.
  expect((await fetch(`${on.rpcUrl}/health`)).status).toBe(200);
});

test("default: without [rpc] dashboard the path is not found", async () => {
  expect((await fetch(`${off.rpcUrl}/dashboard`)).status).toBe(404);
});
