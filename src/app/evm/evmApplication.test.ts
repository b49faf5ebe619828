import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContractFactory, getAddress, Transaction, Wallet, zeroPadValue } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import erc20 from "../../../test/data/erc20.json" with { type: "json" };
import { bytesToHex } from "../../util/bytes.js";
import { silentLogger } from "../../util/logger.js";
import { DEV_ACCOUNT_BALANCE_WEI, toChecksumAddress } from "./devAccounts.js";
import { CHECK_TX_CODES, GasEstimationError } from "./errors.js";
import { createEvmApp, type EvmApplication } from "./evmApplication.js";
import {
  closeTestChain,
  hexBytes as hex,
  erc20Interface as iface,
  type openTestChain,
  runBlock,
  type TestChain,
  TestChains,
} from "./testing.js";

const CHAIN_ID = 262144n;
const GWEI = 1_000_000_000n;

const chains = new TestChains();
afterEach(() => chains.closeAll());

function chain(opts: Parameters<typeof openTestChain>[0] = {}): Promise<TestChain> {
  return chains.open(opts);
}

function wallets(app: EvmApplication): Wallet[] {
  return app.devAccounts().map((a) => new Wallet(a.privateKey));
}

interface TxFields {
  nonce: number;
  to?: string;
  value?: bigint;
  data?: string;
  gasLimit?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  chainId?: bigint;
}

async function sign(w: Wallet, f: TxFields): Promise<Uint8Array> {
  const signed = await w.signTransaction({
    type: 2,
    chainId: f.chainId ?? CHAIN_ID,
    nonce: f.nonce,
    to: f.to ?? null,
    value: f.value ?? 0n,
    data: f.data ?? "0x",
    gasLimit: f.gasLimit ?? 21000n,
    maxFeePerGas: f.maxFeePerGas ?? 2n * GWEI,
    maxPriorityFeePerGas: f.maxPriorityFeePerGas ?? GWEI / 10n,
  });
  return hex(signed);
}

async function deployToken(c: TestChain, w: Wallet, nonce: number): Promise<Uint8Array> {
  const deploy = await new ContractFactory(erc20.abi, erc20.bytecode).getDeployTransaction();
  const tx = await sign(w, { nonce, data: deploy.data, gasLimit: 400_000n });
  expect((await c.app.checkTx({ tx, type: 0 })).code).toBe(0);
  await runBlock(c, [tx]);
  const r = c.app.reader.receipts(c.height)[0];
  expect(r?.status).toBe(1);
  return r?.contractAddress as Uint8Array;
}

async function tokenBalance(c: TestChain, token: Uint8Array, who: string): Promise<bigint> {
  const res = await c.app.reader.call({ to: token, data: hex(iface.encodeFunctionData("balanceOf", [who])) });
  return iface.decodeFunctionResult("balanceOf", res.returnData)[0] as bigint;
}

function attrs(events: { type: string; attributes: { key: string; value: string; index: boolean }[] }[], type: string) {
  return events
    .filter((e) => e.type === type)
    .map((e) => Object.fromEntries(e.attributes.map((a) => [a.key, a.value])));
}

describe("EvmApplication", () => {
  test("default: dev accounts are Hardhat's, funded with 10000 ETH", async () => {
    const c = await chain();
    const accounts = c.app.devAccounts();
    expect(accounts).toHaveLength(10);
    expect(accounts[0]?.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(accounts[0]?.privateKey).toBe("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    expect(accounts[9]?.address).toBe("0xa0Ee7A142d267C1f36714E4a8F75612F20a79720");
    for (const a of accounts) expect(c.app.reader.balance(a.addressBytes)).toBe(DEV_ACCOUNT_BALANCE_WEI);
    expect(c.app.reader.latestHeight()).toBe(0);
  });

  test("behavior: a transfer moves value, pays fees and emits Cosmos EVM's events", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const tx = await sign(w0, { nonce: 0, to: w1.address, value: 10n ** 18n });
    const check = await c.app.checkTx({ tx, type: 0 });
    expect(check).toMatchObject({ code: 0, gasWanted: 21000n });
    expect(c.app.pendingNonce(hex(w0.address))).toBe(1n);
    const { response } = await runBlock(c, [tx]);
    const result = response.txResults[0];
    expect(result?.code).toBe(0);
    const ethHash = Transaction.from(`0x${bytesToHex(tx)}`).hash as string;
    const [ante, exec] = attrs(result?.events ?? [], "ethereum_tx");
    expect(ante).toEqual({ ethereumTxHash: ethHash, txIndex: "0" });
    expect(exec).toMatchObject({
      amount: "1000000000000000000",
      ethereumTxHash: ethHash,
      txIndex: "0",
      txGasUsed: "21000",
      recipient: w1.address,
    });
    expect(exec?.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(result?.events.find((e) => e.type === "ethereum_tx")?.attributes.every((a) => a.index)).toBe(true);
    expect(attrs(result?.events ?? [], "message")[0]).toEqual({ module: "evm", sender: w0.address, txType: "2" });
    expect(c.app.reader.balance(hex(w1.address))).toBe(DEV_ACCOUNT_BALANCE_WEI + 10n ** 18n);
    expect(c.app.reader.nonce(hex(w0.address))).toBe(1n);
    const receipt = c.app.reader.receiptByHash(hex(ethHash));
    expect(receipt).toMatchObject({ height: 1, txIndex: 0, status: 1, gasUsed: 21000n, cumulativeGasUsed: 21000n });
    expect(c.app.reader.txLocation(hex(ethHash))).toEqual({ height: 1, index: 0 });
    const view = c.app.reader.transaction(hex(ethHash));
    expect(view?.from).toEqual(hex(w0.address));
    expect(view?.location?.height).toBe(1);
  });

  test("behavior: ERC-20 deploy, transfer, Transfer log with block-wide index and bloom", async () => {
    const c = await chain();
    const [w0, w1, w2] = wallets(c.app) as [Wallet, Wallet, Wallet];
    const token = await deployToken(c, w0, 0);
    expect(toChecksumAddress(token)).toBe("0x5FbDB2315678afecb367f032d93F642f64180aa3");
    expect(c.app.reader.code(token).length).toBeGreaterThan(100);
    expect(await tokenBalance(c, token, w0.address)).toBe(10n ** 24n);
    const to = toChecksumAddress(token);
    const t1 = await sign(w0, {
      nonce: 1,
      to,
      data: iface.encodeFunctionData("transfer", [w1.address, 500n]),
      gasLimit: 60_000n,
    });
    const t2 = await sign(w0, {
      nonce: 2,
      to,
      data: iface.encodeFunctionData("transfer", [w2.address, 700n]),
      gasLimit: 60_000n,
    });
    for (const t of [t1, t2]) expect((await c.app.checkTx({ tx: t, type: 0 })).code).toBe(0);
    const { response } = await runBlock(c, [t1, t2]);
    expect(response.txResults.map((r) => r.code)).toEqual([0, 0]);
    expect(await tokenBalance(c, token, w1.address)).toBe(500n);
    expect(await tokenBalance(c, token, w2.address)).toBe(700n);
    const receipts = c.app.reader.receipts(c.height);
    expect(receipts.map((r) => r.logs.map((l) => l.logIndex))).toEqual([[0], [1]]);
    const log = receipts[1]?.logs[0];
    const parsed = iface.parseLog({
      topics: (log?.topics ?? []).map((t) => `0x${bytesToHex(t)}`),
      data: `0x${bytesToHex(log?.data ?? new Uint8Array())}`,
    });
    expect(parsed?.name).toBe("Transfer");
    expect(parsed?.args.to).toBe(w2.address);
    expect(parsed?.args.value).toBe(700n);
    expect(receipts[1]?.cumulativeGasUsed).toBe((receipts[0]?.gasUsed ?? 0n) + (receipts[1]?.gasUsed ?? 0n));
    const logs = c.app.reader.logs({
      fromHeight: 0,
      toHeight: c.height,
      addresses: [token],
      topics: [null, null, [hex(zeroPadValue(w2.address, 32))]],
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]?.logIndex).toBe(1);
    // The second read comes from the decoded-receipts cache and must be the same.
    const all = () => c.app.reader.logs({ fromHeight: c.height, toHeight: c.height, addresses: [token] });
    const first = all();
    expect(first).toHaveLength(2);
    expect(all()).toEqual(first);
    expect(first.map((l) => l.txHash)).toEqual(receipts.map((r) => r.txHash));
    const block = c.app.reader.block(c.height);
    expect(block?.logsBloom.some((b) => b !== 0)).toBe(true);
    expect(block?.txHashes).toHaveLength(2);
    const txLog = attrs(response.txResults[1]?.events ?? [], "tx_log")[0];
    // Ethermint's text: JSON.stringify of the log object in its key order (the app writes it out by hand).
    expect(txLog?.txLog).toBe(
      JSON.stringify({
        address: getAddress(`0x${bytesToHex(token)}`),
        topics: (log?.topics ?? []).map((t) => `0x${bytesToHex(t)}`),
        data: Buffer.from(log?.data ?? new Uint8Array()).toString("base64"),
        blockNumber: 2,
        transactionHash: `0x${bytesToHex(receipts[1]?.txHash ?? new Uint8Array())}`,
        transactionIndex: 1,
        blockHash: `0x${bytesToHex(c.app.reader.block(c.height)?.hash ?? new Uint8Array())}`,
        logIndex: 1,
        removed: false,
      }),
    );
  });

  test("behavior: a block that changes no state but the EIP-2935 history keeps the app hash", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const empty1 = (await runBlock(c, [])).response.appHash;
    const empty2 = (await runBlock(c, [])).response.appHash;
    expect(empty2).toEqual(empty1);
    // The history contract was still written: BLOCKHASH-by-contract reads it.
    const slot = new Uint8Array(32);
    slot[31] = c.height % 256;
    expect(c.app.reader.storageAt(hex("0000F90827F1C53a10cb7A02335B175320002935"), slot).some((b) => b !== 0)).toBe(
      true,
    );
    const withTx = (await runBlock(c, [await sign(w0, { nonce: 0, to: w1.address, value: 1n })])).response.appHash;
    expect(withTx).not.toEqual(empty2);
    expect((await runBlock(c, [])).response.appHash).toEqual(withTx);
  });

  test("behavior: a block's receipts and hash are found only once its height is published as latest", async () => {
    const c = await chain();
    const [w0] = wallets(c.app) as [Wallet];
    const raw = await w0.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      to: w0.address,
      value: 1n,
      gasLimit: 21000n,
      maxFeePerGas: 10n * GWEI,
      maxPriorityFeePerGas: 1n,
    });
    const ethHash = hex(Transaction.from(raw).hash as string);
    // Between the LMDB commit (rows readable) and endCommit (height published), lookups by hash must
    // not see the new block: a client would then read "latest" state from before it.
    const seen: unknown[] = [];
    const endCommit = c.app.db.endCommit.bind(c.app.db);
    c.app.db.endCommit = (meta, diff) => {
      seen.push(c.app.reader.receiptByHash(ethHash), c.app.reader.txLocation(ethHash), c.app.reader.latestHeight());
      endCommit(meta, diff);
    };
    await runBlock(c, [hex(raw)]);
    expect(seen).toEqual([undefined, undefined, 0]);
    const receipt = c.app.reader.receiptByHash(ethHash);
    expect(receipt?.height).toBe(1);
    expect(c.app.reader.blockByHash(c.app.reader.block(1)?.hash as Uint8Array)?.height).toBe(1);
  });

  test("behavior: call results are memoized per height, never across heights or with overrides", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const token = await deployToken(c, w0, 0);
    const balanceOf = { to: token, data: hex(iface.encodeFunctionData("balanceOf", [w1.address])) };
    expect(c.app.reader.peekCall(balanceOf)).toBeUndefined();
    // Asked once: run, not kept (callMemo.ts's doorkeeper); asked again: kept, then answered from the memo.
    const once = await c.app.reader.call(balanceOf);
    expect(c.app.reader.peekCall(balanceOf)).toBeUndefined();
    const first = await c.app.reader.call(balanceOf);
    expect(first).not.toBe(once);
    expect(first).toEqual(once);
    expect(c.app.reader.peekCall(balanceOf)).toBe(first);
    expect(await c.app.reader.call(balanceOf)).toBe(first);
    const fromW0 = { ...balanceOf, from: hex(w0.address) };
    await c.app.reader.call(fromW0);
    expect(await c.app.reader.call(fromW0)).not.toBe(first);
    const overrides = [{ address: hex(w1.address), nonce: 1n }];
    await c.app.reader.call(balanceOf, { overrides });
    const overridden = await c.app.reader.call(balanceOf, { overrides });
    expect(overridden).not.toBe(first);
    expect(overridden.returnData).toEqual(first.returnData);
    const before = c.height;
    const send = iface.encodeFunctionData("transfer", [w1.address, 5n]);
    await runBlock(c, [await sign(w0, { nonce: 1, to: toChecksumAddress(token), data: send, gasLimit: 80_000n })]);
    // Asked twice at the new height (the second time it is kept): never the older height's result.
    expect(await tokenBalance(c, token, w1.address)).toBe(5n);
    expect(await tokenBalance(c, token, w1.address)).toBe(5n);
    // The older height still answers from its own state.
    const old = await c.app.reader.call(balanceOf, { height: before });
    expect(iface.decodeFunctionResult("balanceOf", old.returnData)[0]).toBe(0n);
  });

  test("error: revert with reason, in a block, eth_call and estimateGas", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const token = await deployToken(c, w0, 0);
    const data = iface.encodeFunctionData("transfer", [w0.address, 1n]);
    const tx = await sign(w1, { nonce: 0, to: toChecksumAddress(token), data, gasLimit: 60_000n });
    const { response } = await runBlock(c, [tx]);
    expect(response.txResults[0]?.code).toBe(0);
    const receipt = c.app.reader.receipts(c.height)[0];
    expect(receipt?.status).toBe(0);
    expect(receipt?.vmError).toBe("execution reverted");
    expect(iface.parseError(`0x${bytesToHex(receipt?.returnData ?? new Uint8Array())}`)?.args[0]).toBe(
      "ERC20: transfer amount exceeds balance",
    );
    expect(attrs(response.txResults[0]?.events ?? [], "ethereum_tx")[1]?.ethereumTxFailed).toBe("execution reverted");
    expect(c.app.reader.nonce(hex(w1.address))).toBe(1n);
    const call = await c.app.reader.call({ from: hex(w1.address), to: token, data: hex(data) });
    expect(call.status).toBe("reverted");
    expect(iface.parseError(`0x${bytesToHex(call.returnData)}`)?.args[0]).toBe(
      "ERC20: transfer amount exceeds balance",
    );
    const est = c.app.reader.estimateGas({ from: hex(w1.address), to: token, data: hex(data) });
    await expect(est).rejects.toBeInstanceOf(GasEstimationError);
    await expect(est).rejects.toMatchObject({ message: "execution reverted" });
    const ok = await c.app.reader.estimateGas({
      from: hex(w0.address),
      to: token,
      data: hex(iface.encodeFunctionData("transfer", [w1.address, 1n])),
    });
    expect(ok).toBeGreaterThan(21000n);
    expect(ok).toBeLessThan(60_000n);
    expect(await c.app.reader.estimateGas({ from: hex(w0.address), to: hex(w1.address), value: 1n })).toBe(21000n);
  });

  test("error: CheckTx before the app has state (no InitChain yet, or a state sync still restoring) says why", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cometh-evm-nostate-"));
    const app = await createEvmApp({ dbDir: dir, log: silentLogger() });
    try {
      const wallet = new Wallet(`0x${"11".repeat(32)}`);
      const raw = await wallet.signTransaction({
        to: wallet.address,
        gasLimit: 21_000n,
        gasPrice: GWEI,
        chainId: CHAIN_ID,
      });
      await expect(
        app.checkTx({ tx: hex(raw.slice(2)), type: 0 } as Parameters<EvmApplication["checkTx"]>[0]),
      ).rejects.toThrow(
        "the EVM app has no state yet: it waits for InitChain, or for state sync to restore a snapshot",
      );
    } finally {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("error: out of gas consumes the whole gas limit", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const token = await deployToken(c, w0, 0);
    const data = iface.encodeFunctionData("transfer", [w1.address, 1n]);
    const tx = await sign(w0, { nonce: 1, to: toChecksumAddress(token), data, gasLimit: 25_000n });
    await runBlock(c, [tx]);
    const r = c.app.reader.receipts(c.height)[0];
    expect(r).toMatchObject({ status: 0, vmError: "out of gas", gasUsed: 25_000n });
    expect(await tokenBalance(c, token, w1.address)).toBe(0n);
  });

  test("error: nonce too low, and a nonce gap waits until filled", async () => {
    const c = await chain();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const to = w1.address;
    const t0 = await sign(w0, { nonce: 0, to, value: 1n });
    await c.app.checkTx({ tx: t0, type: 0 });
    await runBlock(c, [t0]);
    const low = await c.app.checkTx({ tx: await sign(w0, { nonce: 0, to, value: 2n }), type: 0 });
    expect(low.code).toBe(CHECK_TX_CODES.invalidSequence);
    expect(low.codespace).toBe("sdk");
    expect(low.log).toMatchInlineSnapshot(`"nonce too low: next nonce 1, tx nonce 0"`);
    const t2 = await sign(w0, { nonce: 2, to, value: 1n });
    const t1 = await sign(w0, { nonce: 1, to, value: 1n });
    expect((await c.app.checkTx({ tx: t2, type: 0 })).code).toBe(0);
    expect(c.app.pendingNonce(hex(w0.address))).toBe(1n);
    // Only the gapped tx: the proposal leaves it out.
    expect((await runBlock(c, [t2])).txs).toHaveLength(0);
    expect((await c.app.checkTx({ tx: t2, type: 1 })).code).toBe(0);
    expect((await c.app.checkTx({ tx: t1, type: 0 })).code).toBe(0);
    expect(c.app.pendingNonce(hex(w0.address))).toBe(3n);
    // Arrival order t2, t1: the proposal orders by nonce.
    const { txs } = await runBlock(c, [t2, t1]);
    expect(txs).toEqual([t1, t2]);
    expect(c.app.reader.nonce(hex(w0.address))).toBe(3n);
    const high = await c.app.checkTx({ tx: await sign(w0, { nonce: 3 + 64, to }), type: 0 });
    expect(high.code).toBe(CHECK_TX_CODES.invalidSequence);
    expect(high.log).toMatch(/^nonce too high/);
    const dupA = await sign(w0, { nonce: 3, to, value: 1n });
    const dupB = await sign(w0, { nonce: 3, to, value: 2n });
    expect((await c.app.checkTx({ tx: dupA, type: 0 })).code).toBe(0);
    expect((await c.app.checkTx({ tx: dupB, type: 0 })).log).toMatch(/^replacement transaction underpriced/);
    // A block built elsewhere with a wrong nonce: the tx fails, nothing changes.
    const { response } = await runBlock(c, [await sign(w0, { nonce: 9, to, value: 1n })], { prepare: false });
    expect(response.txResults[0]).toMatchObject({
      code: CHECK_TX_CODES.invalidSequence,
      log: "nonce too high: next nonce 3, tx nonce 9",
    });
  });

  test("error: replay across chain ids and unprotected txs", async () => {
    const c = await chain();
    const other = await chain({ chainId: 1n });
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const forMainnet = await sign(w0, { nonce: 0, to: w1.address, value: 1n, chainId: 1n });
    const res = await c.app.checkTx({ tx: forMainnet, type: 0 });
    expect(res.code).toBe(CHECK_TX_CODES.invalidChainId);
    expect(res.log).toMatchInlineSnapshot(
      `"incorrect chain-id; expected 262144, got 1. Sign the tx for chain id 262144"`,
    );
    expect((await other.app.checkTx({ tx: forMainnet, type: 0 })).code).toBe(0);
    const ours = await sign(w0, { nonce: 0, to: w1.address, value: 1n });
    expect((await other.app.checkTx({ tx: ours, type: 0 })).code).toBe(CHECK_TX_CODES.invalidChainId);

    const legacy = Transaction.from({
      type: 0,
      nonce: 0,
      to: w1.address,
      value: 1n,
      gasLimit: 21000n,
      gasPrice: 2n * GWEI,
    });
    legacy.signature = w0.signingKey.sign(legacy.unsignedHash);
    const unprotected = hex(legacy.serialized);
    const refused = await c.app.checkTx({ tx: unprotected, type: 0 });
    expect(refused.code).toBe(CHECK_TX_CODES.invalidSigner);
    expect(refused.log).toMatch(/^only replay-protected \(EIP-155\) transactions allowed over RPC/);
    const lax = await chain({ allowUnprotectedTxs: true });
    expect((await lax.app.checkTx({ tx: unprotected, type: 0 })).code).toBe(0);
    await runBlock(lax, [unprotected]);
    expect(lax.app.reader.receipts(1)[0]?.status).toBe(1);

    const eip155 = hex(
      await w0.signTransaction({
        type: 0,
        chainId: CHAIN_ID,
        nonce: 0,
        to: w1.address,
        gasLimit: 21000n,
        gasPrice: 2n * GWEI,
      }),
    );
    expect((await c.app.checkTx({ tx: eip155, type: 0 })).code).toBe(0);
    const blob = new Uint8Array([3, 0xc0]);
    const blobRes = await c.app.checkTx({ tx: blob, type: 0 });
    expect(blobRes.code).toBe(CHECK_TX_CODES.txDecode);
    expect(blobRes.log).toMatch(/^transaction type not supported: EIP-4844/);
    expect((await c.app.checkTx({ tx: new Uint8Array([1, 2, 3]), type: 0 })).code).toBe(CHECK_TX_CODES.txDecode);
  });

  test("error: insufficient funds, fee below base fee, intrinsic gas", async () => {
    const c = await chain();
    const [w0] = wallets(c.app) as [Wallet];
    const poor = Wallet.createRandom();
    const res = await c.app.checkTx({
      tx: await sign(new Wallet(poor.privateKey), { nonce: 0, to: w0.address, value: 1n }),
      type: 0,
    });
    expect(res.code).toBe(CHECK_TX_CODES.insufficientFunds);
    expect(res.log).toBe(
      // geth's txpool text.
      `insufficient funds for gas * price + value: balance 0, tx cost ${21000n * 2n * GWEI + 1n}, overshot ${21000n * 2n * GWEI + 1n}`,
    );
    const cheap = await c.app.checkTx({
      tx: await sign(w0, { nonce: 0, to: w0.address, maxFeePerGas: 1000n, maxPriorityFeePerGas: 1n }),
      type: 0,
    });
    expect(cheap.code).toBe(CHECK_TX_CODES.insufficientFee);
    expect(cheap.log).toMatch(/^max fee per gas less than block base fee \(1000 < 875000000\)/);
    const low = await c.app.checkTx({ tx: await sign(w0, { nonce: 0, to: w0.address, gasLimit: 20_000n }), type: 0 });
    expect(low).toMatchObject({
      code: CHECK_TX_CODES.outOfGas,
      log: "intrinsic gas too low: gas 20000, minimum needed 21000",
    });
    // The second tx would overspend what the first left.
    const all = DEV_ACCOUNT_BALANCE_WEI - 21000n * 2n * GWEI;
    expect(
      (await c.app.checkTx({ tx: await sign(w0, { nonce: 0, to: poor.address, value: all }), type: 0 })).code,
    ).toBe(0);
    const over = await c.app.checkTx({ tx: await sign(w0, { nonce: 1, to: poor.address, value: 1n }), type: 0 });
    expect(over.code).toBe(CHECK_TX_CODES.insufficientFunds);
  });

  test("behavior: EIP-1559 fee accounting to the wei, base fee as Cosmos EVM's feemarket", async () => {
    const c = await chain({ maxGas: 30_000_000n });
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const coinbase = c.proposer;
    const before = {
      sender: c.app.reader.balance(hex(w0.address)),
      recipient: c.app.reader.balance(hex(w1.address)),
      coinbase: c.app.reader.balance(coinbase),
    };
    const tip = 3_000_000n;
    const value = 123_456_789n;
    // gasLimit 30000 > 2 × 21000 is not reached: the 0.5 multiplier floor is 15000, below 21000.
    const tx = await sign(w0, {
      nonce: 0,
      to: w1.address,
      value,
      gasLimit: 30_000n,
      maxFeePerGas: 5n * GWEI,
      maxPriorityFeePerGas: tip,
    });
    await runBlock(c, [tx]);
    const block1 = c.app.reader.block(1);
    // Height 1 (enable_height 0): 1 gwei lowered by 1/8 (empty parent).
    expect(block1?.baseFee).toBe(875_000_000n);
    const r = c.app.reader.receipts(1)[0];
    expect(r?.effectiveGasPrice).toBe(875_000_000n + tip);
    expect(r?.gasUsed).toBe(21000n);
    expect(c.app.reader.balance(hex(w0.address))).toBe(before.sender - value - 21000n * (875_000_000n + tip));
    expect(c.app.reader.balance(hex(w1.address))).toBe(before.recipient + value);
    expect(c.app.reader.balance(coinbase)).toBe(before.coinbase + 21000n * tip);
    // Parent gas wanted 30000·0.5 < used 21000 → 21000 against a 15M target: the fee falls.
    const expected2 = 875_000_000n - (875_000_000n * (15_000_000n - 21_000n)) / 15_000_000n / 8n;
    expect(c.app.reader.nextBaseFee()).toBe(expected2);
    // A generous gas limit is charged at half (min_gas_multiplier 0.5).
    const big = await sign(w0, {
      nonce: 1,
      to: w1.address,
      gasLimit: 100_000n,
      maxFeePerGas: 5n * GWEI,
      maxPriorityFeePerGas: tip,
    });
    const senderBefore = c.app.reader.balance(hex(w0.address));
    const coinbaseBefore = c.app.reader.balance(coinbase);
    const { response } = await runBlock(c, [big]);
    expect(c.app.reader.block(2)?.baseFee).toBe(expected2);
    const r2 = c.app.reader.receipts(2)[0];
    expect(r2?.gasUsed).toBe(50_000n);
    expect(response.txResults[0]?.gasUsed).toBe(50_000n);
    expect(c.app.reader.balance(hex(w0.address))).toBe(senderBefore - 50_000n * (expected2 + tip));
    expect(c.app.reader.balance(coinbase)).toBe(coinbaseBefore + 50_000n * tip);
    expect(attrs(response.events, "fee_market")[0]?.base_fee).toBe(`${expected2}.000000000000000000`);
  });

  test("behavior: restart keeps balances, code and storage; state at past heights stays readable", async () => {
    const c = await chains.open();
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const token = await deployToken(c, w0, 0);
    const t = await sign(w0, {
      nonce: 1,
      to: toChecksumAddress(token),
      data: iface.encodeFunctionData("transfer", [w1.address, 42n]),
      gasLimit: 60_000n,
    });
    await runBlock(c, [t]);
    const appHash = c.app.db.meta()?.appHash;
    await closeTestChain(c, { keep: true });
    const again = await chain({ dir: c.dir });
    expect(again.height).toBe(2);
    expect(again.app.db.meta()?.appHash).toEqual(appHash);
    expect((await again.app.info()).lastBlockHeight).toBe(2);
    expect(await tokenBalance(again, token, w1.address)).toBe(42n);
    expect(again.app.reader.code(token)).toEqual(hex(erc20.deployedBytecode));
    const past = await again.app.reader.call(
      { to: token, data: hex(iface.encodeFunctionData("balanceOf", [w1.address])) },
      { height: 1 },
    );
    expect(iface.decodeFunctionResult("balanceOf", past.returnData)[0]).toBe(0n);
    expect(again.app.reader.nonce(hex(w0.address), 0)).toBe(0n);
    await runBlock(again, [await sign(w0, { nonce: 2, to: w1.address, value: 1n })]);
    expect(again.app.reader.nonce(hex(w0.address))).toBe(3n);
  });

  test("behavior: app hash is deterministic across two instances", async () => {
    const a = await chain();
    const b = await chain();
    const [w0, w1] = wallets(a.app) as [Wallet, Wallet];
    expect(a.app.db.meta()?.appHash).toEqual(b.app.db.meta()?.appHash);
    const deploy = await new ContractFactory(erc20.abi, erc20.bytecode).getDeployTransaction();
    const blocks = [
      [
        await sign(w0, { nonce: 0, data: deploy.data, gasLimit: 400_000n }),
        await sign(w1, { nonce: 0, to: w0.address, value: 5n }),
      ],
      [
        await sign(w0, {
          nonce: 1,
          to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
          data: iface.encodeFunctionData("transfer", [w1.address, 9n]),
          gasLimit: 60_000n,
        }),
      ],
    ];
    for (const txs of blocks) {
      const ra = await runBlock(a, txs);
      const rb = await runBlock(b, txs);
      expect(ra.response.appHash).toEqual(rb.response.appHash);
      expect(ra.response.txResults).toEqual(rb.response.txResults);
    }
    expect(a.app.reader.block(2)?.receiptsRoot).toEqual(b.app.reader.block(2)?.receiptsRoot);
    // Different content, different hash.
    const c = await chain();
    await runBlock(c, [blocks[0]?.[1] as Uint8Array]);
    expect(c.app.db.meta()?.appHash).not.toEqual(a.app.reader.block(1)?.appHash);
  });

  test("behavior: abci_query paths", async () => {
    const c = await chain();
    const [w0] = wallets(c.app) as [Wallet];
    const token = await deployToken(c, w0, 0);
    const q = (path: string, height = 0) => c.app.query({ path, data: new Uint8Array(), height, prove: false });
    const dec = (v: Uint8Array) => new TextDecoder().decode(v);
    const acct = await q(`/evm/account/${w0.address}`);
    expect(acct.code).toBe(0);
    expect(JSON.parse(dec(acct.value))).toMatchObject({ address: w0.address, nonce: "1" });
    expect(dec((await q(`/evm/balance/${w0.address}`, 0)).value)).toBe(
      c.app.reader.balance(hex(w0.address)).toString(),
    );
    expect(dec((await q(`/evm/nonce/${w0.address}`, 0)).value)).toBe("1");
    expect((await q(`/evm/code/${toChecksumAddress(token)}`)).value).toEqual(hex(erc20.deployedBytecode));
    const slot2 = await q(`/evm/storage/${toChecksumAddress(token)}/0x02`);
    expect(BigInt(`0x${bytesToHex(slot2.value)}`)).toBe(10n ** 24n);
    const genesisNonce = await q(`/evm/nonce/${w0.address}`, 0);
    expect(genesisNonce.height).toBe(1);
    expect((await q("/evm/nope/0x00")).code).toBe(6);
    expect((await q(`/evm/balance/${w0.address}`, 9)).code).toBe(26);
  });

  test("config: [evm] min-tip leaves under-tipped txs (and the sender's later nonces) out of proposals", async () => {
    const c = await chain({ minTip: GWEI / 2n });
    const [w0, w1, w2] = wallets(c.app) as [Wallet, Wallet, Wallet];
    const fee = { maxFeePerGas: 10n * GWEI };
    const low = await sign(w0, { nonce: 0, to: w2.address, ...fee, maxPriorityFeePerGas: GWEI / 10n });
    const after = await sign(w0, { nonce: 1, to: w2.address, ...fee, maxPriorityFeePerGas: GWEI });
    const high = await sign(w1, { nonce: 0, to: w2.address, ...fee, maxPriorityFeePerGas: GWEI });
    // Admission does not look at the tip: the txs wait in the mempool.
    for (const tx of [low, after, high]) expect((await c.app.checkTx({ tx, type: 0 })).code).toBe(0);
    const { txs } = await runBlock(c, [low, after, high]);
    expect(txs.map((t) => bytesToHex(t))).toEqual([bytesToHex(high)]);
    // At exactly min-tip a tx is proposed; the effective tip of a legacy-priced tx is gasPrice − baseFee.
    const exact = await sign(w0, { nonce: 0, to: w2.address, ...fee, maxPriorityFeePerGas: GWEI / 2n });
    expect((await runBlock(c, [exact])).txs).toHaveLength(1);
    // A high priority fee does not help when the fee cap leaves less than min-tip above the base fee
    // (which does not rise after these near-empty blocks, so the cap still covers it).
    const baseFee = c.app.reader.block(c.height)?.baseFee ?? 0n;
    const cap = baseFee + GWEI / 10n;
    const capped = await sign(w1, { nonce: 1, to: w2.address, maxFeePerGas: cap, maxPriorityFeePerGas: cap });
    expect((await runBlock(c, [capped])).txs).toHaveLength(0);
    const uncapped = await sign(w1, {
      nonce: 1,
      to: w2.address,
      maxFeePerGas: baseFee + GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    expect((await runBlock(c, [uncapped])).txs).toHaveLength(1);
  });

  test("config: [evm] max-tx-gas-wanted caps the gas wanted CheckTx reports, not what blocks charge", async () => {
    const c = await chain({ maxTxGasWanted: 50_000n });
    const [w0, w1] = wallets(c.app) as [Wallet, Wallet];
    const big = await sign(w0, { nonce: 0, to: w1.address, gasLimit: 100_000n });
    const small = await sign(w0, { nonce: 1, to: w1.address, gasLimit: 21_000n });
    expect(await c.app.checkTx({ tx: big, type: 0 })).toMatchObject({ code: 0, gasWanted: 50_000n });
    expect(await c.app.checkTx({ tx: small, type: 0 })).toMatchObject({ code: 0, gasWanted: 21_000n });
    const { response } = await runBlock(c, [big, small]);
    expect(response.txResults.map((r) => r.gasWanted)).toEqual([100_000n, 21_000n]);
  });
});
