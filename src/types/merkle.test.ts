import { describe, expect, test } from "vitest";
import { utf8ToBytes } from "../util/bytes.js";
import { hashFromByteSlices, proofsFromByteSlices, sha256, verifyMerkleProof } from "./index.js";

describe("merkle proofs", () => {
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 100]) {
    test(`default: every proof of ${n} items verifies against the root`, () => {
      const items = Array.from({ length: n }, (_, i) => utf8ToBytes(`item-${i}`));
      const { root, proofs } = proofsFromByteSlices(items);
      expect(root).toEqual(hashFromByteSlices(items));
      expect(proofs).toHaveLength(n);
      proofs.forEach((p, i) => {
        expect(p.total).toBe(n);
        expect(p.index).toBe(i);
        expect(p.aunts.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(verifyMerkleProof(p, root, items[i] as Uint8Array)).toBe(true);
      });
    });
  }

  test("error: wrong leaf, root, index or aunt", () => {
    const items = Array.from({ length: 6 }, (_, i) => utf8ToBytes(`item-${i}`));
    const { root, proofs } = proofsFromByteSlices(items);
    const p = proofs[4];
    if (!p) throw new TypeError("missing proof");
    expect(verifyMerkleProof(p, root, items[3] as Uint8Array)).toBe(false);
    expect(verifyMerkleProof(p, sha256(root), items[4] as Uint8Array)).toBe(false);
    expect(verifyMerkleProof({ ...p, index: 5 }, root, items[4] as Uint8Array)).toBe(false);
    expect(verifyMerkleProof({ ...p, aunts: [sha256(root), ...p.aunts.slice(1)] }, root, items[4] as Uint8Array)).toBe(
      false,
    );
    expect(verifyMerkleProof({ ...p, aunts: [...p.aunts, root] }, root, items[4] as Uint8Array)).toBe(false);
    expect(verifyMerkleProof({ ...p, total: 7 }, root, items[4] as Uint8Array)).toBe(false);
  });

  test("default: empty list", () => {
    const { root, proofs } = proofsFromByteSlices([]);
    expect(root).toEqual(sha256(new Uint8Array(0)));
    expect(proofs).toEqual([]);
  });
});
