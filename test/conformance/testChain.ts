/**
 * The execution-apis test chain (tests/genesis.json and tests/chain.rlp, written by hive's hivechain
 * and answered by geth) rebuilt as a cometh dev chain, for the conformance runner. The fixtures are read
 * where they are ($EXECUTION_APIS_TESTS, or $EXECUTION_APIS_TESTS_DIR, default
 * ../shared/spec/execution-apis/tests next to the repository), never copied into the repository.
 *
 * cometh cannot import the chain's blocks (chain.rlp holds Ethereum blocks; ours are CometBFT blocks
 * with their own hashes), so the chain is replayed: the dev chain starts from the test chain's genesis
 * allocation, EIP-155 chain id, zero coinbase and time 0, and block N carries block N's signed
 * transactions, sent as they are (same tx hashes, same senders and nonces), at block N's timestamp.
 * What cannot be replayed is made up where the state depends on it, and named in `REPLAY_GAPS`:
 * - the proof-of-work block rewards and the withdrawals credited after the merge are added to the
 *   genesis balances of their recipients (a balance at the head is then right, one in between is not);
 * - EIP-4844 blob transactions (which Cosmos EVM refuses) are sent as their sender's impersonated
 *   EIP-1559 transaction with the same nonce, gas, fees, target, value and input: the state change is
 *   the same, the tx hash is not.
 * The fee market starts at block 27 (London on the test chain) at 1 gwei, as Ethereum's does; each
 * block from there carries a dev entry that sets the next block's base fee to the test chain's (and
 * block 54 the one geth gives block 55), since x/feemarket's fixed point would drift from geth's by a
 * few wei and refuse txs priced at the base fee + 1. The block gas limit is the test chain's
 * post-London 200M throughout, and every block runs Prague (cometh's one fork).
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RLP } from "@ethereumjs/rlp";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { encodeDevEntry } from "../../src/app/evm/index.js";
import { initHome } from "../../src/config/index.js";
import { httpPost } from "../../src/rpc/evm/testing/evmClient.js";
import { type InProcessEvmNode, startInProcessDevNode } from "../integration/inProcessNode.js";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const FIXTURES_DIR =
  process.env.EXECUTION_APIS_TESTS ??
  process.env.EXECUTION_APIS_TESTS_DIR ??
  resolve(ROOT, "../shared/spec/execution-apis/tests");
export const FIXTURES_PRESENT =
  existsSync(join(FIXTURES_DIR, "genesis.json")) && existsSync(join(FIXTURES_DIR, "chain.rlp"));

/** The test chain's head (the base of every `latest` case): block 54 at time 540. */
export const HEAD = 54;
export const BLOCK_INTERVAL = 10n;
export const GAS_LIMIT = 200_000_000n;
/** geth's default RPC gas cap, which is also eth_simulateV1's gas budget. */
export const GETH_GAS_CAP = 50_000_000n;
/** genesis.json londonBlock: the first block with a base fee (1 gwei, EIP-1559's initial value). */
export const LONDON_BLOCK = 27;
const LONDON_BASE_FEE = 1_000_000_000n;
/** geth's block 55 base fee on the test chain (eth_baseFee's answer, the first simulated block's). */
export const HEAD_NEXT_BASE_FEE = 23_985_819n;
/** The EIP-4844 tx type. */
const BLOB_TX = 3;

/** One block of chain.rlp. */
export interface TestBlock {
  number: number;
  /** keccak256 of the header's RLP, hex without 0x. */
  hash: string;
  timestamp: bigint;
  difficulty: bigint;
  baseFee: bigint | undefined;
  /** Each tx's network encoding (a legacy tx's RLP list, a typed tx's type byte and payload). */
  txs: Uint8Array[];
  withdrawals: { address: string; amountGwei: bigint }[];
  uncles: number;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const num = (b: Uint8Array): bigint => (b.length === 0 ? 0n : BigInt(`0x${hex(b)}`));

/** chain.rlp's blocks, genesis excluded, in order. */
export function readTestChain(): TestBlock[] {
  const out: TestBlock[] = [];
  let rest: Uint8Array = readFileSync(join(FIXTURES_DIR, "chain.rlp"));
  while (rest.length > 0) {
    const { data, remainder } = RLP.decode(rest, true) as unknown as {
      data: [Uint8Array[], (Uint8Array | Uint8Array[])[], unknown[], Uint8Array[][] | undefined];
      remainder: Uint8Array;
    };
    const [header, txs, uncles, withdrawals] = data;
    out.push({
      number: Number(num(header[8] as Uint8Array)),
      hash: hex(keccak_256(RLP.encode(header))),
      timestamp: num(header[11] as Uint8Array),
      difficulty: num(header[7] as Uint8Array),
      baseFee: header.length > 15 ? num(header[15] as Uint8Array) : undefined,
      txs: txs.map((t) => (t instanceof Uint8Array ? t : RLP.encode(t))),
      withdrawals: (withdrawals ?? []).map((w) => ({
        address: `0x${hex(w[2] as Uint8Array)}`,
        amountGwei: num(w[3] as Uint8Array),
      })),
      uncles: uncles.length,
    });
    rest = remainder;
  }
  return out;
}

/** The block reward of a proof-of-work block by the test chain's forks (Frontier, Byzantium, Constantinople). */
function powReward(number: number, config: Record<string, number>): bigint {
  const eth = 10n ** 18n;
  if (number >= (config.constantinopleBlock ?? 0)) return 2n * eth;
  if (number >= (config.byzantiumBlock ?? 0)) return 3n * eth;
  return 5n * eth;
}

/** A blob tx's fields and its sender (EIP-4844: the signature is over 0x03 ‖ rlp(fields without v, r, s)). */
function decodeBlobTx(raw: Uint8Array): Record<string, string> & { from: string } {
  const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
  const [chainId, nonce, tip, feeCap, gas, to, value, data] = fields as Uint8Array[];
  const [yParity, r, s] = fields.slice(11) as Uint8Array[];
  const digest = keccak_256(new Uint8Array([BLOB_TX, ...RLP.encode(fields.slice(0, 11))]));
  const sig = new secp256k1.Signature(num(r as Uint8Array), num(s as Uint8Array)).addRecoveryBit(
    Number(num(yParity as Uint8Array)),
  );
  const pub = sig.recoverPublicKey(digest).toBytes(false);
  const from = `0x${hex(keccak_256(pub.subarray(1)).subarray(12))}`;
  const q = (b: Uint8Array | undefined) => `0x${num(b ?? new Uint8Array()).toString(16)}`;
  return {
    from,
    chainId: q(chainId),
    nonce: q(nonce),
    maxPriorityFeePerGas: q(tip),
    maxFeePerGas: q(feeCap),
    gas: q(gas),
    to: `0x${hex(to as Uint8Array)}`,
    value: q(value),
    input: `0x${hex(data as Uint8Array)}`,
  };
}

/** What the replay could not reproduce exactly, by kind, with the block numbers (for the report). */
export const REPLAY_GAPS = {
  blobTxs: [] as { block: number; hash: string }[],
};

export interface TestChain {
  node: InProcessEvmNode;
  blocks: TestBlock[];
  /** Test chain block hash (hex, no 0x) → ours for the same number. */
  hashSwaps: Map<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  rpc(method: string, params?: unknown[]): Promise<any>;
  close(): Promise<void>;
}

export interface TestChainOptions {
  /** Replay chain.rlp's transactions (otherwise: HEAD empty blocks on the genesis state). */
  replay: boolean;
  /** `--json-rpc.api`. */
  api?: string;
}

/** Starts a dev chain shaped like the test chain and mines it up to HEAD. */
export async function startTestChain(opts: TestChainOptions): Promise<TestChain> {
  const genesis = JSON.parse(readFileSync(join(FIXTURES_DIR, "genesis.json"), "utf8"));
  const blocks = readTestChain();
  const alloc: Record<string, { balance?: string } & Record<string, unknown>> = structuredClone(genesis.alloc);
  const credit = (address: string, wei: bigint) => {
    const key =
      Object.keys(alloc).find((k) => k.replace(/^0x/, "").toLowerCase() === address.replace(/^0x/, "").toLowerCase()) ??
      address;
    const entry = alloc[key] ?? {};
    entry.balance = `0x${(BigInt(entry.balance ?? "0") + wei).toString(16)}`;
    alloc[key] = entry;
  };
  const coinbase = `0x${"00".repeat(20)}`;
  if (opts.replay) {
    for (const b of blocks) {
      if (b.number > HEAD) continue;
      if (b.difficulty > 0n) credit(coinbase, powReward(b.number, genesis.config) * BigInt(1 + b.uncles));
      for (const w of b.withdrawals) credit(w.address, w.amountGwei * 1_000_000_000n);
    }
  }
  const home = await mkdtemp(join(tmpdir(), "cometh-conformance-"));
  await initHome(home, {
    chainId: "cometh-conformance",
    moniker: "conformance",
    maxGas: GAS_LIMIT,
    appState: {
      evm: { dev_chain: true, alloc, coinbase, preinstalls: false },
      feemarket: {
        params: {
          no_base_fee: false,
          base_fee: LONDON_BASE_FEE.toString(),
          enable_height: String(LONDON_BLOCK),
          min_gas_price: "0",
          min_gas_multiplier: "0",
        },
      },
    },
  });
  // The test chain starts at time 0.
  const genesisFile = join(home, "config", "genesis.json");
  const doc = JSON.parse(readFileSync(genesisFile, "utf8"));
  doc.genesis_time = "1970-01-01T00:00:00Z";
  writeFileSync(genesisFile, JSON.stringify(doc, null, 2));
  const node = await startInProcessDevNode(
    {
      "--evm.evm-chain-id": String(genesis.config.chainId),
      "--json-rpc.gas-cap": GETH_GAS_CAP.toString(),
      "--json-rpc.api": opts.api ?? "eth,net,web3,debug,txpool",
      "--json-rpc.allow-unprotected-txs": true,
    },
    { automine: false },
    home,
  );
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  const rpc = async (method: string, params: unknown[] = []): Promise<any> =>
    (await httpPost(node.evmHttpUrl, { jsonrpc: "2.0", id: 1, method, params })).body;
  const dev = node.node.dev;
  if (dev === undefined) throw new TypeError("not a dev chain");
  try {
    if (!opts.replay) {
      await dev.mine(BigInt(HEAD), BLOCK_INTERVAL);
    } else {
      for (const b of blocks) {
        if (b.number > HEAD) break;
        for (const raw of b.txs) {
          if (raw[0] === BLOB_TX) {
            const { from, chainId: _c, ...tx } = decodeBlobTx(raw);
            await rpc("anvil_impersonateAccount", [from]);
            const sent = await rpc("eth_sendTransaction", [{ from, type: "0x2", ...tx }]);
            if (sent.error !== undefined)
              throw new Error(`block ${b.number}: blob tx as impersonated: ${sent.error.message}`);
            REPLAY_GAPS.blobTxs.push({ block: b.number, hash: hex(keccak_256(raw)) });
            continue;
          }
          const sent = await rpc("eth_sendRawTransaction", [`0x${hex(raw)}`]);
          if (sent.error !== undefined) throw new Error(`block ${b.number}: tx refused: ${sent.error.message}`);
        }
        // Block N + 1's base fee is the test chain's (cometh's fee market computes it in 18-decimal
        // fixed point from Cosmos EVM's gas figures and drifts from geth's by a few wei within blocks,
        // so a tx whose fee cap is the base fee + 1 would be refused): block N carries the dev entry
        // that sets it, as anvil_setNextBlockBaseFeePerGas would without a block of its own.
        const nextBaseFee = b.number === HEAD ? HEAD_NEXT_BASE_FEE : blocks[b.number]?.baseFee;
        if (nextBaseFee !== undefined) {
          const res = await node.node.mempool.checkTx(encodeDevEntry({ op: "setNextBaseFee", value: nextBaseFee }));
          if (res.code !== 0) throw new Error(`block ${b.number}: the base fee entry was refused: ${res.log}`);
        }
        await dev.mineOne(b.timestamp);
        const got = await rpc("eth_getBlockTransactionCountByNumber", [`0x${b.number.toString(16)}`]);
        if (Number(got.result) !== b.txs.length) {
          throw new Error(`block ${b.number}: ${Number(got.result)} txs committed, ${b.txs.length} in chain.rlp`);
        }
      }
    }
  } catch (err) {
    await node.close();
    await rm(home, { recursive: true, force: true });
    throw err;
  }
  const hashSwaps = new Map<string, string>();
  const genesisHash = (await rpc("eth_getBlockByNumber", ["0x0", false])).result.hash as string;
  hashSwaps.set(testChainGenesisHash(), genesisHash.slice(2));
  for (const b of blocks) {
    if (b.number > HEAD) continue;
    const ours = await rpc("eth_getBlockByNumber", [`0x${b.number.toString(16)}`, false]);
    hashSwaps.set(b.hash, (ours.result.hash as string).slice(2));
  }
  return {
    node,
    blocks,
    hashSwaps,
    rpc,
    close: async () => {
      await node.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The test chain's genesis hash: block 1's parentHash. */
function testChainGenesisHash(): string {
  const rest: Uint8Array = readFileSync(join(FIXTURES_DIR, "chain.rlp"));
  const { data } = RLP.decode(rest, true) as unknown as { data: Uint8Array[][] };
  return hex((data[0] as Uint8Array[])[0] as Uint8Array);
}
