import { verifyMerkleProof } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { keccak256 } from "./crypto.js";
import { StateUnavailableError } from "./errors.js";
import { EMPTY_TRIE_ROOT, KECCAK256_NULL } from "./records.js";
import type { StateProof } from "./stateProof.js";
import {
  deployErc20,
  erc20BalanceSlot,
  hexBytes as hex,
  erc20Interface as iface,
  runBlock,
  signTestTx,
  TestChains,
} from "./testing.js";

const big = (b: Uint8Array) => (b.length === 0 ? 0n : BigInt(`0x${Buffer.from(b).toString("hex")}`));
const chains = new TestChains();
afterEach(() => chains.closeAll());

const balanceSlot = (holder: string) => erc20BalanceSlot(hex(holder));

/** Checks a proof as a light client would, against the root its first node hashes to. */
async function verified(p: StateProof): Promise<{ root: Uint8Array; account: Uint8Array[] | undefined }> {
  const root = keccak256(p.accountProof[0] as Uint8Array);
  const leaf = await verifyMerkleProof(keccak256(p.address), p.accountProof, { root, useKeyHashing: false });
  const account = leaf === null ? undefined : (RLP.decode(leaf) as Uint8Array[]);
  if (account !== undefined) {
    expect(big(account[0] as Uint8Array)).toBe(p.nonce);
    expect(big(account[1] as Uint8Array)).toBe(p.balance);
    expect(account[2]).toEqual(p.storageHash);
    expect(account[3]).toEqual(p.codeHash);
  }
  for (const sp of p.storageProof) {
    if (sp.proof.length === 0) {
      // An account without storage, or one that does not exist (zero hash, as geth shows it).
      expect([EMPTY_TRIE_ROOT, new Uint8Array(32)]).toContainEqual(p.storageHash);
      expect(sp.value).toBe(0n);
      continue;
    }
    const v = await verifyMerkleProof(keccak256(sp.key), sp.proof, { root: p.storageHash, useKeyHashing: false });
    expect(v === null ? 0n : big(RLP.decode(v) as Uint8Array)).toBe(sp.value);
  }
  return { root, account };
}

describe("eth_getProof (EIP-1186)", () => {
  test("default: account and storage proofs verify, at the latest and at an older height, and agree with the state", async () => {
    const c = await chains.open();
    const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
    const token = await deployErc20(c, w0, 0);
    const transfer = iface.encodeFunctionData("transfer", [w1.address, 5n]);
    await runBlock(c, [await signTestTx(w0, { nonce: 1, to: token, data: transfer, gasLimit: 80_000n })]);

    const slots = [balanceSlot(w0.address), balanceSlot(w1.address), new Uint8Array(32).fill(0xee)];
    const now = await c.app.reader.proof(token, slots, 2);
    const { root, account } = await verified(now);
    expect(account).toBeDefined();
    expect(now.codeHash).toEqual(keccak256(c.app.reader.code(token, 2)));
    expect(now.storageHash).not.toEqual(EMPTY_TRIE_ROOT);
    expect(now.storageProof.map((s) => s.value)).toEqual([
      big(c.app.reader.storageAt(token, slots[0] as Uint8Array, 2)),
      5n,
      0n,
    ]);

    // Another account at the same height: same state root; its balance and nonce as the reader has them.
    const sender = await c.app.reader.proof(hex(w0.address), [], 2);
    expect((await verified(sender)).root).toEqual(root);
    expect(sender.nonce).toBe(2n);
    expect(sender.balance).toBe(c.app.reader.balance(hex(w0.address), 2));
    expect(sender.codeHash).toEqual(KECCAK256_NULL);
    expect(sender.storageHash).toEqual(EMPTY_TRIE_ROOT);

    // At height 1 (before the transfer) w1 held no tokens, and the state root differs.
    const before = await c.app.reader.proof(token, [balanceSlot(w1.address)], 1);
    expect((await verified(before)).root).not.toEqual(root);
    expect(before.storageProof[0]?.value).toBe(0n);
  });

  test("behavior: an account that does not exist gets a verified proof of absence, zero fields and hashes", async () => {
    const c = await chains.open();
    const nobody = new Uint8Array(20).fill(0x42);
    const p = await c.app.reader.proof(nobody, [new Uint8Array(32)], 0);
    const { account } = await verified(p);
    expect(account).toBeUndefined();
    expect(p.balance).toBe(0n);
    expect(p.nonce).toBe(0n);
    // geth: zero hashes for an account that does not exist.
    expect(p.codeHash).toEqual(new Uint8Array(32));
    expect(p.storageHash).toEqual(new Uint8Array(32));
    expect(p.storageProof).toEqual([{ key: new Uint8Array(32), value: 0n, proof: [] }]);
  });

  test("error: a height outside the kept state window is refused", async () => {
    const c = await chains.open();
    await expect(c.app.reader.proof(new Uint8Array(20), [], 5)).rejects.toThrow(StateUnavailableError);
  });
});
