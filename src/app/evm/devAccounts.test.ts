import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
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

  test("behavior: asking again gives the same accounts as copies; another count or mnemonic derives anew", () => {
    const a = deriveDevAccounts(DEV_MNEMONIC, 3);
    (a[0] as { address: string }).address = "changed";
    (a[0] as { addressBytes: Uint8Array }).addressBytes.fill(0);
    const b = deriveDevAccounts(DEV_MNEMONIC, 3);
    expect(b[0]?.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(Buffer.from(b[0]?.addressBytes ?? []).toString("hex")).toBe("f39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    expect(deriveDevAccounts(DEV_MNEMONIC, 4)).toHaveLength(4);
    const other = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
    expect(deriveDevAccounts(other, 3)[0]?.address).not.toBe(b[0]?.address);
  });

  test("default: DEV_MNEMONIC, which derive() does not check again, is valid BIP-39 English", () => {
    expect(validateMnemonic(DEV_MNEMONIC, wordlist)).toBe(true);
  });

  test("error: a mnemonic that is not valid BIP-39 English is refused", () => {
    expect(() => deriveDevAccounts("test test test test test test test test test test test test")).toThrow(
      EvmConfigError,
    );
  });
});
