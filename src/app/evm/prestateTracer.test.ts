import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { createPrestateTracer } from "./prestateTracer.js";
import {
  deployErc20,
  erc20BalanceSlot,
  hexBytes as hex,
  erc20Interface as iface,
  runBlock,
  signTestTx,
  TestChains,
} from "./testing.js";
import { createFourByteTracer, createNoopTracer } from "./tracer.js";

const chains = new TestChains();
afterEach(() => chains.closeAll());

/** The token's balance slot of `holder`, as the tracer's 64-hex storage key. */
const balanceSlot = (holder: string) => bytesToHex(erc20BalanceSlot(hex(holder)));

const word = (n: bigint) => hex(n.toString(16).padStart(64, "0"));

async function tokenChain() {
  const c = await chains.open();
  const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
  const token = await deployErc20(c, w0, 0);
  const data = iface.encodeFunctionData("transfer", [w1.address, 5n]);
  await runBlock(c, [await signTestTx(w0, { nonce: 1, to: token, data, gasLimit: 80_000n })]);
  const txHash = c.app.reader.receipts(2)[0]?.txHash as Uint8Array;
  return { c, w0, w1, token, txHash };
}

describe("prestateTracer", () => {
  test("default: the state before the tx of every account and slot it touches", async () => {
    const { c, w0, w1, token, txHash } = await tokenChain();
    const r = await c.app.reader.traceTransaction(txHash, createPrestateTracer());
    expect(r.diffMode).toBe(false);
    const sender = r.pre.get(bytesToHex(hex(w0.address)));
    // Before gas was bought and the nonce bumped: the balance and nonce after block 1.
    expect(sender?.balance).toBe(c.app.reader.balance(hex(w0.address), 1));
    expect(sender?.nonce).toBe(1n);
    const t = r.pre.get(bytesToHex(token));
    expect(t?.nonce).toBe(1n);
    expect(t?.code).toEqual(c.app.reader.code(token, 1));
    const total = c.app.reader.storageAt(token, hex(balanceSlot(w0.address)), 1);
    expect(t?.storage.get(balanceSlot(w0.address))).toEqual(total);
    expect(t?.storage.get(balanceSlot(w1.address))).toEqual(new Uint8Array(32));
    // The recipient of the tokens is only a storage key: its account is not touched.
    expect(r.pre.has(bytesToHex(hex(w1.address)))).toBe(false);
  });

  test("behavior: diff mode gives pre and post of what changed only", async () => {
    const { c, w0, w1, token, txHash } = await tokenChain();
    const r = await c.app.reader.traceTransaction(txHash, createPrestateTracer({ diffMode: true }));
    expect(r.diffMode).toBe(true);
    const key = bytesToHex(token);
    // The token: two balance slots changed; code and nonce did not.
    const pre = r.pre.get(key);
    const post = r.post.get(key);
    const before = c.app.reader.storageAt(token, hex(balanceSlot(w0.address)), 1);
    expect(pre?.storage.get(balanceSlot(w0.address))).toEqual(before);
    expect(pre?.storage.has(balanceSlot(w1.address))).toBe(false); // zero before: absent from pre
    expect(post?.storage.get(balanceSlot(w1.address))).toEqual(word(5n));
    expect(post?.storage.get(balanceSlot(w0.address))).toEqual(word(BigInt(`0x${bytesToHex(before)}`) - 5n));
    expect(post?.nonce).toBeUndefined();
    expect(post?.code).toBeUndefined();
    // The sender: nonce and balance (gas) changed.
    const s = r.post.get(bytesToHex(hex(w0.address)));
    expect(s?.nonce).toBe(2n);
    expect(s?.balance).toBe(c.app.reader.balance(hex(w0.address), 2));
  });

  test("behavior: a contract creation leaves the new contract out of pre and puts its code in post", async () => {
    const c = await chains.open();
    const [w0] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet];
    const token = await deployErc20(c, w0, 0);
    const txHash = c.app.reader.receipts(1)[0]?.txHash as Uint8Array;
    const plain = await c.app.reader.traceTransaction(txHash, createPrestateTracer());
    expect(plain.pre.has(bytesToHex(token))).toBe(false);
    const diff = await c.app.reader.traceTransaction(txHash, createPrestateTracer({ diffMode: true }));
    expect(diff.pre.has(bytesToHex(token))).toBe(false);
    expect(diff.post.get(bytesToHex(token))?.code).toEqual(c.app.reader.code(token, 1));
  });

  test("behavior: traceCall sees the call's touched state; disableCode and disableStorage leave them out", async () => {
    const { c, w0, token } = await tokenChain();
    const r = await c.app.reader.traceCall(
      { from: hex(w0.address), to: token, data: hex(iface.encodeFunctionData("balanceOf", [w0.address])) },
      createPrestateTracer({ disableCode: true, disableStorage: true }),
    );
    const t = r.pre.get(bytesToHex(token));
    expect(t).toBeDefined();
    expect(t?.code).toBeUndefined();
    expect(t?.storage.size).toBe(0);
  });
});

describe("4byteTracer and noopTracer", () => {
  test("default: 4byteTracer counts selector-size pairs of the calls; noopTracer answers an empty object", async () => {
    const { c, w0, token, txHash } = await tokenChain();
    const counts = await c.app.reader.traceTransaction(txHash, createFourByteTracer());
    expect([...counts]).toEqual([["0xa9059cbb-64", 1]]);
    // A call to a precompile (identity, 0x04) and a deployment (CREATE) count nothing.
    const precompile = await c.app.reader.traceCall(
      { from: hex(w0.address), to: hex("0x0000000000000000000000000000000000000004"), data: hex("0xdeadbeef00") },
      createFourByteTracer(),
    );
    expect(precompile.size).toBe(0);
    const deploy = await c.app.reader.traceTransaction(
      c.app.reader.receipts(1)[0]?.txHash as Uint8Array,
      createFourByteTracer(),
    );
    expect(deploy.size).toBe(0);
    expect(await c.app.reader.traceTransaction(txHash, createNoopTracer())).toEqual({});
    expect(token.length).toBe(20);
  });
});
