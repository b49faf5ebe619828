import { ConfigError } from "../config/index.js";

/**
 * `cometh dev --init FILE` (Anvil's flag): a geth-style genesis.json read into a new dev chain's
 * genesis, so one file describes the same chain to cometh and to `geth init`. What is read:
 *
 * - `config.chainId` → the EVM chain id;
 * - `alloc` → `app_state.evm.alloc` (balance, nonce, code, storage; addresses with or without 0x);
 * - `coinbase` (when not the zero address) → `app_state.evm.coinbase`, the fee recipient of every block;
 * - `gasLimit` → the block gas limit (`block.max_gas`);
 * - `baseFeePerGas` → the fee market's first base fee.
 *
 * The file describes an Ethereum chain, so the fee market charges the gas a tx used, as Ethereum
 * does (`min_gas_multiplier` 0, not Cosmos EVM's 0.5 × gas limit). Fork times, `timestamp`,
 * `extraData`, `difficulty`, `mixHash`, `nonce` and `number` are not read: a dev chain always runs
 * Prague from block 0 at the wall clock's time.
 */
export interface DevInitGenesis {
  chainId: bigint | undefined;
  gasLimit: bigint | undefined;
  baseFee: bigint | undefined;
  coinbase: string | undefined;
  /** geth alloc with 0x-prefixed lowercase addresses, values as written. */
  alloc: Record<string, Record<string, unknown>>;
}

function quantity(file: string, key: string, v: unknown): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "string" && /^(0x[0-9a-fA-F]+|\d+)$/.test(v.trim())) return BigInt(v.trim());
  throw new ConfigError(file, key, `must be a whole number, decimal or 0x-hex (got ${JSON.stringify(v)})`);
}

/** Parses a geth genesis.json's text (`file` names it in errors). */
export function parseDevInitGenesis(file: string, text: string): DevInitGenesis {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, undefined, `is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new ConfigError(file, undefined, "is not a genesis object (geth's genesis.json: config, alloc, gasLimit…)");
  }
  const g = doc as Record<string, unknown>;
  const config = g.config;
  if (config !== undefined && (typeof config !== "object" || config === null || Array.isArray(config))) {
    throw new ConfigError(file, "config", "must be an object");
  }
  const alloc: Record<string, Record<string, unknown>> = {};
  if (g.alloc !== undefined && g.alloc !== null) {
    if (typeof g.alloc !== "object" || Array.isArray(g.alloc)) {
      throw new ConfigError(file, "alloc", 'must be an object {"0xaddress": {"balance": "0x…"}}');
    }
    for (const [addr, account] of Object.entries(g.alloc as Record<string, unknown>)) {
      const hex = addr.startsWith("0x") || addr.startsWith("0X") ? addr.slice(2) : addr;
      if (!/^[0-9a-fA-F]{40}$/.test(hex))
        throw new ConfigError(file, "alloc", `key "${addr}" is not a 20-byte address`);
      if (typeof account !== "object" || account === null || Array.isArray(account)) {
        throw new ConfigError(file, `alloc.${addr}`, "must be an object (balance, nonce, code, storage)");
      }
      alloc[`0x${hex.toLowerCase()}`] = account as Record<string, unknown>;
    }
  }
  let coinbase: string | undefined;
  if (g.coinbase !== undefined && g.coinbase !== null) {
    if (typeof g.coinbase !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(g.coinbase)) {
      throw new ConfigError(file, "coinbase", `must be a 0x address (got ${JSON.stringify(g.coinbase)})`);
    }
    if (!/^0x0{40}$/.test(g.coinbase)) coinbase = g.coinbase.toLowerCase();
  }
  return {
    chainId: quantity(file, "config.chainId", (config as Record<string, unknown> | undefined)?.chainId),
    gasLimit: quantity(file, "gasLimit", g.gasLimit),
    baseFee: quantity(file, "baseFeePerGas", g.baseFeePerGas),
    coinbase,
    alloc,
  };
}
