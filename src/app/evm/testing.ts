import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContractFactory, Interface, type Wallet } from "ethers";
import erc20 from "../../../test/data/erc20.json" with { type: "json" };
import { defaultConsensusParams, type FinalizeBlockResponse } from "../../types/index.js";
import { silentLogger } from "../../util/logger.js";
import { keccak256 } from "./crypto.js";
import { createEvmApp, type EvmApplication, type EvmAppOptions } from "./evmApplication.js";

/** Helpers for tests and benchmarks that drive the EVM app through the Application interface. */

export interface TestChain {
  app: EvmApplication;
  dir: string;
  height: number;
  /** Next block time (ns); advances 1 s per block. */
  timeNs: bigint;
  proposer: Uint8Array;
}

export async function openTestChain(
  opts: Partial<EvmAppOptions> & {
    maxGas?: bigint;
    appState?: unknown;
    dir?: string;
    evidenceMaxAgeNumBlocks?: bigint;
  } = {},
): Promise<TestChain> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), "cometh-evm-")));
  const { maxGas, appState, dir: _dir, evidenceMaxAgeNumBlocks, ...rest } = opts;
  const app = await createEvmApp({ dbDir: dir, log: silentLogger(), ...rest });
  const chain: TestChain = {
    app,
    dir,
    height: 0,
    timeNs: 1_700_000_000n * 1_000_000_000n,
    proposer: new Uint8Array(20).fill(0xaa),
  };
  const meta = app.db.meta();
  if (meta === undefined) {
    const params = defaultConsensusParams();
    if (maxGas !== undefined) params.block.maxGas = maxGas;
    if (evidenceMaxAgeNumBlocks !== undefined) params.evidence.maxAgeNumBlocks = evidenceMaxAgeNumBlocks;
    await app.initChain({
      time: chain.timeNs,
      chainId: "cometh-test",
      consensusParams: params,
      validators: [],
      appStateBytes: appState === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(appState)),
      initialHeight: 1,
    });
  } else {
    chain.height = meta.height;
    chain.timeNs += BigInt(meta.height) * 1_000_000_000n;
  }
  return chain;
}

export async function closeTestChain(chain: TestChain, opts: { keep?: boolean } = {}): Promise<void> {
  await chain.app.close();
  if (opts.keep !== true) await rm(chain.dir, { recursive: true, force: true });
}

/** Test chains a test file opens, closed together by closeAll (call it from afterEach). */
export class TestChains {
  readonly #open: TestChain[] = [];

  async open(opts: Parameters<typeof openTestChain>[0] = {}): Promise<TestChain> {
    const c = await openTestChain(opts);
    this.#open.push(c);
    return c;
  }

  async closeAll(): Promise<void> {
    while (this.#open.length > 0) await closeTestChain(this.#open.pop() as TestChain);
  }
}

/** Bytes of a hex string (0x optional), for test inputs known to be valid hex. */
export function hexBytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s.startsWith("0x") ? s.slice(2) : s, "hex"));
}

/** The ABI of test/data/erc20.json's token. */
export const erc20Interface = new Interface(erc20.abi);

/** A block hash for height h (deterministic, distinct per height). */
export function fakeBlockHash(height: number): Uint8Array {
  const h = new Uint8Array(32);
  new DataView(h.buffer).setUint32(28, height);
  h[0] = 0xbb;
  return h;
}

/**
 * One block through PrepareProposal → ProcessProposal → FinalizeBlock → Commit. `prepare: false`
 * finalizes `txs` as given (a block another proposer built).
 */
export async function runBlock(
  chain: TestChain,
  txs: Uint8Array[],
  opts: { prepare?: boolean; maxTxBytes?: number } = {},
): Promise<{ txs: Uint8Array[]; response: FinalizeBlockResponse }> {
  const height = chain.height + 1;
  const common = {
    misbehavior: [],
    height,
    time: chain.timeNs,
    nextValidatorsHash: new Uint8Array(32),
    proposerAddress: chain.proposer,
  };
  let blockTxs = txs;
  if (opts.prepare !== false) {
    const p = await chain.app.prepareProposal({
      ...common,
      maxTxBytes: opts.maxTxBytes ?? 22_020_096,
      txs,
      localLastCommit: { round: 0, votes: [] },
    });
    blockTxs = p.txs;
  }
  const hash = fakeBlockHash(height);
  const verdict = await chain.app.processProposal({
    ...common,
    txs: blockTxs,
    proposedLastCommit: { round: 0, votes: [] },
    hash,
  });
  if (verdict !== "accept") throw new RangeError(`proposal at height ${height} rejected`);
  const response = await chain.app.finalizeBlock({
    ...common,
    txs: blockTxs,
    decidedLastCommit: { round: 0, votes: [] },
    hash,
    block: {
      header: { lastBlockId: { hash: height === 1 ? new Uint8Array(32) : fakeBlockHash(height - 1) } },
    } as never,
  });
  await chain.app.commit();
  chain.height = height;
  chain.timeNs += 1_000_000_000n;
  return { txs: blockTxs, response };
}

/**
 * The balance slot of `holder` in test/data/erc20.json's token, whose balances mapping sits at slot 0:
 * keccak(pad32(holder) ‖ pad32(0)).
 */
export function erc20BalanceSlot(holder: Uint8Array): Uint8Array {
  const key = new Uint8Array(64);
  key.set(holder, 12);
  return keccak256(key);
}

/** A signed EIP-1559 tx on the test chain id (262144) with generous fees; `to` undefined deploys. */
export async function signTestTx(
  wallet: Wallet,
  tx: { nonce: number; to?: Uint8Array; data?: string; value?: bigint; gasLimit: bigint },
): Promise<Uint8Array> {
  const raw = await wallet.signTransaction({
    type: 2,
    chainId: 262144n,
    nonce: tx.nonce,
    to: tx.to === undefined ? null : `0x${Buffer.from(tx.to).toString("hex")}`,
    data: tx.data ?? "0x",
    value: tx.value ?? 0n,
    gasLimit: tx.gasLimit,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
  });
  return new Uint8Array(Buffer.from(raw.slice(2), "hex"));
}

/** Deploys test/data/erc20.json from `wallet` in the next block; the token's address. */
export async function deployErc20(chain: TestChain, wallet: Wallet, nonce: number): Promise<Uint8Array> {
  const deploy = await new ContractFactory(erc20.abi, erc20.bytecode).getDeployTransaction();
  await runBlock(chain, [await signTestTx(wallet, { nonce, data: deploy.data, gasLimit: 400_000n })]);
  const address = chain.app.reader.receipts(chain.height)[0]?.contractAddress;
  if (address === undefined) throw new Error("the test token was not deployed");
  return address;
}
