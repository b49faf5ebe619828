import { createMerkleProof, createMPT, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { bytesToHex } from "../../util/bytes.js";
import { keccak256 } from "./crypto.js";
import { bigintToBytes, bytesToBigint, EMPTY_TRIE_ROOT, equalBytes, stripZeros } from "./records.js";
import type { EvmStateDb } from "./stateDb.js";

/** eth_getProof's answer (EIP-1186) for one account at one height. */
export interface StateProof {
  address: Uint8Array;
  accountProof: Uint8Array[];
  balance: bigint;
  codeHash: Uint8Array;
  nonce: bigint;
  storageHash: Uint8Array;
  storageProof: { key: Uint8Array; value: bigint; proof: Uint8Array[] }[];
}

interface StateTrie {
  trie: MerklePatriciaTrie;
  /** Storage root per account (hex address) with storage; others have the empty root. */
  storageRoots: Map<string, Uint8Array>;
}

/** Heights whose state trie is kept (a wallet or tool usually asks for several accounts at one height). */
/** What geth shows as the code hash and storage root of an account that does not exist. */
const ZERO_HASH = new Uint8Array(32);
const KEPT_TRIES = 4;

/**
 * EIP-1186 proofs. cometh commits its state with a chained hash, not a Merkle-Patricia trie (see
 * stateDb.ts), so the secure state trie of a height (keccak(address) → rlp([nonce, balance,
 * storageRoot, codeHash]), each storage trie keccak(slot) → rlp(value)) is built from the stored
 * state when a proof is asked for, and kept for the last few heights. The proofs are standard and
 * verify against keccak(accountProof[0]), the root of that trie; the block's stateRoot field is the
 * app hash and does not commit to them (docs/compatibility.md). Building costs O(state) per height:
 * meant for dev chains.
 */
export class StateProver {
  readonly #db: EvmStateDb;
  readonly #tries = new Map<number, Promise<StateTrie>>();

  constructor(db: EvmStateDb) {
    this.#db = db;
  }

  async prove(address: Uint8Array, slots: readonly Uint8Array[], height: number): Promise<StateProof> {
    const state = await this.#stateTrie(height);
    // The account, its storage and the asked slots are read in one turn (one snapshot), then proved.
    const account = this.#db.readAccount(address, height);
    const exists = account.exists;
    const storageHash = exists ? (state.storageRoots.get(bytesToHex(address)) ?? EMPTY_TRIE_ROOT) : EMPTY_TRIE_ROOT;
    const hasStorage = exists && !equalBytes(storageHash, EMPTY_TRIE_ROOT);
    const stored = hasStorage ? [...this.#db.storageSlotsAt(address, account.incarnation, height)] : [];
    const values = slots.map((slot) =>
      exists ? this.#db.readStorage(address, account.incarnation, slot, height) : new Uint8Array(0),
    );
    const accountProof = await createMerkleProof(state.trie, keccak256(address));
    const storage = hasStorage ? await storageTrie(stored) : undefined;
    const storageProof = [];
    for (const [i, slot] of slots.entries()) {
      const proof = storage === undefined ? [] : await createMerkleProof(storage, keccak256(slot));
      storageProof.push({ key: slot, value: bytesToBigint(values[i] as Uint8Array), proof });
    }
    return {
      address,
      accountProof,
      balance: exists ? account.balance : 0n,
      // geth (GetCodeHash, GetStorageRoot): an account that does not exist shows zero hashes.
      codeHash: exists ? account.codeHash : ZERO_HASH,
      nonce: exists ? account.nonce : 0n,
      storageHash: exists ? storageHash : ZERO_HASH,
      storageProof,
    };
  }

  #stateTrie(height: number): Promise<StateTrie> {
    let t = this.#tries.get(height);
    if (t === undefined) {
      t = this.#buildStateTrie(height);
      // A failed build (e.g. the height was pruned meanwhile) is not kept.
      t.catch(() => this.#tries.delete(height));
      if (this.#tries.size >= KEPT_TRIES) this.#tries.delete(this.#tries.keys().next().value as number);
      this.#tries.set(height, t);
    }
    return t;
  }

  async #buildStateTrie(height: number): Promise<StateTrie> {
    // Read everything in one turn (one LMDB snapshot, no commit in between), then build the tries.
    const accounts = [...this.#db.accountsAt(height)].map(({ addr, account }) => ({
      addr,
      account,
      slots: [...this.#db.storageSlotsAt(addr, account.incarnation, height)],
    }));
    const trie = await createMPT({ useKeyHashing: false });
    const storageRoots = new Map<string, Uint8Array>();
    for (const { addr, account, slots } of accounts) {
      const storage = await storageTrie(slots);
      const root = storage.root();
      if (!equalBytes(root, EMPTY_TRIE_ROOT)) storageRoots.set(bytesToHex(addr), root);
      const encoded = RLP.encode([
        bigintToBytes(account.nonce),
        bigintToBytes(account.balance),
        root,
        account.codeHash,
      ]);
      await trie.put(keccak256(addr), encoded);
    }
    return { trie, storageRoots };
  }
}

async function storageTrie(slots: readonly { slot: Uint8Array; value: Uint8Array }[]): Promise<MerklePatriciaTrie> {
  const trie = await createMPT({ useKeyHashing: false });
  for (const { slot, value } of slots) await trie.put(keccak256(slot), RLP.encode(stripZeros(value)));
  return trie;
}
