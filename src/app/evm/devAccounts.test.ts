import { HDNodeWallet } from "ethers";
import { describe, expect, test } from "vitest";
import { DEV_MNEMONIC, deriveDevAccounts, privateKeyToAddress, toChecksumAddress } from "./devAccounts.js";
import { EvmConfigError } from "./errors.js";

describe("dev accounts", () => {
  test("default: the accounts are ethers' m/44'/60'/0'/0/i of the mnemonic, keys and addresses", () => {
    for (const mnemonic of [
      DEV_MNEMONIC,
      "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
    ]) {
      const accounts = deriveDevAccounts(mnemonic, 12);
      expect(accounts).toHaveLength(12);
      accounts.forEach((a, i) => {
        const w = HDNodeWallet.fromPhrase(mnemonic, undefined, `m/44'/60'/0'/0/${i}`);
        expect(a.address).toBe(w.address);
        expect(a.privateKey).toBe(w.privateKey);
        expect(toChecksumAddress(privateKeyToAddress(Buffer.from(a.privateKey.slice(2), "hex")))).toBe(w.address);
      });
    }
  });

  test("error: a mnemonic that is not valid BIP-39 English is refused", () => {
    expect(() => deriveDevAccounts("test test test test test test test test test test test test")).toThrow(
      EvmConfigError,
    );
  });
});
