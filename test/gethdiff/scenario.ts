/**
 * The transactions the differential sends, signed once and sent as the same bytes to geth and cometh,
 * one block each (and one block of two), waiting for each receipt on both before the next.
 */

import { getCreateAddress, Wallet } from "ethers";
import { FACTORY, initcode, LOGGER, LOOP, REVERT_EMPTY, REVERT_REASON, SELF_DESTRUCT, STORE } from "./contracts.js";
import { CHAIN_ID, DEV_ADDRESS, DEV_KEY, type Endpoint, type NodePair } from "./nodes.js";

/** A second key: the EIP-7702 authority, and a plain recipient. */
export const AUTHORITY_KEY = "0x0000000000000000000000000000000000000000000000000000000000c0ffee";
export const RECIPIENT = "0x00000000000000000000000000000000000000b0";

const GWEI = 1_000_000_000n;

export interface SentTx {
  name: string;
  hash: string;
}

export interface Scenario {
  txs: SentTx[];
  contracts: Record<"logger" | "store" | "revertReason" | "revertEmpty" | "loop" | "selfDestruct" | "factory", string>;
  authority: string;
  /** The last block holding a scenario tx (both chains have the same numbers). */
  lastBlock: number;
}

async function waitReceipt(e: Endpoint, hash: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const a = await e.call("eth_getTransactionReceipt", [hash]);
    // geth answers "transaction indexing is in progress" until its tx indexer has caught up after
    // start-up: not yet, as a null receipt is.
    const indexing = a.error?.message === "transaction indexing is in progress";
    if (a.error !== undefined && !indexing)
      throw new Error(`${e.name} eth_getTransactionReceipt: ${JSON.stringify(a.error)}`);
    const r = a.result as Record<string, unknown> | null | undefined;
    if (r !== null && r !== undefined) return r;
    if (Date.now() > deadline) throw new Error(`${e.name}: no receipt for ${hash} in 30 s`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

/**
 * Sends raw txs to geth (in the order given) and waits for their receipts; then gives cometh the same
 * blocks: geth --dev's on-demand miner sometimes seals an empty block before the one holding a tx
 * (its loop commits once before the pool shows the tx), so cometh mines as many empty blocks first
 * (`evm_mine`), and txs geth put in one block go into one cometh block (automine off, `evm_mine`: with
 * automine on, a tx with a nonce gap would make an empty block of its own, docs/compatibility.md).
 */
export async function sendAll(pair: NodePair, raws: string[]): Promise<string[]> {
  const hashes: string[] = [];
  for (const raw of raws) hashes.push(await pair.geth.result<string>("eth_sendRawTransaction", [raw]));
  const blocks = new Map<number, string[]>();
  for (const [i, h] of hashes.entries()) {
    const n = Number((await waitReceipt(pair.geth, h)).blockNumber);
    blocks.set(n, [...(blocks.get(n) ?? []), raws[i] as string]);
  }
  for (const n of [...blocks.keys()].sort((a, b) => a - b)) {
    await mineUpTo(pair.cometh, n - 1);
    const group = blocks.get(n) as string[];
    if (group.length > 1) await pair.cometh.result("evm_setAutomine", [false]);
    const got: string[] = [];
    for (const raw of group) got.push(await pair.cometh.result<string>("eth_sendRawTransaction", [raw]));
    if (group.length > 1) {
      await pair.cometh.result("evm_mine");
      await pair.cometh.result("evm_setAutomine", [true]);
    }
    for (const h of got) {
      const r = await waitReceipt(pair.cometh, h);
      if (Number(r.blockNumber) !== n)
        throw new Error(`cometh put ${h} in block ${Number(r.blockNumber)}, geth in ${n}`);
    }
  }
  return hashes;
}

/** Empty blocks on cometh until its head is `n`. */
export async function mineUpTo(cometh: Endpoint, n: number): Promise<void> {
  for (;;) {
    const head = Number(await cometh.result<string>("eth_blockNumber"));
    if (head >= n) {
      if (head > n) throw new Error(`cometh is at ${head}, past geth's ${n}`);
      return;
    }
    await cometh.result("evm_mine");
  }
}

export async function runScenario(pair: NodePair): Promise<Scenario> {
  const dev = new Wallet(DEV_KEY);
  if (dev.address.toLowerCase() !== DEV_ADDRESS) throw new Error("dev key and address disagree");
  const authority = new Wallet(AUTHORITY_KEY);
  let nonce = 0;
  const txs: SentTx[] = [];
  const fees = { maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI };
  const sign = (tx: Record<string, unknown>) => dev.signTransaction({ chainId: CHAIN_ID, nonce: nonce++, ...tx });
  const one = async (name: string, tx: Record<string, unknown>) => {
    const [hash] = await sendAll(pair, [await sign(tx)]);
    txs.push({ name, hash: hash as string });
  };
  const deploy = async (name: string, runtime: string, type: number) => {
    const address = getCreateAddress({ from: DEV_ADDRESS, nonce });
    const feeFields = type === 0 ? { gasPrice: 3n * GWEI } : fees;
    await one(`create ${name}`, { type, data: initcode(runtime), gasLimit: 200_000, ...feeFields });
    return address.toLowerCase();
  };
  const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

  await one("legacy transfer", { type: 0, to: RECIPIENT, value: 1000, gasLimit: 21_000, gasPrice: 3n * GWEI });
  await one("EIP-2930 transfer with an access list", {
    type: 1,
    to: RECIPIENT,
    value: 2000,
    gasLimit: 30_000,
    gasPrice: 3n * GWEI,
    accessList: [{ address: RECIPIENT, storageKeys: [word(1)] }],
  });
  await one("EIP-1559 transfer", { type: 2, to: RECIPIENT, value: 3000, gasLimit: 21_000, ...fees });
  const logger = await deploy("logger", LOGGER, 0);
  const store = await deploy("store", STORE, 2);
  const revertReason = await deploy("revertReason", REVERT_REASON, 2);
  const revertEmpty = await deploy("revertEmpty", REVERT_EMPTY, 2);
  const loop = await deploy("loop", LOOP, 2);
  const selfDestruct = await deploy("selfDestruct", SELF_DESTRUCT, 2);
  const factory = await deploy("factory", FACTORY, 2);
  await one("logs with 0..4 topics", { type: 2, to: logger, data: word(0xabc), gasLimit: 100_000, ...fees });
  await one("store", { type: 2, to: store, data: word(7), gasLimit: 100_000, ...fees });
  await one("revert with a reason", { type: 2, to: revertReason, gasLimit: 100_000, ...fees });
  await one("revert without a reason", { type: 2, to: revertEmpty, gasLimit: 100_000, ...fees });
  await one("out of gas", { type: 2, to: loop, gasLimit: 50_000, ...fees });
  await one("CREATE2 of a child that self-destructs", {
    type: 2,
    to: factory,
    data: word(42),
    value: 5,
    gasLimit: 200_000,
    ...fees,
  });
  await one("self-destruct with a balance", { type: 2, to: selfDestruct, value: 77, gasLimit: 100_000, ...fees });
  await one("transfer to a precompile (identity)", {
    type: 2,
    to: "0x0000000000000000000000000000000000000004",
    value: 9,
    data: "0x1234",
    gasLimit: 50_000,
    ...fees,
  });
  const auth = await authority.authorize({ address: logger, nonce: 0, chainId: CHAIN_ID });
  await one("EIP-7702 delegation, then the delegated code runs", {
    type: 4,
    to: authority.address,
    data: word(0x7702),
    gasLimit: 200_000,
    authorizationList: [auth],
    ...fees,
  });
  // Two txs in one block: the second nonce goes first and waits for the gap to fill.
  const first = await sign({ type: 2, to: logger, data: word(1), gasLimit: 100_000, ...fees });
  // Both log: the second tx's logs are numbered after the first's (block-wide logIndex).
  const second = await sign({ type: 2, to: logger, data: word(2), gasLimit: 100_000, ...fees });
  const pairHashes = await sendAll(pair, [second, first]);
  // geth may seal one more empty block after the last one; give cometh the same head.
  await mineUpTo(pair.cometh, Number(await pair.geth.result<string>("eth_blockNumber")));
  txs.push({ name: "second tx of a two-tx block", hash: pairHashes[0] as string });
  txs.push({ name: "first tx of a two-tx block", hash: pairHashes[1] as string });

  const last = await pair.geth.result<{ blockNumber: string }>("eth_getTransactionReceipt", [pairHashes[0]]);
  return {
    txs,
    contracts: { logger, store, revertReason, revertEmpty, loop, selfDestruct, factory },
    authority: authority.address.toLowerCase(),
    lastBlock: Number(last.blockNumber),
  };
}
