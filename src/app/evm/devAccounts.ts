import { pbkdf2Sync } from "node:crypto";
import { HDKey } from "@scure/bip32";
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { bytesToHex } from "../../util/bytes.js";
import { keccak256, publicKeyOf } from "./crypto.js";
import { EvmConfigError } from "./errors.js";

/** Hardhat's and Anvil's development mnemonic. */
export const DEV_MNEMONIC = "test test test test test test test test test test test junk";
export const DEV_ACCOUNT_COUNT = 10;
/** 10000 ETH, what Hardhat and Anvil give each dev account. */
export const DEV_ACCOUNT_BALANCE_WEI = 10_000n * 10n ** 18n;

export interface DevAccount {
  index: number;
  /** EIP-55 checksummed. */
  address: string;
  addressBytes: Uint8Array;
  /** 0x-prefixed 32-byte hex. */
  privateKey: string;
}

const checksumCache = new Map<string, string>();

/** EIP-55 mixed-case checksum of a 20-byte address (memoized: events name the same accounts often). */
export function toChecksumAddress(address: Uint8Array): string {
  const hex = bytesToHex(address);
  const hit = checksumCache.get(hex);
  if (hit !== undefined) return hit;
  const out = checksum(hex);
  if (checksumCache.size >= 50_000) checksumCache.clear();
  checksumCache.set(hex, out);
  return out;
}

function checksum(hex: string): string {
  const hash = bytesToHex(keccak256(new TextEncoder().encode(hex)));
  let out = "0x";
  for (let i = 0; i < hex.length; i++) {
    const c = hex[i] as string;
    out += Number.parseInt(hash[i] as string, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/** Address of a secp256k1 private key. */
export function privateKeyToAddress(privateKey: Uint8Array): Uint8Array {
  return keccak256(publicKeyOf(privateKey)).slice(12);
}

/** BIP-39 seed: PBKDF2-HMAC-SHA512 of the NFKD mnemonic, salt "mnemonic", 2048 rounds (Node's native PBKDF2). */
function mnemonicSeed(mnemonic: string): Uint8Array {
  return new Uint8Array(pbkdf2Sync(mnemonic.normalize("NFKD"), "mnemonic", 2048, 64, "sha512"));
}

/**
 * The accounts at m/44'/60'/0'/0/i of a BIP-39 mnemonic: for DEV_MNEMONIC these are the addresses
 * Hardhat and Anvil print (account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266).
 */
export function deriveDevAccounts(mnemonic: string = DEV_MNEMONIC, count: number = DEV_ACCOUNT_COUNT): DevAccount[] {
  if (!validateMnemonic(mnemonic, wordlist)) {
    throw new EvmConfigError("the dev account mnemonic is not a valid BIP-39 English mnemonic. Check the words");
  }
  // The shared parent m/44'/60'/0'/0 is derived once, then one child per account (start-up time).
  const parent = HDKey.fromMasterSeed(mnemonicSeed(mnemonic)).derive("m/44'/60'/0'/0");
  const out: DevAccount[] = [];
  for (let i = 0; i < count; i++) {
    const key = parent.deriveChild(i).privateKey;
    if (key === null) throw new EvmConfigError(`cannot derive dev account ${i} from the mnemonic`);
    const addressBytes = privateKeyToAddress(key);
    out.push({ index: i, address: toChecksumAddress(addressBytes), addressBytes, privateKey: `0x${bytesToHex(key)}` });
  }
  return out;
}

/** Anvil-style listing of dev accounts with their keys, for the CLI to print. */
export function formatDevAccounts(accounts: DevAccount[], balanceWei: bigint = DEV_ACCOUNT_BALANCE_WEI): string {
  const eth = balanceWei / 10n ** 18n;
  const lines = ["Available Accounts", "=================="];
  for (const a of accounts) lines.push(`(${a.index}) ${a.address} (${eth} ETH)`);
  lines.push("", "Private Keys", "==================");
  for (const a of accounts) lines.push(`(${a.index}) ${a.privateKey}`);
  return lines.join("\n");
}
