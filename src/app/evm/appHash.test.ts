import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { deployErc20, erc20Interface, hexBytes, runBlock, signTestTx, type TestChain, TestChains } from "./testing.js";

/**
 * The app hashes of a fixed chain, recorded when @ethereumjs/vm executed every block: cometh's own EVM
 * must give the same hashes, receipts and tx results, so existing chains keep their state.
 */

const chains = new TestChains();
afterEach(() => chains.closeAll());

const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const CHAIN_ID = 262144n;

function hex(b: Uint8Array | undefined): string {
  return Buffer.from(b ?? []).toString("hex");
}

/** Blocks 1–4: a token, its transfers and failures, and EIP-7702 delegations set and cleared. */
async function buildChain(chain: TestChain): Promise<string[]> {
  const wallet = new Wallet(KEY);
  const hashes: string[] = [];
  const token = await deployErc20(chain, wallet, 0);
  hashes.push(hex(chain.app.reader.receipts(chain.height)[0]?.contractAddress), hex(await lastAppHash(chain)));
  const transfer = (to: string, amount: bigint) => erc20Interface.encodeFunctionData("transfer", [to, amount]);
  const block2 = await runBlock(chain, [
    await signTestTx(wallet, {
      nonce: 1,
      to: token,
      data: transfer(`0x${"a1".padStart(40, "0")}`, 7n),
      gasLimit: 100_000n,
    }),
    await signTestTx(wallet, {
      nonce: 2,
      to: token,
      data: transfer(`0x${"a2".padStart(40, "0")}`, 10n ** 40n),
      gasLimit: 100_000n,
    }),
    await signTestTx(wallet, { nonce: 3, to: hexBytes("a3".padStart(40, "0")), value: 5n, gasLimit: 21_000n }),
    await signTestTx(wallet, {
      nonce: 4,
      to: token,
      data: transfer(`0x${"a4".padStart(40, "0")}`, 1n),
      gasLimit: 25_000n,
    }),
    await signTestTx(wallet, { nonce: 5, data: "0x60006000fd", gasLimit: 60_000n }),
    // Init code that deploys a contract whose code is `SELFDESTRUCT(caller)`.
    await signTestTx(wallet, { nonce: 6, data: "0x6002600c60003960026000f333ff", gasLimit: 100_000n }),
  ]);
  hashes.push(hex(block2.response.appHash));
  hashes.push(JSON.stringify(block2.response.txResults.map((t) => [t.code, String(t.gasUsed), t.log])));
  // EIP-7702: the wallet delegates to the token (self-sponsored: the tuple names nonce + 1), calls itself.
  const delegate = await wallet.authorize({ address: `0x${hex(token)}`, nonce: 8, chainId: CHAIN_ID });
  const setCode = await wallet.signTransaction({
    type: 4,
    chainId: CHAIN_ID,
    nonce: 7,
    to: wallet.address,
    data: transfer(`0x${"a5".padStart(40, "0")}`, 0n),
    gasLimit: 200_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
    authorizationList: [delegate],
  });
  const block3 = await runBlock(chain, [hexBytes(setCode)]);
  hashes.push(hex(block3.response.appHash), hex(chain.app.reader.code(hexBytes(wallet.address))));
  hashes.push(JSON.stringify(block3.response.txResults.map((t) => [t.code, String(t.gasUsed), t.log])));
  const clear = await wallet.authorize({ address: `0x${"00".repeat(20)}`, nonce: 10, chainId: CHAIN_ID });
  const clearTx = await wallet.signTransaction({
    type: 4,
    chainId: CHAIN_ID,
    nonce: 9,
    to: `0x${"a6".padStart(40, "0")}`,
    gasLimit: 100_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
    authorizationList: [clear],
  });
  const block4 = await runBlock(chain, [hexBytes(clearTx)]);
  hashes.push(hex(block4.response.appHash), hex(chain.app.reader.code(hexBytes(wallet.address))));
  hashes.push(JSON.stringify(block4.response.txResults.map((t) => [t.code, String(t.gasUsed), t.log])));
  return hashes;
}

async function lastAppHash(chain: TestChain): Promise<Uint8Array> {
  return (await chain.app.info()).lastBlockAppHash;
}

describe("app hashes of a fixed chain", () => {
  test("behavior: blocks give the app hashes recorded under @ethereumjs/vm", async () => {
    const chain = await chains.open();
    expect(await buildChain(chain)).toMatchInlineSnapshot(`
      [
        "5fbdb2315678afecb367f032d93f642f64180aa3",
        "7f4a37e15970b6289934cf59139b3da67b75ae8357bb63acee10bd2bdfb6527f",
        "b69ac6237b4d51983932b0eb30a9b11d44e067c86b3be6fc891dfffae21e63ab",
        "[[0,"50555",""],[0,"50000",""],[0,"21000",""],[0,"25000",""],[0,"53064",""],[0,"53626",""]]",
        "4cb368a2635f3dd2d8f8acb3162e4fe48c3fa549a8551d1d76422265ec14720f",
        "ef01005fbdb2315678afecb367f032d93f642f64180aa3",
        "[[0,"100000",""]]",
        "3940c0542af23374d9cd7d9e5393c19782b7a708001fe2fcf589aa171d136c31",
        "",
        "[[0,"50000",""]]",
      ]
    `);
  });
});
