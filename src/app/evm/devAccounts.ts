import { createHmac, pbkdf2Sync } from "node:crypto";
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { bytesToHex } from "../../util/bytes.js";
import { compressedPublicKeyOf, keccak256, publicKeyOf } from "./crypto.js";
import { EvmConfigError } from "./errors.js";
import { bigintToBytes, bytesToBigint, setLengthLeft } from "./records.js";

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

// ---- BIP-32 private derivation (CKDpriv) ---------------------------------------------------------
// Written out because @scure/bip32 computes every node's public key in pure JS (~35 ms of start-up
// for the first one, noble's tables); here HMAC-SHA512 is Node's and serP(point(k)) is libsecp256k1's.
// Checked against ethers' HDNodeWallet in devAccounts.test.ts.

const HARDENED = 0x8000_0000;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

interface ExtendedKey {
  key: Uint8Array;
  chainCode: Uint8Array;
}

function splitI(i: Buffer): { il: bigint; chainCode: Uint8Array } {
  return { il: bytesToBigint(i.subarray(0, 32)), chainCode: new Uint8Array(i.subarray(32)) };
}

function keyBytes(k: bigint): Uint8Array {
  return setLengthLeft(bigintToBytes(k), 32);
}

function masterKey(seed: Uint8Array): ExtendedKey {
  const { il, chainCode } = splitI(createHmac("sha512", "Bitcoin seed").update(seed).digest());
  if (il === 0n || il >= SECP256K1_N) throw new EvmConfigError("the mnemonic's seed gives no valid BIP-32 master key");
  return { key: keyBytes(il), chainCode };
}

function childKey(parent: ExtendedKey, index: number): ExtendedKey {
  const data = Buffer.alloc(37);
  if (index >= HARDENED) data.set(parent.key, 1);
  else data.set(compressedPublicKeyOf(parent.key), 0);
  data.writeUInt32BE(index, 33);
  const { il, chainCode } = splitI(createHmac("sha512", parent.chainCode).update(data).digest());
  const k = (il + bytesToBigint(parent.key)) % SECP256K1_N;
  // Probability below 2^-127; BIP-32 says to skip to the next index, which would renumber the accounts.
  if (il >= SECP256K1_N || k === 0n) throw new EvmConfigError(`BIP-32 child ${index} of the mnemonic is invalid`);
  return { key: keyBytes(k), chainCode };
}

/**
 * The accounts at m/44'/60'/0'/0/i of a BIP-39 mnemonic: for DEV_MNEMONIC these are the addresses
 * Hardhat and Anvil print (account 0 is 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266).
 */
export function deriveDevAccounts(mnemonic: string = DEV_MNEMONIC, count: number = DEV_ACCOUNT_COUNT): DevAccount[] {
  // `cometh dev` asks twice at start-up (the CLI for genesis, the app for its keyring): the last
  // answer is kept, as copies, so a caller changing one changes nothing for the next.
  const last = lastDerived;
  if (last !== undefined && last.mnemonic === mnemonic && last.count === count) return copyAccounts(last.accounts);
  const accounts = derive(mnemonic, count);
  lastDerived = { mnemonic, count, accounts: copyAccounts(accounts) };
  return accounts;
}

let lastDerived: { mnemonic: string; count: number; accounts: DevAccount[] } | undefined;

function copyAccounts(accounts: DevAccount[]): DevAccount[] {
  return accounts.map((a) => ({ ...a, addressBytes: Uint8Array.from(a.addressBytes) }));
}

function derive(mnemonic: string, count: number): DevAccount[] {
  // DEV_MNEMONIC is valid (devAccounts.test.ts checks it): @scure/bip39 finds each word with a linear
  // search of the 2 048-word list, ~5 ms of a fresh process's start-up.
  if (mnemonic !== DEV_MNEMONIC && !validateMnemonic(mnemonic, wordlist)) {
    throw new EvmConfigError("the dev account mnemonic is not a valid BIP-39 English mnemonic. Check the words");
  }
  // The shared parent m/44'/60'/0'/0 is derived once, then one child per account (start-up time).
  let parent = masterKey(mnemonicSeed(mnemonic));
  for (const index of [44 + HARDENED, 60 + HARDENED, HARDENED, 0]) parent = childKey(parent, index);
  const out: DevAccount[] = [];
  for (let i = 0; i < count; i++) {
    const key = childKey(parent, i).key;
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
