import { readFileSync } from "node:fs";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { Contract, ContractFactory, JsonRpcProvider, parseEther, parseUnits, Wallet, WebSocketProvider } from "ethers";
import {
  bytesToHex,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  hexToBytes,
  http,
  keccak256,
  parseAbi,
  parseAbiParameters,
  toBytes,
  webSocket,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Web3 } from "web3";
import { type InProcessEvmNode, startInProcessEvmNode } from "./inProcessNode.js";

/**
 * The Ethereum JSON-RPC of a real node (EVM app, consensus, LMDB) with the real clients: ethers v6,
 * viem and web3.js v4 — transfers, an ERC-20 deploy and transfer, logs, filters, subscriptions,
 * gas estimation, revert reasons, nonces and EIP-1559 fee fields.
 */

const KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
] as const;
const ERC20 = JSON.parse(readFileSync(new URL("../data/erc20.json", import.meta.url), "utf8")) as {
  abi: string[];
  bytecode: string;
};

let n: InProcessEvmNode;
let httpUrl: string;
let wsUrl: string;
let provider: JsonRpcProvider;

beforeAll(async () => {
  n = await startInProcessEvmNode();
  httpUrl = n.evmHttpUrl;
  wsUrl = n.evmWsUrl;
  provider = new JsonRpcProvider(httpUrl, undefined, { staticNetwork: true, pollingInterval: 100 });
});

afterAll(async () => {
  provider?.destroy();
  await n?.close();
});

/** The nonce of the tx that deployed `contract`. */
function deployNonce(contract: { deploymentTransaction(): { nonce: number } | null }): number {
  const tx = contract.deploymentTransaction();
  if (tx === null) throw new Error("the contract has no deployment transaction");
  return tx.nonce;
}

describe("ethers v6", () => {
  test("default: chain id, dev balances and block number", async () => {
    expect((await provider.getNetwork()).chainId).toBe(262144n);
    const w = new Wallet(KEYS[0]);
    expect(await provider.getBalance(w.address, 0)).toBe(parseEther("10000"));
    expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(1);
  });

  test("default: the genesis is block 0 and block 1's parent", async () => {
    const g = (await provider.send("eth_getBlockByNumber", ["earliest", false])) as { number: string; hash: string };
    expect(g.number).toBe("0x0");
    const b1 = (await provider.send("eth_getBlockByNumber", ["0x1", false])) as { parentHash: string };
    expect(b1.parentHash).toBe(g.hash);
    const byHash = (await provider.send("eth_getBlockByHash", [g.hash, false])) as { number: string };
    expect(byHash.number).toBe("0x0");
  });

  test("default: eth_maxPriorityFeePerGas is the most the base fee can rise in one block (Cosmos EVM)", async () => {
    // One batch: both answers describe the same head.
    const res = await fetch(httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "eth_feeHistory", params: ["0x1", "latest", []] },
        { jsonrpc: "2.0", id: 2, method: "eth_maxPriorityFeePerGas", params: [] },
        { jsonrpc: "2.0", id: 3, method: "eth_gasPrice", params: [] },
      ]),
    });
    const [history, tip, gasPrice] = (await res.json()) as [
      { result: { baseFeePerGas: string[] } },
      { result: string },
      { result: string },
    ];
    // Cosmos EVM's SuggestGasTipCap(head.BaseFee) and GasPrice: from the latest block's base fee
    // (baseFeePerGas[0]; [1] is the next block's). x/feemarket defaults: elasticity 2, denominator 8.
    const head = BigInt(history.result.baseFeePerGas[0] ?? "0x0");
    expect(BigInt(tip.result)).toBe(head / 8n);
    expect(BigInt(gasPrice.result)).toBe(head + head / 8n);
  });

  test("behavior: a legacy tx priced at eth_gasPrice estimates and is mined (cast send --legacy, ethers type 0)", async () => {
    const w = new Wallet(KEYS[3], provider);
    const to = new Wallet(KEYS[2]).address;
    const gasPrice = BigInt(await provider.send("eth_gasPrice", []));
    const gasLimit = await provider.estimateGas({ from: w.address, to, value: 1n, gasPrice, type: 0 });
    expect(gasLimit).toBe(21000n);
    const r = await (await w.sendTransaction({ to, value: 1n, gasPrice, gasLimit, type: 0 })).wait();
    expect(r?.status).toBe(1);
    // Cosmos EVM's calls never compare the price with the base fee: below it, a call still runs.
    const cheap = { from: w.address, to, value: "0x1", gasPrice: "0x1" };
    expect(await provider.send("eth_estimateGas", [cheap])).toBe("0x5208");
    expect(await provider.send("eth_call", [cheap, "latest"])).toBe("0x");
    const cheap1559 = { from: w.address, to, value: "0x1", maxFeePerGas: "0x2", maxPriorityFeePerGas: "0x1" };
    expect(await provider.send("eth_estimateGas", [cheap1559])).toBe("0x5208");
  });

  test("behavior: a transfer is mined with a receipt, EIP-1559 fees accounted to the wei", async () => {
    const w = new Wallet(KEYS[1], provider);
    const to = new Wallet(KEYS[2]).address;
    const before = await provider.getBalance(w.address);
    const toBefore = await provider.getBalance(to);
    const fee = await provider.getFeeData();
    expect(fee.maxFeePerGas).not.toBeNull();
    const tx = await w.sendTransaction({ to, value: parseEther("1.25"), type: 2 });
    const r = await tx.wait();
    expect(r?.status).toBe(1);
    if (!r) return;
    const block = await provider.getBlock(r.blockNumber);
    expect(block?.hash).toBe(r.blockHash);
    expect(block?.baseFeePerGas).not.toBeNull();
    // effectiveGasPrice = min(maxFee, baseFee + tip); the sender pays gasUsed × that, plus the value.
    const baseFee = block?.baseFeePerGas ?? 0n;
    const tip = tx.maxPriorityFeePerGas ?? 0n;
    const maxFee = tx.maxFeePerGas ?? 0n;
    const price = baseFee + tip < maxFee ? baseFee + tip : maxFee;
    expect(r.gasPrice).toBe(price);
    const after = await provider.getBalance(w.address);
    expect(before - after).toBe(parseEther("1.25") + r.gasUsed * r.gasPrice);
    expect((await provider.getBalance(to)) - toBefore).toBe(parseEther("1.25"));
    const got = await provider.getTransaction(tx.hash);
    expect(got?.blockNumber).toBe(r.blockNumber);
  });

  test("behavior: ERC-20 deploy, transfer, Transfer log in the receipt and getLogs", async () => {
    const w = new Wallet(KEYS[0], provider);
    const factory = new ContractFactory(ERC20.abi, ERC20.bytecode, w);
    const token = await factory.deploy();
    await token.waitForDeployment();
    const address = await token.getAddress();
    expect((await provider.getCode(address)).length).toBeGreaterThan(2);
    const c = new Contract(address, ERC20.abi, w);
    const to = new Wallet(KEYS[3]).address;
    const estimate = await c.getFunction("transfer").estimateGas(to, parseUnits("5", 18));
    expect(estimate).toBeGreaterThan(21000n);
    // The nonce given: ethers answers an identical request from its own cache for 250 ms
    // (cacheTimeout), so getNonce("pending") soon after the deploy was mined can still be the deploy's
    // nonce on a node this fast (seen in CI: "nonce too low: next nonce 1, tx nonce 0").
    const tx = await c.getFunction("transfer")(to, parseUnits("5", 18), { nonce: deployNonce(token) + 1 });
    const r = await tx.wait();
    expect(r.status).toBe(1);
    const parsed = r.logs.map((l: { topics: string[]; data: string }) => c.interface.parseLog(l));
    expect(parsed[0]?.name).toBe("Transfer");
    expect(parsed[0]?.args[1]).toBe(to);
    expect(await c.getFunction("balanceOf")(to)).toBe(parseUnits("5", 18));
    const logs = await provider.getLogs({
      address,
      fromBlock: r.blockNumber,
      toBlock: r.blockNumber,
      topics: [c.interface.getEvent("Transfer")?.topicHash ?? null],
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]?.transactionHash).toBe(r.hash);

    // A revert's reason reaches the client, from eth_call and eth_estimateGas.
    const poor = new Wallet(KEYS[2], provider);
    const asPoor = new Contract(address, ERC20.abi, poor);
    await expect(asPoor.getFunction("transfer").staticCall(to, 1n)).rejects.toMatchObject({
      reason: "ERC20: transfer amount exceeds balance",
    });
    await expect(asPoor.getFunction("transfer").estimateGas(to, 1n)).rejects.toMatchObject({
      reason: "ERC20: transfer amount exceeds balance",
    });
    // Asked again (answered from the node's per-height call memo): the same revert, the same reads;
    // a later block's state is read afresh and the older height keeps its own.
    await expect(asPoor.getFunction("transfer").staticCall(to, 1n)).rejects.toMatchObject({
      reason: "ERC20: transfer amount exceeds balance",
    });
    // The nonce given, for the same reason (seen: "nonce too low: next nonce 2, tx nonce 1").
    const again = await (await c.getFunction("transfer")(to, parseUnits("1", 18), { nonce: tx.nonce + 1 })).wait();
    expect(await c.getFunction("balanceOf")(to)).toBe(parseUnits("6", 18));
    expect(await c.getFunction("balanceOf")(to)).toBe(parseUnits("6", 18));
    expect(await c.getFunction("balanceOf")(to, { blockTag: r.blockNumber })).toBe(parseUnits("5", 18));
    expect(again.blockNumber).toBeGreaterThan(r.blockNumber);
  });

  test("invalid: nonce too low and a replayed tx are refused with geth's texts", async () => {
    const w = new Wallet(KEYS[3], provider);
    const nonce = await provider.getTransactionCount(w.address);
    const tx = await w.sendTransaction({ to: w.address, value: 1n, nonce });
    await tx.wait();
    const stale = await w.signTransaction({
      to: w.address,
      value: 2n,
      nonce,
      gasLimit: 21000n,
      maxFeePerGas: parseUnits("10", "gwei"),
      maxPriorityFeePerGas: 1n,
      chainId: 262144n,
    });
    await expect(provider.send("eth_sendRawTransaction", [stale])).rejects.toThrow(/nonce too low/);
    const otherChain = await w.signTransaction({
      to: w.address,
      value: 2n,
      nonce: nonce + 1,
      gasLimit: 21000n,
      maxFeePerGas: parseUnits("10", "gwei"),
      maxPriorityFeePerGas: 1n,
      chainId: 1n,
    });
    await expect(provider.send("eth_sendRawTransaction", [otherChain])).rejects.toThrow(/chain/i);
  });

  test("behavior: filters see new blocks and logs", async () => {
    const blockFilter = (await provider.send("eth_newBlockFilter", [])) as string;
    // The node's own height: ethers caches getBlockNumber, which can be behind the filter's start.
    const h = n.node.consensus.chainState().lastBlockHeight;
    // Two heights later the first new block has certainly reached the filters.
    await n.node.consensus.waitForHeight(h + 2);
    const changes = (await provider.send("eth_getFilterChanges", [blockFilter])) as string[];
    expect(changes.length).toBeGreaterThanOrEqual(1);
    expect(changes[0]).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await provider.send("eth_uninstallFilter", [blockFilter])).toBe(true);
  });

  test("behavior: WebSocket newHeads carry the same hash as eth_getBlockByNumber", async () => {
    const ws = new WebSocketProvider(wsUrl, undefined, { staticNetwork: true });
    try {
      const head = await new Promise<{ number: string; hash: string }>((resolve) => {
        void ws.send("eth_subscribe", ["newHeads"]).then((id: string) => {
          ws.websocket.onmessage = (ev: { data: unknown }) => {
            const msg = JSON.parse(String(ev.data)) as {
              params?: { subscription: string; result: { number: string; hash: string } };
            };
            if (msg.params?.subscription === id) resolve(msg.params.result);
          };
        });
      });
      const block = await provider.getBlock(Number(head.number));
      expect(block?.hash).toBe(head.hash);
    } finally {
      await ws.destroy();
    }
  });
});

describe("viem", () => {
  test("default: public and wallet clients send and read", async () => {
    const client = createPublicClient({ transport: http(httpUrl) });
    expect(await client.getChainId()).toBe(262144);
    const account = privateKeyToAccount(KEYS[2]);
    const chain = {
      id: 262144,
      name: "cometh",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [httpUrl] } },
    } as const;
    const wallet = createWalletClient({ account, chain, transport: http(httpUrl) });
    const hash = await wallet.sendTransaction({ to: privateKeyToAccount(KEYS[3]).address, value: 12345n });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    expect(receipt.status).toBe("success");
    const tx = await client.getTransaction({ hash });
    expect(tx.value).toBe(12345n);
    const abi = parseAbi(["function balanceOf(address) view returns (uint256)"]);
    expect(abi).toHaveLength(1);
  });

  test("default: Cosmos EVM's preinstalls: viem's multicall through Multicall3, Permit2's domain", async () => {
    const client = createPublicClient({ transport: http(httpUrl) });
    const multicallAddress = "0xcA11bde05977b3631167028862bE2a173976CA11";
    const a2 = privateKeyToAccount(KEYS[2]).address;
    const results = await client.multicall({
      multicallAddress,
      contracts: [
        {
          address: multicallAddress,
          abi: parseAbi(["function getChainId() view returns (uint256)"]),
          functionName: "getChainId",
        },
        {
          address: multicallAddress,
          abi: parseAbi(["function getEthBalance(address) view returns (uint256)"]),
          functionName: "getEthBalance",
          args: [a2],
        },
      ],
    });
    expect(results.map((r) => r.status)).toEqual(["success", "success"]);
    expect(results[0]?.result).toBe(262144n);
    expect(results[1]?.result).toBe(await client.getBalance({ address: a2 }));
    // Permit2 recomputes its EIP-712 domain for this chain id (its cached one is mainnet's).
    const permit2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
    const domain = await client.readContract({
      address: permit2,
      abi: parseAbi(["function DOMAIN_SEPARATOR() view returns (bytes32)"]),
      functionName: "DOMAIN_SEPARATOR",
    });
    const expected = keccak256(
      encodeAbiParameters(parseAbiParameters("bytes32, bytes32, uint256, address"), [
        keccak256(toBytes("EIP712Domain(string name,uint256 chainId,address verifyingContract)")),
        keccak256(toBytes("Permit2")),
        262144n,
        permit2,
      ]),
    );
    expect(domain).toBe(expected);
  });

  test("behavior: getProof answers EIP-1186 account and storage proofs that verify and match the state", async () => {
    const w = new Wallet(KEYS[1], provider);
    const token = await new ContractFactory(ERC20.abi, ERC20.bytecode, w).deploy();
    await token.waitForDeployment();
    const address = (await token.getAddress()) as `0x${string}`;
    const holder = new Wallet(KEYS[3]).address;
    // The nonce given, as in the ERC-20 test above (ethers' 250 ms request cache).
    const sent = await (
      await new Contract(address, ERC20.abi, w).getFunction("transfer")(holder, 7n, { nonce: deployNonce(token) + 1 })
    ).wait();
    // The token's balances mapping is at slot 0: the holder's entry is keccak(pad32(holder) ‖ pad32(0)).
    const slot = keccak256(`0x${holder.slice(2).toLowerCase().padStart(64, "0")}${"0".repeat(64)}`) as `0x${string}`;
    const client = createPublicClient({ transport: http(httpUrl) });
    const blockNumber = BigInt(sent.blockNumber);
    const proof = await client.getProof({ address, storageKeys: [slot], blockNumber });
    expect(proof.nonce).toBe(1);
    expect(proof.balance).toBe(0n);
    expect(proof.codeHash).toBe(keccak256((await client.getCode({ address, blockNumber })) ?? "0x"));
    expect(proof.storageProof[0]?.value).toBe(7n);
    // Verified as a light client would, against the root the proof's first node hashes to.
    const root = hexToBytes(keccak256(proof.accountProof[0] as `0x${string}`));
    const leaf = await verifyMerkleProof(
      hexToBytes(keccak256(address)),
      proof.accountProof.map((h) => hexToBytes(h)),
      { root },
    );
    const [, , storageRoot] = RLP.decode(leaf as Uint8Array) as Uint8Array[];
    expect(bytesToHex(storageRoot as Uint8Array)).toBe(proof.storageHash);
    const value = await verifyMerkleProof(
      hexToBytes(keccak256(slot)),
      (proof.storageProof[0]?.proof ?? []).map((h) => hexToBytes(h)),
      {
        root: storageRoot as Uint8Array,
      },
    );
    expect(RLP.decode(value as Uint8Array)).toEqual(Uint8Array.of(7));
    // debug_traceTransaction with geth's prestateTracer in diff mode: the holder's slot went from 0 to 7.
    const diff = (await provider.send("debug_traceTransaction", [
      sent.hash,
      { tracer: "prestateTracer", tracerConfig: { diffMode: true } },
    ])) as Record<"pre" | "post", Record<string, { storage?: Record<string, string>; nonce?: number }>>;
    const tokenKey = address.toLowerCase();
    expect(diff.pre[tokenKey]?.storage?.[slot]).toBeUndefined();
    expect(diff.post[tokenKey]?.storage?.[slot]).toBe(`0x${"7".padStart(64, "0")}`);
    expect(diff.post[w.address.toLowerCase()]?.nonce).toBe((diff.pre[w.address.toLowerCase()]?.nonce ?? 0) + 1);
    expect(await provider.send("debug_traceTransaction", [sent.hash, { tracer: "4byteTracer" }])).toEqual({
      "0xa9059cbb-64": 1,
    });
    expect(await provider.send("debug_traceTransaction", [sent.hash, { tracer: "noopTracer" }])).toEqual({});
    // The block and call variants go through the same tracer choice.
    expect(
      await provider.send("debug_traceBlockByNumber", [`0x${blockNumber.toString(16)}`, { tracer: "4byteTracer" }]),
    ).toEqual([{ txHash: sent.hash, result: { "0xa9059cbb-64": 1 } }]);
    const callFrame = (await provider.send("debug_traceCall", [
      {
        from: w.address,
        to: address,
        data: new Contract(address, ERC20.abi).interface.encodeFunctionData("totalSupply"),
      },
      `0x${blockNumber.toString(16)}`,
      { tracer: "callTracer" },
    ])) as { type: string; to: string };
    expect(callFrame.type).toBe("CALL");
    expect(callFrame.to).toBe(address.toLowerCase());
    // An EOA at the same height: the same state root, its balance and nonce as eth_getBalance/eth_getTransactionCount.
    const eoa = await client.getProof({ address: w.address as `0x${string}`, storageKeys: [], blockNumber });
    expect(keccak256(eoa.accountProof[0] as `0x${string}`)).toBe(bytesToHex(root));
    expect(eoa.balance).toBe(await client.getBalance({ address: w.address as `0x${string}`, blockNumber }));
    expect(eoa.nonce).toBe(await client.getTransactionCount({ address: w.address as `0x${string}`, blockNumber }));
  });

  test("behavior: watchBlocks over WebSocket", async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl) });
    const block = await new Promise<bigint>((resolve, reject) => {
      const unwatch = client.watchBlocks({
        onBlock: (b) => {
          unwatch();
          resolve(b.number);
        },
        onError: reject,
      });
    });
    expect(block).toBeGreaterThan(0n);
  });
});

describe("web3.js v4", () => {
  test("default: chain id, balance, transfer receipt", async () => {
    const web3 = new Web3(httpUrl);
    expect(await web3.eth.getChainId()).toBe(262144n);
    const account = web3.eth.accounts.privateKeyToAccount(KEYS[1]);
    const signed = await account.signTransaction({
      to: web3.eth.accounts.privateKeyToAccount(KEYS[0]).address,
      value: 1000n,
      gas: 21000n,
      maxFeePerGas: parseUnits("10", "gwei"),
      maxPriorityFeePerGas: 1n,
      nonce: await web3.eth.getTransactionCount(account.address, "pending"),
      chainId: 262144n,
      type: 2n,
    });
    const receipt = await web3.eth.sendSignedTransaction(signed.rawTransaction);
    expect(receipt.status).toBe(1n);
    expect(await web3.eth.getBalance(account.address)).toBeGreaterThan(0n);
  });
});
