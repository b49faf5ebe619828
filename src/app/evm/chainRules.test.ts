import { describe, expect, test } from "vitest";
import { chainRules } from "./chainRules.js";

describe("chainRules", () => {
  test("default: every active precompile has geth's name (Prague 0x01-0x11, P256, Bech32)", () => {
    const r = chainRules();
    const names = r.precompiles.map((p) => p.name);
    expect(names).toEqual([
      "ECREC",
      "SHA256",
      "RIPEMD160",
      "ID",
      "MODEXP",
      "BN254_ADD",
      "BN254_MUL",
      "BN254_PAIRING",
      "BLAKE2F",
      "KZG_POINT_EVALUATION",
      "BLS12_G1ADD",
      "BLS12_G1MSM",
      "BLS12_G2ADD",
      "BLS12_G2MSM",
      "BLS12_PAIRING_CHECK",
      "BLS12_MAP_FP_TO_G1",
      "BLS12_MAP_FP2_TO_G2",
      "P256VERIFY",
      "BECH32",
    ]);
    expect(Buffer.from(r.systemContracts[0]?.address ?? []).toString("hex")).toBe(
      "0000f90827f1c53a10cb7a02335b175320002935",
    );
  });
});
