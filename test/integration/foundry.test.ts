import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { HDNodeWallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InProcessEvmNode, startInProcessDevNode, startInProcessEvmNode } from "./inProcessNode.js";

/**
 * Foundry's `cast` (a real client, Rust, alloy) against a real node: the commands a Foundry user runs
 * on a fresh chain — fee-priced sends (EIP-1559 and legacy), deploy, calls with revert decoding,
 * estimates, logs, receipts, `cast run` (replays a tx through debug_traceTransaction), access lists,
 * proofs, EIP-7702 authorizations and node-signed sends.
 *
 * cast ships as a binary in test/clients (not a project dependency: 60 MB); `.ci/run` installs it
 * (`npm run clients:install`). Without it these tests are skipped.
 */

const CAST = join(
  import.meta.dirname,
  "..",
  "clients",
  "node_modules",
  "@foundry-rs",
  "cast-linux-amd64",
  "bin",
  "cast",
);
const HAS_CAST = existsSync(CAST) && process.platform === "linux" && process.arch === "x64";
const MNEMONIC = "test test test test test test test test test test test junk";
const dev = (i: number) => HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`);
const ERC20 = JSON.parse(readFileSync(new URL("../data/erc20.json", import.meta.url), "utf8")) as { bytecode: string };
const run = promisify(execFile);

let n: InProcessEvmNode;
let rpc: string;

/**
 * Runs `cast <command> --rpc-url <node> <args>` (options right after the command: `send --create`
 * takes everything after the code as constructor arguments); rejects with cast's stderr.
 */
async function cast(command: string, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run(CAST, [command, "--rpc-url", rpc, ...args], {
      timeout: 60_000,
      env: { ...process.env, FOUNDRY_DISABLE_NIGHTLY_WARNING: "1", NO_COLOR: "1" },
    });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`cast ${command} failed: ${e.stderr?.trim() || e.message}`);
  }
}

async function castJson<T>(command: string, ...args: string[]): Promise<T> {
  return JSON.parse(await cast(command, "--json", ...args)) as T;
}

interface Receipt {
  status: string;
  type: string;
  transactionHash: string;
  blockNumber: string;
  contractAddress: string | null;
  logs: { topics: string[] }[];
}

describe.skipIf(!HAS_CAST)("Foundry cast", () => {
  beforeAll(async () => {
    n = await startInProcessEvmNode();
    rpc = n.evmHttpUrl;
  });

  afterAll(async () => {
    await n?.close();
  });

  test("default: chain id, head, client, fees", async () => {
    expect(await cast("chain-id")).toBe("262144");
    expect(Number(await cast("block-number"))).toBeGreaterThanOrEqual(1);
    expect(await cast("client")).toMatch(/^cometh\//);
    const gasPrice = BigInt(await cast("gas-price"));
    const baseFee = BigInt(await cast("base-fee"));
    expect(gasPrice).toBeGreaterThanOrEqual(baseFee);
    expect(BigInt(await cast("balance", dev(4).address))).toBe(10_000n * 10n ** 18n);
  });

  test("behavior: sends priced by cast, EIP-1559 and legacy, are mined", async () => {
    const to = dev(9).address;
    const before = BigInt(await cast("balance", to));
    const r1559 = await castJson<Receipt>("send", to, "--value", "1ether", "--private-key", dev(4).privateKey);
    expect([r1559.status, r1559.type]).toEqual(["0x1", "0x2"]);
    // Legacy: priced at eth_gasPrice, which must not sit below the base fee the estimate runs with.
    const legacy = await castJson<Receipt>("send", to, "--value", "1", "--legacy", "--private-key", dev(4).privateKey);
    expect([legacy.status, legacy.type]).toEqual(["0x1", "0x0"]);
    expect(BigInt(await cast("balance", to)) - before).toBe(10n ** 18n + 1n);
    expect(await cast("nonce", dev(4).address)).toBe("2");
    // Node-signed (eth_sendTransaction with a dev account).
    const unlocked = await castJson<Receipt>("send", to, "--value", "1", "--unlocked", "--from", dev(5).address);
    expect(unlocked.status).toBe("0x1");
  });

  test("behavior: deploy an ERC-20, call, estimate, transfer, read the logs, replay the tx", async () => {
    const owner = dev(6);
    const deployed = await castJson<Receipt>("send", "--private-key", owner.privateKey, "--create", ERC20.bytecode);
    expect(deployed.status).toBe("0x1");
    const token = deployed.contractAddress as string;
    expect(await cast("code", token)).toMatch(/^0x[0-9a-f]{100,}$/);
    expect(await cast("call", token, "name()(string)")).toBe('"Cometh Test Token"');
    expect(await cast("call", token, "balanceOf(address)(uint256)", owner.address)).toMatch(
      /^1000000000000000000000000\b/,
    );

    const to = dev(7).address;
    const estimate = Number(
      await cast("estimate", token, "transfer(address,uint256)", to, "100", "--from", owner.address),
    );
    expect(estimate).toBeGreaterThan(30_000);
    expect(estimate).toBeLessThan(80_000);
    const sent = await castJson<Receipt>(
      "send",
      token,
      "transfer(address,uint256)",
      to,
      "100",
      "--private-key",
      owner.privateKey,
    );
    expect(sent.status).toBe("0x1");
    expect(sent.logs).toHaveLength(1);
    expect(await cast("call", token, "balanceOf(address)(uint256)", to)).toBe("100");

    const logs = await castJson<{ transactionHash: string }[]>(
      "logs",
      "--from-block",
      "0",
      "--address",
      token,
      "Transfer(address indexed,address indexed,uint256)",
    );
    expect(logs.map((l) => l.transactionHash)).toEqual([deployed.transactionHash, sent.transactionHash]);
    const receipt = await castJson<Receipt>("receipt", sent.transactionHash);
    expect(receipt.blockNumber).toBe(sent.blockNumber);

    // Revert reasons are decoded from the error's data.
    await expect(
      cast("call", token, "transfer(address,uint256)", owner.address, "1", "--from", dev(8).address),
    ).rejects.toThrow(/execution reverted: ERC20: transfer amount exceeds balance/);

    // `cast run` replays the block's earlier txs and the tx with a call trace (debug_traceTransaction).
    const replay = await cast("run", sent.transactionHash);
    expect(replay).toMatch(/::transfer\(/);
    expect(replay).toMatch(/emit Transfer/);
    expect(replay).toContain("Transaction successfully executed.");
  });

  test("behavior: access list, proof, EIP-7702 authorization", async () => {
    const list = await cast("access-list", dev(8).address, "--value", "1", "--from", dev(4).address);
    expect(list).toMatch(/gas used: 21000/);
    const proof = await castJson<{ address: string; accountProof: string[]; nonce: string }>("proof", dev(4).address);
    expect(proof.accountProof.length).toBeGreaterThan(0);
    expect(BigInt(proof.nonce)).toBeGreaterThanOrEqual(2n);

    // dev(8) delegates its code to a contract through a type-4 tx it signs itself.
    const delegate = "0x000000000000000000000000000000000000c0de";
    const auth = await castJson<Receipt>(
      "send",
      dev(8).address,
      "--auth",
      delegate,
      "--private-key",
      dev(8).privateKey,
    );
    expect([auth.status, auth.type]).toEqual(["0x1", "0x4"]);
    expect(await cast("code", dev(8).address)).toBe(`0xef0100${delegate.slice(2)}`);
  });
});

describe.skipIf(!HAS_CAST)("Foundry cast rpc against cometh dev", () => {
  let d: InProcessEvmNode;
  beforeAll(async () => {
    d = await startInProcessDevNode();
    rpc = d.evmHttpUrl;
  });

  afterAll(async () => {
    await d?.close();
  });

  test("behavior: anvil_* cheats, mining, snapshots and impersonated sends through cast", async () => {
    const who = "0x00000000000000000000000000000000000000c5";
    expect(await cast("rpc", "anvil_setBalance", who, "0xde0b6b3a7640000")).toBe("null");
    expect(await cast("balance", who)).toBe("1000000000000000000");
    const snap = JSON.parse(await cast("rpc", "evm_snapshot")) as string;
    const before = Number(await cast("block-number"));
    expect(await cast("rpc", "anvil_mine", "5")).toBe("null");
    expect(Number(await cast("block-number"))).toBe(before + 5);
    expect(await cast("rpc", "anvil_setNonce", who, "0x7")).toBe("null");
    expect(await cast("nonce", who)).toBe("7");
    expect(await cast("rpc", "evm_revert", snap)).toBe("true");
    expect(Number(await cast("block-number"))).toBe(before);
    expect(await cast("nonce", who)).toBe("0");
    expect(await cast("rpc", "anvil_impersonateAccount", who)).toBe("null");
    const receipt = await castJson<Receipt & { from: string }>(
      "send",
      "--unlocked",
      "--from",
      who,
      "0x00000000000000000000000000000000000000c6",
      "--value",
      "1000",
    );
    expect(receipt.status).toBe("0x1");
    expect(receipt.from).toBe(who);
    expect(await cast("balance", "0x00000000000000000000000000000000000000c6")).toBe("1000");
    const info = JSON.parse(await cast("rpc", "anvil_nodeInfo")) as { currentBlockNumber: number; hardFork: string };
    expect(info.currentBlockNumber).toBe(Number(await cast("block-number")));
    const ts = Number(await cast("block", "latest", "--field", "timestamp"));
    expect(await cast("rpc", "evm_setNextBlockTimestamp", String(ts + 1000))).toBe("null");
    expect(await cast("rpc", "evm_mine")).toBe('"0x0"');
    expect(Number(await cast("block", "latest", "--field", "timestamp"))).toBe(ts + 1000);
  });
});
