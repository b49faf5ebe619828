import { expect, test } from "vitest";
import { ConfigError } from "../config/index.js";
import { parseDevInitGenesis } from "./devGenesis.js";

test("--init: a geth genesis.json gives the chain id, alloc, coinbase, gas limit and base fee", () => {
  const g = parseDevInitGenesis(
    "g.json",
    JSON.stringify({
      config: { chainId: 1337, pragueTime: 0 },
      gasLimit: "0xaf79e0",
      baseFeePerGas: "1000000000",
      coinbase: "0x71562B71999873DB5B286DF957AF199EC94617F7",
      timestamp: "0x0",
      alloc: {
        "71562b71999873DB5b286dF957af199Ec94617F7": { balance: "0x10" },
        "0x00000000000000000000000000000000000000aa": { code: "0x00", nonce: "0x1", storage: { "0x01": "0x02" } },
      },
    }),
  );
  expect(g).toEqual({
    chainId: 1337n,
    gasLimit: 11_500_000n,
    baseFee: 1_000_000_000n,
    coinbase: "0x71562b71999873db5b286df957af199ec94617f7",
    alloc: {
      "0x71562b71999873db5b286df957af199ec94617f7": { balance: "0x10" },
      "0x00000000000000000000000000000000000000aa": { code: "0x00", nonce: "0x1", storage: { "0x01": "0x02" } },
    },
  });
});

test("--init: absent keys stay unset; a zero coinbase is no coinbase", () => {
  expect(parseDevInitGenesis("g.json", JSON.stringify({ coinbase: `0x${"0".repeat(40)}` }))).toEqual({
    chainId: undefined,
    gasLimit: undefined,
    baseFee: undefined,
    coinbase: undefined,
    alloc: {},
  });
});

test("--init: a bad file is a ConfigError naming the file and the key", () => {
  expect(() => parseDevInitGenesis("g.json", "{")).toThrow(/g\.json: is not valid JSON/);
  expect(() => parseDevInitGenesis("g.json", "[]")).toThrow(ConfigError);
  expect(() => parseDevInitGenesis("g.json", JSON.stringify({ gasLimit: "ten" }))).toThrow(
    'g.json: gasLimit must be a whole number, decimal or 0x-hex (got "ten")',
  );
  expect(() => parseDevInitGenesis("g.json", JSON.stringify({ alloc: { "0x12": {} } }))).toThrow(
    'g.json: alloc key "0x12" is not a 20-byte address',
  );
  expect(() => parseDevInitGenesis("g.json", JSON.stringify({ coinbase: "me" }))).toThrow(
    /coinbase must be a 0x address/,
  );
});
