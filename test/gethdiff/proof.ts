import { verifyMerkleProof } from "@ethereumjs/mpt";
import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";

/** An eth_getProof result as sent (hex strings). */
export interface ProofResult {
  address: string;
  accountProof: string[];
  balance: string;
  codeHash: string;
  nonce: string;
  storageHash: string;
  storageProof: { key: string; value: string; proof: string[] }[];
}

const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, "").padStart(2, "0"), "hex"));
const hexOf = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;
const keccak = (b: Uint8Array) => keccak_256(b);
/** A quantity as RLP wants it: big-endian without leading zeros. */
const quantity = (h: string) => {
  const n = BigInt(h);
  return n === 0n ? new Uint8Array(0) : bytes(n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, "0"));
};
const EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
const EMPTY_CODE = "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470";

/**
 * Checks an EIP-1186 proof as a light client does: the account proof against `stateRoot` (when
 * given; else the root its first node hashes to), the account's fields against the proven leaf, each
 * storage proof against `storageHash`. Returns the problems found (none: valid).
 */
export async function verifyProof(p: ProofResult, stateRoot?: string): Promise<string[]> {
  const problems: string[] = [];
  const first = p.accountProof[0];
  if (first === undefined) return ["accountProof is empty"];
  const root = stateRoot === undefined ? keccak(bytes(first)) : bytes(stateRoot);
  if (stateRoot !== undefined && hexOf(keccak(bytes(first))) !== stateRoot.toLowerCase()) {
    problems.push(`the first account proof node does not hash to the block's stateRoot ${stateRoot}`);
  }
  let leaf: Uint8Array | null = null;
  try {
    leaf = await verifyMerkleProof(keccak(bytes(p.address)), p.accountProof.map(bytes), {
      root,
      useKeyHashing: false,
    });
  } catch (err) {
    problems.push(`account proof does not verify: ${(err as Error).message}`);
  }
  if (leaf === null) {
    if (BigInt(p.nonce) !== 0n || BigInt(p.balance) !== 0n) problems.push("absent account with a nonce or balance");
    if (p.storageHash.toLowerCase() !== EMPTY_ROOT && BigInt(p.storageHash) !== 0n) {
      problems.push(`absent account with storageHash ${p.storageHash}`);
    }
  } else {
    const expected = RLP.encode([quantity(p.nonce), quantity(p.balance), bytes(p.storageHash), bytes(p.codeHash)]);
    if (hexOf(leaf) !== hexOf(expected)) problems.push(`account leaf ${hexOf(leaf)} is not the fields shown`);
  }
  for (const sp of p.storageProof) {
    const slot = bytes(BigInt(sp.key).toString(16).padStart(64, "0"));
    try {
      const v = await verifyMerkleProof(keccak(slot), sp.proof.map(bytes), {
        root: bytes(leaf === null ? EMPTY_ROOT : p.storageHash),
        useKeyHashing: false,
      });
      const want = BigInt(sp.value) === 0n ? null : hexOf(RLP.encode(quantity(sp.value)));
      if ((v === null ? null : hexOf(v)) !== want)
        problems.push(`storage ${sp.key}: proven ${v && hexOf(v)}, shown ${sp.value}`);
    } catch (err) {
      if (sp.proof.length > 0 || BigInt(sp.value) !== 0n) {
        problems.push(`storage proof of ${sp.key} does not verify: ${(err as Error).message}`);
      }
    }
  }
  if (leaf === null && p.codeHash.toLowerCase() !== EMPTY_CODE && BigInt(p.codeHash) !== 0n) {
    problems.push(`absent account with codeHash ${p.codeHash}`);
  }
  return problems;
}
