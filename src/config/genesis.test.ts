import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  addressFromPubKey,
  defaultConsensusParams,
  type GenesisDoc,
  generateEd25519PrivKey,
  pubKeyFromPrivKey,
} from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { GenesisError } from "./errors.js";
import { decodeGenesis, encodeGenesis, loadGenesis, saveGenesis } from "./genesis.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cometh-genesis-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function sampleDoc(): GenesisDoc {
  const pub = pubKeyFromPrivKey(generateEd25519PrivKey(new Uint8Array(32).fill(7)));
  return {
    genesisTime: 1_700_000_000_123_456_789n,
    chainId: "test-chain-AbC123",
    initialHeight: 1,
    consensusParams: defaultConsensusParams(),
    validators: [{ address: addressFromPubKey(pub), pubKey: pub, power: 10n, name: "" }],
    appHash: EMPTY_BYTES,
    appState: "",
  };
}

/** A genesis.json as `cometbft init` v0.38 writes it. */
const COMETBFT_GENESIS = `{
  "genesis_time": "2024-05-01T10:20:30.123456789Z",
  "chain_id": "test-chain-Xy12Zq",
  "initial_height": "0",
  "consensus_params": {
    "block": {
      "max_bytes": "22020096",
      "max_gas": "-1"
    },
    "evidence": {
      "max_age_num_blocks": "100000",
      "max_age_duration": "172800000000000",
      "max_bytes": "1048576"
    },
    "validator": {
      "pub_key_types": [
        "ed25519"
      ]
    },
    "version": {
      "app": "0"
    },
    "abci": {
      "vote_extensions_enable_height": "0"
    }
  },
  "validators": [
    {
      "address": "",
      "pub_key": {
        "type": "tendermint/PubKeyEd25519",
        "value": "6ZhBJ4ehHDUYqDRTHd3YM0Ljb3fI57KLnJ4OH4iC9UI="
      },
      "power": "10",
      "name": ""
    }
  ],
  "app_hash": ""
}`;

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GenesisError);
    return (err as Error).message;
  }
  throw new Error("expected a GenesisError");
}

describe("genesis.json", () => {
  test("default: round trip through the file", () => {
    const doc = sampleDoc();
    const path = join(dir, "genesis.json");
    saveGenesis(path, doc);
    expect(loadGenesis(path)).toEqual(doc);
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  test("default: written in CometBFT's layout (2-space indent, int64 strings)", () => {
    const text = encodeGenesis(sampleDoc());
    const obj = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(obj)).toEqual([
      "genesis_time",
      "chain_id",
      "initial_height",
      "consensus_params",
      "validators",
      "app_hash",
    ]);
    expect(text).toContain('\n  "genesis_time": "2023-11-14T22:13:20.123456789Z",\n');
    expect(text).toContain('"initial_height": "1"');
    expect(text).toContain('"max_age_duration": "172800000000000"');
    expect(text).toContain('"power": "10"');
    expect(text).toContain('"app_hash": ""');
    expect(text.endsWith("}\n")).toBe(true);
  });

  test("behavior: reads what cometbft init writes; initial_height 0 becomes 1; empty address is filled", () => {
    const doc = decodeGenesis(COMETBFT_GENESIS);
    expect(doc.initialHeight).toBe(1);
    expect(doc.chainId).toBe("test-chain-Xy12Zq");
    expect(doc.genesisTime).toBe(1_714_558_830_123_456_789n);
    expect(doc.consensusParams).toEqual(defaultConsensusParams());
    expect(doc.validators[0]?.address).toEqual(
      addressFromPubKey(doc.validators[0]?.pubKey ?? { type: "ed25519", bytes: EMPTY_BYTES }),
    );
    expect(doc.validators[0]?.power).toBe(10n);
    expect(doc.appState).toBe("");
  });

  test("behavior: app_state is kept as raw JSON (big numbers exact) and re-indented", () => {
    const withState = COMETBFT_GENESIS.replace(
      '"app_hash": ""',
      '"app_hash": "",\n  "app_state": {"balances":[{"addr":"0xab","amount":123456789012345678901234567890}],"empty":{}}',
    );
    const doc = decodeGenesis(withState);
    expect(doc.appState).toBe('{"balances":[{"addr":"0xab","amount":123456789012345678901234567890}],"empty":{}}');
    const text = encodeGenesis(doc);
    expect(text).toContain(
      '"app_state": {\n    "balances": [\n      {\n        "addr": "0xab",\n        "amount": 123456789012345678901234567890\n      }\n    ],\n    "empty": {}\n  }\n}',
    );
    const reread = decodeGenesis(text).appState as string;
    expect(reread).toContain("123456789012345678901234567890");
    expect(reread.replace(/\s/g, "")).toBe(doc.appState);
  });

  test("behavior: missing consensus_params are the defaults; missing genesis_time is now", () => {
    const doc = decodeGenesis('{"chain_id":"c"}', "g.json", () => 42n);
    expect(doc.consensusParams).toEqual(defaultConsensusParams());
    expect(doc.genesisTime).toBe(42n);
    expect(doc.validators).toEqual([]);
  });

  test("error: invalid fields are named", () => {
    expect(errorOf(() => decodeGenesis("{"))).toMatch(/^genesis\.json: is not valid JSON: /);
    expect(errorOf(() => decodeGenesis('{"chain_id":""}'))).toMatchInlineSnapshot(
      `"genesis.json: chain_id: must be a non-empty string"`,
    );
    expect(errorOf(() => decodeGenesis(`{"chain_id":"${"x".repeat(51)}"}`))).toMatchInlineSnapshot(
      `"genesis.json: chain_id: is too long (max: 50); got 51 characters"`,
    );
    expect(errorOf(() => decodeGenesis('{"chain_id":"c","genesis_time":"yesterday"}'))).toMatchInlineSnapshot(
      `"genesis.json: genesis_time: must be an RFC3339 time such as "2024-01-02T15:04:05.123456789Z"; got "yesterday""`,
    );
    expect(errorOf(() => decodeGenesis('{"chain_id":"c","initial_height":"-1"}'))).toMatchInlineSnapshot(
      `"genesis.json: initial_height: cannot be negative (got -1)"`,
    );
    expect(
      errorOf(() => decodeGenesis(COMETBFT_GENESIS.replace('"power": "10"', '"power": "0"'))),
    ).toMatchInlineSnapshot(
      `"genesis.json: validators[0].power: must be positive: the genesis file cannot contain validators with no voting power (got 0)"`,
    );
    expect(
      errorOf(() => decodeGenesis(COMETBFT_GENESIS.replace('"address": ""', '"address": "AABB"'))),
    ).toMatchInlineSnapshot(
      `"genesis.json: validators[0].address: is incorrect for this pub_key; should be FEEAFDED4208AE032962158B88BC203F5C4A06FD"`,
    );
    expect(
      errorOf(() => decodeGenesis(COMETBFT_GENESIS.replace("tendermint/PubKeyEd25519", "tendermint/PubKeySr25519"))),
    ).toMatchInlineSnapshot(
      `"genesis.json: validators[0].pub_key: unknown public key type "tendermint/PubKeySr25519"; valid types: "tendermint/PubKeyEd25519", "tendermint/PubKeySecp256k1""`,
    );
    expect(
      errorOf(() => decodeGenesis(COMETBFT_GENESIS.replace('"max_gas": "-1"', '"max_gas": "lots"'))),
    ).toMatchInlineSnapshot(`"genesis.json: consensus_params.block.max_gas: must be an integer string; got "lots""`);
    expect(
      errorOf(() => decodeGenesis(COMETBFT_GENESIS.replace('"app_hash": ""', '"app_hash": "zz"'))),
    ).toMatchInlineSnapshot(`"genesis.json: app_hash: must be hex without 0x; got "zz""`);
  });

  test("error: missing file", () => {
    expect(errorOf(() => loadGenesis(join(dir, "nope.json"))).replace(dir, "<dir>")).toMatchInlineSnapshot(
      `"<dir>/nope.json: does not exist. Run "cometh init" to create it"`,
    );
  });

  test("behavior: the written file is what loadGenesis reads byte for byte", () => {
    const path = join(dir, "genesis.json");
    saveGenesis(path, decodeGenesis(COMETBFT_GENESIS));
    const again = join(dir, "again.json");
    saveGenesis(again, loadGenesis(path));
    expect(readFileSync(again, "utf8")).toBe(readFileSync(path, "utf8"));
  });
});
