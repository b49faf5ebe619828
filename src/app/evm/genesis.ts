import { hexToBytes } from "../../util/bytes.js";
import { DEV_ACCOUNT_BALANCE_WEI, type DevAccount } from "./devAccounts.js";
import { EvmConfigError } from "./errors.js";
import { defaultFeeMarketParams, parseDec } from "./feeMarket.js";
import { MULTICALL3_CODE, PERMIT2_CODE } from "./preinstallCode.js";
import type { FeeMarketParams } from "./records.js";

/**
 * The EVM app's genesis `app_state` (all keys optional; an empty or absent app_state funds the dev
 * accounts):
 *
 * ```json
 * {
 *   "evm": {
 *     "accounts": [{ "address": "0x…", "balance": "1000000000000000000", "nonce": "0",
 *                    "code": "0x…", "storage": { "0x…slot": "0x…value" } }],
 *     "alloc": { "0x…": { "balance": "0x…", "code": "0x…", "nonce": "0x0", "storage": {} } },
 *     "preinstalls": true,
 *     "coinbase": "0x…",
 *     "dev_chain": false
 *   },
 *   "feemarket": { "params": { "no_base_fee": false, "base_fee": "1000000000", "base_fee_change_denominator": 8,
 *     "elasticity_multiplier": 2, "enable_height": "0", "min_gas_price": "0", "min_gas_multiplier": "0.5" } }
 * }
 * ```
 * `accounts` follows Cosmos EVM's evm genesis (with balances inline, since there is no bank module);
 * `alloc` is geth's genesis alloc. Numbers are decimal or 0x-hex strings (JSON numbers only when exact).
 * When `evm` lists no funded account, the dev accounts get DEV_ACCOUNT_BALANCE_WEI each.
 */

export interface GenesisAccount {
  address: Uint8Array;
  balance: bigint;
  nonce: bigint;
  code: Uint8Array;
  storage: { slot: Uint8Array; value: Uint8Array }[];
}

export interface EvmGenesis {
  accounts: GenesisAccount[];
  preinstalls: boolean;
  coinbase: Uint8Array | undefined;
  feeMarket: FeeMarketParams;
  /** `evm.dev_chain`: a `cometh dev` chain (dev entries accepted, see devEntries.ts). */
  devChain: boolean;
}

/** The contracts Cosmos EVM's evmd installs at genesis (x/vm DefaultPreinstalls), in its order. */
export const PREINSTALLS: { name: string; address: string; code: string }[] = [
  {
    name: "Create2 (deterministic deployment proxy)",
    address: "0x4e59b44847b379578588920ca78fbf26c0b4956c",
    code: "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3",
  },
  { name: "Multicall3", address: "0xcA11bde05977b3631167028862bE2a173976CA11", code: MULTICALL3_CODE },
  { name: "Permit2", address: "0x000000000022D473030F116dDEE9F6B43aC78BA3", code: PERMIT2_CODE },
  {
    name: "Safe singleton factory",
    address: "0x914d7Fec6aaC8cd542e72Bca78B30650d45643d7",
    code: "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3",
  },
  {
    name: "EIP-2935 history storage",
    address: "0x0000F90827F1C53a10cb7A02335B175320002935",
    code: "0x3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500",
  },
];

export const HISTORY_STORAGE_ADDRESS = hexToBytes("0000F90827F1C53a10cb7A02335B175320002935") as Uint8Array;
/** EIP-2935 / Cosmos EVM DefaultHistoryServeWindow. */
export const HISTORY_SERVE_WINDOW = 8192;

function fail(what: string, fix: string): never {
  throw new EvmConfigError(`genesis app_state: ${what}. ${fix}`);
}

function parseUint(v: unknown, what: string): bigint {
  if (v === undefined || v === null || v === "") return 0n;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v) || v < 0)
      fail(`${what} ${v} is not an exact non-negative integer`, "Write it as a string");
    return BigInt(v);
  }
  if (typeof v !== "string") fail(`${what} must be a string`, 'Use a decimal or 0x-hex string such as "1000"');
  const s = v.trim();
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(s))
    fail(`${what} "${v}" is not a number`, 'Use a decimal or 0x-hex string such as "1000"');
  return BigInt(s);
}

function parseBytes(v: unknown, what: string, length?: number): Uint8Array {
  if (v === undefined || v === null) return new Uint8Array(0);
  const b = typeof v === "string" ? hexToBytes(v) : undefined;
  if (b === undefined) fail(`${what} is not hex`, 'Write it as a 0x-prefixed hex string such as "0x60806040"');
  if (length !== undefined && b.length !== length)
    fail(`${what} has ${b.length} bytes, expected ${length}`, "Check the value");
  return b;
}

function parseSlot(v: unknown, what: string): Uint8Array {
  const b = parseBytes(v, what);
  if (b.length > 32) fail(`${what} is longer than 32 bytes`, "Storage keys and values are 32-byte words");
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

function parseStorage(v: unknown, where: string): { slot: Uint8Array; value: Uint8Array }[] {
  if (v === undefined || v === null) return [];
  const pairs: [unknown, unknown][] = Array.isArray(v)
    ? v.map((e) => [(e as { key?: unknown }).key, (e as { value?: unknown }).value])
    : typeof v === "object"
      ? Object.entries(v as Record<string, unknown>)
      : fail(`${where}.storage must be an object or a list`, 'Use {"0xslot": "0xvalue"}');
  return pairs.map(([k, val]) => ({
    slot: parseSlot(k, `${where} storage key`),
    value: parseSlot(val, `${where} storage value`),
  }));
}

function parseAccount(raw: unknown, address: unknown, where: string): GenesisAccount {
  if (typeof raw !== "object" || raw === null)
    fail(`${where} is not an object`, "Give address, balance, nonce, code, storage");
  const r = raw as Record<string, unknown>;
  return {
    address: parseBytes(address, `${where}.address`, 20),
    balance: parseUint(r.balance, `${where}.balance`),
    nonce: parseUint(r.nonce, `${where}.nonce`),
    code: parseBytes(r.code, `${where}.code`),
    storage: parseStorage(r.storage, where),
  };
}

function parseFeeMarket(raw: unknown): FeeMarketParams {
  const p = defaultFeeMarketParams();
  if (raw === undefined || raw === null) return p;
  const r = raw as Record<string, unknown>;
  const dec = (v: unknown, what: string, fallback: bigint): bigint => {
    if (v === undefined || v === null) return fallback;
    const d = parseDec(String(v));
    if (d === undefined)
      fail(`feemarket.params.${what} "${String(v)}" is not a decimal`, 'Write it like "0.5" or "1000000000"');
    return d;
  };
  if (r.no_base_fee !== undefined) p.noBaseFee = r.no_base_fee === true || r.no_base_fee === "true";
  if (r.base_fee_change_denominator !== undefined) {
    p.baseFeeChangeDenominator = parseUint(
      r.base_fee_change_denominator,
      "feemarket.params.base_fee_change_denominator",
    );
  }
  if (r.elasticity_multiplier !== undefined) {
    p.elasticityMultiplier = parseUint(r.elasticity_multiplier, "feemarket.params.elasticity_multiplier");
  }
  p.baseFee = dec(r.base_fee, "base_fee", p.baseFee);
  if (r.enable_height !== undefined)
    p.enableHeight = Number(parseUint(r.enable_height, "feemarket.params.enable_height"));
  p.minGasPrice = dec(r.min_gas_price, "min_gas_price", p.minGasPrice);
  p.minGasMultiplier = dec(r.min_gas_multiplier, "min_gas_multiplier", p.minGasMultiplier);
  if (p.baseFeeChangeDenominator === 0n) fail("base fee change denominator cannot be 0", "Use 8 (the default)");
  if (p.elasticityMultiplier === 0n) fail("elasticity multiplier cannot be zero", "Use 2 (the default)");
  if (p.minGasMultiplier > 10n ** 18n) fail("min_gas_multiplier must be between 0 and 1", 'Use "0.5" (the default)');
  return p;
}

/**
 * Parses app_state bytes (JSON). `devAccounts` are funded when no account in `evm` has a balance.
 */
export function parseEvmGenesis(appStateBytes: Uint8Array, devAccounts: DevAccount[]): EvmGenesis {
  const text = new TextDecoder().decode(appStateBytes).trim();
  let root: Record<string, unknown> = {};
  if (text !== "" && text !== "null") {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        fail("is not a JSON object", 'Write app_state as {"evm": {...}} or leave it out');
      }
      root = parsed as Record<string, unknown>;
    } catch (err) {
      if (err instanceof EvmConfigError) throw err;
      throw new EvmConfigError("genesis app_state is not valid JSON. Fix genesis.json or leave app_state out", {
        cause: err,
      });
    }
  }
  const evm = (root.evm ?? {}) as Record<string, unknown>;
  const accounts: GenesisAccount[] = [];
  if (evm.accounts !== undefined) {
    if (!Array.isArray(evm.accounts)) fail("evm.accounts must be a list", "Use [{address, balance, ...}]");
    evm.accounts.forEach((a, i) => {
      accounts.push(parseAccount(a, (a as { address?: unknown }).address, `evm.accounts[${i}]`));
    });
  }
  if (evm.alloc !== undefined) {
    if (typeof evm.alloc !== "object" || evm.alloc === null)
      fail("evm.alloc must be an object", 'Use {"0xaddr": {...}}');
    for (const [addr, a] of Object.entries(evm.alloc as Record<string, unknown>)) {
      accounts.push(parseAccount(a, addr, `evm.alloc[${addr}]`));
    }
  }
  if (!accounts.some((a) => a.balance > 0n)) {
    for (const d of devAccounts) {
      accounts.push({
        address: d.addressBytes,
        balance: DEV_ACCOUNT_BALANCE_WEI,
        nonce: 0n,
        code: new Uint8Array(0),
        storage: [],
      });
    }
  }
  const coinbase = evm.coinbase === undefined ? undefined : parseBytes(evm.coinbase, "evm.coinbase", 20);
  const feemarket = (root.feemarket ?? {}) as Record<string, unknown>;
  return {
    accounts,
    preinstalls: evm.preinstalls !== false,
    coinbase,
    feeMarket: parseFeeMarket(feemarket.params),
    devChain: evm.dev_chain === true,
  };
}
