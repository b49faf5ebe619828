import { gunzipSync } from "node:zlib";
import { describe, expect, test } from "vitest";
import { bytesToHex, hexToBytes, utf8ToBytes } from "../../util/bytes.js";
import {
  type DumpAccount,
  decodeAnvilStateHex,
  decodeAnvilStateJson,
  encodeAnvilStateHex,
  encodeAnvilStateJson,
  type StateDump,
  StateDumpError,
} from "./stateDump.js";

/**
 * What Anvil 1.7.1 wrote (anvil_dumpState, gunzipped, then cut down to three accounts and the block with the
 * tx): anvil_setCode/setStorageAt/setNonce on 0x…aa, evm_mine, a 16-wei transfer from the first dev account,
 * which ran 0x…aa's code (SSTORE(0, 1)). Revm's BlockEnv (U256 fields as hex strings, slot_num),
 * lowercase addresses, 32-byte storage words, blocks and mined transactions in Anvil's own shapes.
 */
const ANVIL_CURRENT = `{
  "block": {
    "number": "0x2",
    "beneficiary": "0x0000000000000000000000000000000000000000",
    "timestamp": "0x6b07c581",
    "gas_limit": 30000000,
    "basefee": 875000000,
    "difficulty": "0x0",
    "prevrandao": "0xd6bf6b8fe2693e16f1e6e591d28b1646f37206eef3cf66b8e30e32564c3c4af3",
    "blob_excess_gas_and_price": {
      "excess_blob_gas": 0,
      "blob_gasprice": 1
    },
    "slot_num": 0
  },
  "accounts": {
    "0x00000000000000000000000000000000000000aa": {
      "nonce": 5,
      "balance": "0x10",
      "code": "0x6001600055",
      "storage": {
        "0x0000000000000000000000000000000000000000000000000000000000000000": "0x0000000000000000000000000000000000000000000000000000000000000001",
        "0x0000000000000000000000000000000000000000000000000000000000000001": "0x00000000000000000000000000000000000000000000000000000000000000ff"
      }
    },
    "0x0000f90827f1c53a10cb7a02335b175320002935": {
      "nonce": 0,
      "balance": "0x0",
      "code": "0x3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500",
      "storage": {
        "0x0000000000000000000000000000000000000000000000000000000000000000": "0x505198714505872c7235a89393321257a5c9a9f96ee3bcba803929f3c3027b83",
        "0x0000000000000000000000000000000000000000000000000000000000000001": "0x09e9b3cd69c6d16f7bc1d79080419ea49cf49b598bdd51e6dba17994c6261bf6"
      }
    },
    "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266": {
      "nonce": 1,
      "balance": "0x21e19e0803873578270",
      "code": "0x",
      "storage": {}
    }
  },
  "best_block_number": 2,
  "blocks": [
    {
      "header": {
        "parentHash": "0x09e9b3cd69c6d16f7bc1d79080419ea49cf49b598bdd51e6dba17994c6261bf6",
        "sha3Uncles": "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
        "miner": "0x0000000000000000000000000000000000000000",
        "stateRoot": "0xe541f769007991765836459bf10c36c3409f986a3ce14e209a77ce1382596bd1",
        "transactionsRoot": "0x3e2da94b3092c57a5f0a83120fa3b1713da533b0b715e5c32f2c1b9ee7152969",
        "receiptsRoot": "0x9bccb3ee1654854801c305a383acbd6b2e39485d9171eb3f25d377211a71c995",
        "logsBloom": "0x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "difficulty": "0x0",
        "number": "0x2",
        "gasLimit": "0x1c9c380",
        "gasUsed": "0xa862",
        "timestamp": "0x6b07c581",
        "extraData": "0x",
        "mixHash": "0xd6bf6b8fe2693e16f1e6e591d28b1646f37206eef3cf66b8e30e32564c3c4af3",
        "nonce": "0x0000000000000000",
        "baseFeePerGas": "0x342770c0",
        "withdrawalsRoot": "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
        "blobGasUsed": "0x0",
        "excessBlobGas": "0x0",
        "parentBeaconBlockRoot": "0x0000000000000000000000000000000000000000000000000000000000000000",
        "requestsHash": "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
      },
      "transactions": [
        {
          "transaction": {
            "type": "0x2",
            "chainId": "0x7a69",
            "nonce": "0x0",
            "gas": "0xa862",
            "maxFeePerGas": "0x6fc23ac0",
            "maxPriorityFeePerGas": "0x3b9aca00",
            "to": "0x00000000000000000000000000000000000000aa",
            "value": "0x10",
            "accessList": [],
            "input": "0x",
            "r": "0xb82b2572e802fcab2bd30f357a025ed68dc55c1d66c53c6799c9d8c8c010db18",
            "s": "0x1f36d3793ccf97271baf403934718d3b11f92ce91af080540bd94b783f5c8f51",
            "yParity": "0x0",
            "v": "0x0",
            "hash": "0xb45d382516447908130255f5d4020a8ac9a2b5d27a33c1b602b5615a9394158c"
          },
          "impersonated_sender": null
        }
      ],
      "ommers": [],
      "withdrawals": null
    }
  ],
  "transactions": [
    {
      "info": {
        "transaction_hash": "0xb45d382516447908130255f5d4020a8ac9a2b5d27a33c1b602b5615a9394158c",
        "transaction_index": 0,
        "from": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        "to": "0x00000000000000000000000000000000000000aa",
        "contract_address": null,
        "traces": [
          {
            "parent": null,
            "children": [],
            "idx": 0,
            "trace": {
              "depth": 0,
              "success": true,
              "caller": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
              "address": "0x00000000000000000000000000000000000000aa",
              "maybe_precompile": null,
              "selfdestruct_address": null,
              "selfdestruct_refund_target": null,
              "selfdestruct_transferred_value": null,
              "kind": "CALL",
              "value": "0x10",
              "data": "0x",
              "output": "0x",
              "gas_used": 22106,
              "gas_limit": 22106,
              "gas_refund_counter": 0,
              "status": "Stop",
              "steps": [],
              "decoded": null
            },
            "logs": [],
            "ordering": []
          }
        ],
        "exit": "Stop",
        "out": "0x",
        "nonce": 0,
        "gas_used": 43106
      },
      "receipt": {
        "type": "0x2",
        "status": "0x1",
        "cumulativeGasUsed": "0xa862",
        "logs": [],
        "logsBloom": "0x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      },
      "block_hash": "0x953c114d6745278f58e5db617e63f63d6d206ba81b8a1339aabed010d93e5c3b",
      "block_number": 2
    }
  ],
  "historical_states": null
}`;

/** A whole anvil_dumpState answer from Anvil 1.7.1 (`anvil --accounts 1`, one anvil_setStorageAt): flate2's gzip. */
const ANVIL_DUMP_HEX = `
0x1f8b08000000000000ffed564b8fdb3610fe2f3cebc0d7f0e1e3a2687ae8a12890531018c3d1d016560f57949b2d16feef05657bd30d
760307f5a54029019246c3e1cc47f2e3f72c523fd1a3d83c8bf138249ec546c827291a9178e4dc5187f35f67db8d4d3462e9062e0b0e87
b5a3128dd861d9f6ddd02d62632e7e8d485838338b8d7ae9dc88b6cbb9a363bf5c46158d38ccfce78c638bd30f25f29d04533fa52d3f11
97b2ada9e1d86e0f73475c71b8d8579f1d16b1a9a95e3e2e4eead488d24fcb763c0e62234f8d40a2e9382ea506b83545c415f669ac2157
3c7a5cdf2f75d3d49e3f4423ca32cdb85bf3fbd708a83bc098b3389d9a4b981c65d03e2b02834a52f228b531909407a3a5943a1ab8b154
63bcc9b73556d649ebc03ba9a571f5b61a3c64034e4a658d34412975b63aa572ce61b5beb645291d58c8a06b1cc8d940820c39b7f569e0
ec758d281dc0ba84be4ec81907cb1093b5c1fa647c041f2084a825a10f3965ed48261bc1d18d38f81b4178179c0a877252caa06a5d411b
1fa481a083363643900a1438696aaa2ae85a6d90418306592f272bba92b279a3d66c626e1d83426c43c82e5b62872904edb58f94734e51
6be7deaf552b569125c58449db7545bdbbe04f75d0c465a95b921eb7579e3a6f4b7a2c62f3e959ec19db6a7d16079c795c7ec1b2bf175d
943d9a8f23f55cce84d612d99643cbe4a1f588294002e793236aadc2d6286d41a568037aab4c96a8accead95ad8dc67ad188a11baf54fb
03692cb8f0efd3b4ac1dc171505979958800d0e51c8c05765193ccc131241b58aa14a3236c494ae5b4ce09d83893acaeacbccc3816a4a5
9bc672cfb833137787e5ae31fb69571efa691aee32a9ffb7ff76136f0a856f14cc0ecbaf67cd51372d4532e162fe58b87d717bad561c80
c96a1d819f96197fc205af9c34744ff7a4950b35be11ac4a142cfc33f36f3c7fa81aa41e8d2922e1faf34bb7ecdb19bf607fd73d5655ce
876fd039aba187f39faf926ce5d807469ac6874ac22f69dc019799ff387259ca0bd66c92246b750c9914291b31a76c29c4e8ea4963b547
b68aadb3314563096d841855f201740a00e2f49aebc4e6d3e7464cc3c0f3e5fd1f808acd78ecfbd3e7b7baecbb7a2c7584fd7625e3abf3
dfbdcaf917460b0000`.replace(/\s/g, "");

/** Anvil 1.3 (foundry crates/anvil/test-data/state-dump.json): plain numbers, no slot_num. */
const ANVIL_1_3 = `{"block":{"number":2,"beneficiary":"0x0000000000000000000000000000000000000000","timestamp":1724763179,
"gas_limit":30000000,"basefee":875175000,"difficulty":"0x0",
"prevrandao":"0xdb639d7f8af4f0ff2aa9cc49861820e72f5f8bfeeed677d1e3569f6b1625df4a",
"blob_excess_gas_and_price":{"excess_blob_gas":0,"blob_gasprice":1}},
"accounts":{"0x70997970c51812dc3a010c7d01b50e0d17dc79c8":{"nonce":1,"balance":"0x21e19e0b90393da9b38","code":"0x","storage":{}}},
"best_block_number":2,"blocks":[],"transactions":[]}`;

/**
 * Anvil 1.2 (foundry crates/anvil/tests/it/state.rs, v1_2 tests): hex strings, `coinbase`, a blob gas price
 * past 2^64, no blocks/transactions/historical_states.
 */
const ANVIL_1_2 = `{
  "block": {
    "number": "0x5",
    "coinbase": "0x1234567890123456789012345678901234567890",
    "timestamp": "0x688c83b5",
    "gas_limit": "0x1c9c380",
    "basefee": "0x3b9aca00",
    "difficulty": "0x0",
    "prevrandao": "0xecc5f0af8ff6b65c14bfdac55ba9db870d89482eb2b87200c6d7e7cd3a3a5ad5",
    "blob_excess_gas_and_price": { "excess_blob_gas": 173990704, "blob_gasprice": 43056053164891617135028 }
  },
  "accounts": {
    "0x5FbDB2315678afecb367f032d93F642f64180aa3": {
      "nonce": 1,
      "balance": "0x0",
      "code": "0x6080604052",
      "storage": { "0x0": "0x2a", "0x2": "0x0000000000000000000000000000000000000000000000000000000000000007" }
    }
  },
  "best_block_number": "0x5"
}`;

const AA = "0x00000000000000000000000000000000000000aa";

function bytes(hex: string): Uint8Array {
  const b = hexToBytes(hex);
  if (b === undefined) throw new TypeError(`bad hex in test: ${hex}`);
  return b;
}

function word(n: bigint): Uint8Array {
  return bytes(n.toString(16).padStart(64, "0"));
}

/** A dump around one account 0x…aa whose fields are given as JSON text. */
function withAccount(fields: string, top = ""): string {
  return `{"block":null,"accounts":{"${AA}":{${fields}}},"best_block_number":null${top}}`;
}
const OK_ACCOUNT = `"nonce":0,"balance":"0x0","code":"0x","storage":{}`;

function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StateDumpError);
    return (e as Error).message;
  }
  throw new TypeError("expected a StateDumpError");
}

describe("Anvil state dump", () => {
  test("default: decodes a dump in Anvil's current shape", () => {
    const d = decodeAnvilStateJson(ANVIL_CURRENT);
    expect(d).toEqual({
      accounts: [
        {
          address: bytes(AA),
          nonce: 5n,
          balance: 16n,
          code: bytes("0x6001600055"),
          storage: [
            { slot: word(0n), value: word(1n) },
            { slot: word(1n), value: word(255n) },
          ],
        },
        {
          address: bytes("0x0000f90827f1c53a10cb7a02335b175320002935"),
          nonce: 0n,
          balance: 0n,
          code: bytes(
            "0x3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500",
          ),
          storage: [
            { slot: word(0n), value: bytes("0x505198714505872c7235a89393321257a5c9a9f96ee3bcba803929f3c3027b83") },
            { slot: word(1n), value: bytes("0x09e9b3cd69c6d16f7bc1d79080419ea49cf49b598bdd51e6dba17994c6261bf6") },
          ],
        },
        {
          address: bytes("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"),
          nonce: 1n,
          balance: 0x21e19e0803873578270n,
          code: new Uint8Array(0),
          storage: [],
        },
      ],
      blockNumber: 2n,
      bestBlockNumber: 2n,
      timestamp: 0x6b07c581n,
      coinbase: new Uint8Array(20),
      gasLimit: 30_000_000n,
      baseFee: 875_000_000n,
      difficulty: 0n,
      prevRandao: bytes("0xd6bf6b8fe2693e16f1e6e591d28b1646f37206eef3cf66b8e30e32564c3c4af3"),
      excessBlobGas: 0n,
      blobGasPrice: 1n,
    } satisfies StateDump);
  });

  test("behavior: encoding writes Anvil's text (field order, hex forms), blocks being one header-only head block", () => {
    const anvil = JSON.parse(ANVIL_CURRENT) as { blocks: { header: Record<string, string> }[] };
    const ours = encodeAnvilStateJson(decodeAnvilStateJson(ANVIL_CURRENT));
    const { blocks } = JSON.parse(ours) as typeof anvil;
    expect(ours).toBe(JSON.stringify({ ...anvil, blocks, transactions: [], historical_states: null }));
    // The head block has the fields, in order, of the header Anvil wrote for that block, and its values where
    // the block env has them; roots, parent and gas used are those of an empty block without a parent.
    const [anvilHeader, header] = [anvil.blocks[0]?.header ?? {}, blocks[0]?.header ?? {}];
    expect(Object.keys(header)).toEqual(Object.keys(anvilHeader));
    for (const field of ["miner", "difficulty", "number", "gasLimit", "timestamp", "mixHash", "baseFeePerGas"]) {
      expect(header[field]).toBe(anvilHeader[field]);
    }
    expect(header).toMatchObject({ parentHash: `0x${"00".repeat(32)}`, gasUsed: "0x0", extraData: "0x" });
    expect(blocks[0]).toMatchObject({ transactions: [], ommers: [], withdrawals: null });
    expect(blocks).toHaveLength(1);
  });

  test("behavior: round trips, with values past what a JS number holds", () => {
    const accounts: DumpAccount[] = [
      {
        address: bytes("0xffffffffffffffffffffffffffffffffffffffff"),
        nonce: 2n ** 64n - 1n,
        balance: 2n ** 256n - 1n,
        code: bytes("0xef0100f39fd6e51aad88f6f4ce6ab8827279cfffb92266"),
        storage: [
          { slot: word(2n ** 256n - 1n), value: word(2n ** 255n) },
          { slot: word(7n), value: word(0n) },
        ],
      },
      { address: new Uint8Array(20), nonce: 0n, balance: 1n, code: new Uint8Array(0), storage: [] },
    ];
    const d: StateDump = {
      accounts,
      blockNumber: 1234n,
      bestBlockNumber: 1234n,
      timestamp: 1_700_000_000n,
      coinbase: bytes("0x1111111111111111111111111111111111111111"),
      gasLimit: 2n ** 64n - 1n,
      baseFee: 7n,
      difficulty: 0n,
      prevRandao: word(0xabcn),
      excessBlobGas: 2n ** 64n - 1n,
      blobGasPrice: 43056053164891617135028n,
    };
    // Anvil's BTreeMaps sort accounts by address and slots by slot.
    const [big, zero] = accounts as [DumpAccount, DumpAccount];
    const sorted: StateDump = { ...d, accounts: [zero, { ...big, storage: [...big.storage].reverse() }] };
    expect(decodeAnvilStateJson(encodeAnvilStateJson(d))).toEqual(sorted);
    expect(decodeAnvilStateHex(encodeAnvilStateHex(d))).toEqual(sorted);
    expect(encodeAnvilStateJson(decodeAnvilStateJson(encodeAnvilStateJson(d)))).toBe(encodeAnvilStateJson(d));
    expect(encodeAnvilStateJson(d)).toContain('"gas_limit":18446744073709551615,');
    expect(encodeAnvilStateJson(d)).toContain('"blob_gasprice":43056053164891617135028}');
  });

  test("behavior: a dump without block fields writes block and best_block_number as null", () => {
    const d: StateDump = { accounts: [] };
    expect(encodeAnvilStateJson(d)).toBe(
      '{"block":null,"accounts":{},"best_block_number":null,"blocks":[],"transactions":[],"historical_states":null}',
    );
    expect(decodeAnvilStateJson(encodeAnvilStateJson(d))).toEqual(d);
  });

  test("behavior: block fields the dump lacks take revm's BlockEnv defaults, since Anvil needs them all", () => {
    const text = encodeAnvilStateJson({ accounts: [], blockNumber: 3n });
    expect(JSON.parse(text)).toEqual({
      block: {
        number: "0x3",
        beneficiary: "0x0000000000000000000000000000000000000000",
        timestamp: "0x1",
        gas_limit: 18446744073709552000, // 2^64-1 as JSON.parse rounds it
        basefee: 0,
        difficulty: "0x0",
        prevrandao: `0x${"00".repeat(32)}`,
        blob_excess_gas_and_price: { excess_blob_gas: 0, blob_gasprice: 1 },
        slot_num: 0,
      },
      accounts: {},
      best_block_number: 3,
      blocks: [
        expect.objectContaining({
          header: expect.objectContaining({ number: "0x3", timestamp: "0x1", gasLimit: "0xffffffffffffffff" }),
        }),
      ],
      transactions: [],
      historical_states: null,
    });
    expect(text).toContain('"gas_limit":18446744073709551615,');
  });

  test("behavior: decodes Anvil 1.3's block (plain numbers, no slot_num)", () => {
    expect(decodeAnvilStateJson(ANVIL_1_3)).toEqual({
      accounts: [
        {
          address: bytes("0x70997970c51812dc3a010c7d01b50e0d17dc79c8"),
          nonce: 1n,
          balance: 0x21e19e0b90393da9b38n,
          code: new Uint8Array(0),
          storage: [],
        },
      ],
      blockNumber: 2n,
      bestBlockNumber: 2n,
      timestamp: 1724763179n,
      coinbase: new Uint8Array(20),
      gasLimit: 30_000_000n,
      baseFee: 875_175_000n,
      difficulty: 0n,
      prevRandao: bytes("0xdb639d7f8af4f0ff2aa9cc49861820e72f5f8bfeeed677d1e3569f6b1625df4a"),
      excessBlobGas: 0n,
      blobGasPrice: 1n,
    } satisfies StateDump);
  });

  test("behavior: decodes Anvil 1.2's block (hex strings, coinbase) and short storage words", () => {
    expect(decodeAnvilStateJson(ANVIL_1_2)).toEqual({
      accounts: [
        {
          address: bytes("0x5fbdb2315678afecb367f032d93f642f64180aa3"),
          nonce: 1n,
          balance: 0n,
          code: bytes("0x6080604052"),
          storage: [
            { slot: word(0n), value: word(42n) },
            { slot: word(2n), value: word(7n) },
          ],
        },
      ],
      blockNumber: 5n,
      bestBlockNumber: 5n,
      timestamp: 0x688c83b5n,
      coinbase: bytes("0x1234567890123456789012345678901234567890"),
      gasLimit: 30_000_000n,
      baseFee: 1_000_000_000n,
      difficulty: 0n,
      prevRandao: bytes("0xecc5f0af8ff6b65c14bfdac55ba9db870d89482eb2b87200c6d7e7cd3a3a5ad5"),
      excessBlobGas: 173990704n,
      blobGasPrice: 43056053164891617135028n,
    } satisfies StateDump);
  });

  test("behavior: optional fields may be null or absent (dumps from before block envs, partial legacy blocks)", () => {
    const account = `"${AA}":{${OK_ACCOUNT}}`;
    const plain = { address: bytes(AA), nonce: 0n, balance: 0n, code: new Uint8Array(0), storage: [] };
    expect(decodeAnvilStateJson(`{"accounts":{${account}}}`)).toEqual({ accounts: [plain] });
    expect(
      decodeAnvilStateJson(
        `{"block":null,"accounts":{${account}},"best_block_number":null,"blocks":[],"transactions":[],"historical_states":null}`,
      ),
    ).toEqual({ accounts: [plain] });
    expect(
      decodeAnvilStateJson(`{"block":{"number":"0x7","timestamp":"0x10"},"accounts":{},"best_block_number":"9"}`),
    ).toEqual({ accounts: [], blockNumber: 7n, timestamp: 16n, bestBlockNumber: 9n });
    expect(
      decodeAnvilStateJson(`{"block":{"number":1,"prevrandao":null,"blob_excess_gas_and_price":null},"accounts":{}}`),
    ).toEqual({ accounts: [], blockNumber: 1n });
  });

  test("behavior: unknown fields are ignored and an account given twice keeps its last entry, as Anvil's BTreeMap", () => {
    const text = `{"accounts":{"${AA}":{${OK_ACCOUNT}},"0x00000000000000000000000000000000000000AA":{"nonce":3,"balance":"12","code":"0x","storage":{"0x1":"0x2","1":"0x3"}}},"monad_block_participants":{},"extra":[1,{"a":null}]}`;
    expect(decodeAnvilStateJson(text)).toEqual({
      accounts: [
        {
          address: bytes(AA),
          nonce: 3n,
          balance: 12n,
          code: new Uint8Array(0),
          storage: [{ slot: word(1n), value: word(3n) }],
        },
      ],
    });
  });

  test("behavior: the hex layer is 0x + hex(gzip(JSON)), as anvil_dumpState answers", () => {
    const d = decodeAnvilStateJson(ANVIL_CURRENT);
    const hex = encodeAnvilStateHex(d);
    expect(hex).toMatch(/^0x1f8b[0-9a-f]+$/);
    expect(gunzipSync(bytes(hex)).toString("utf8")).toBe(encodeAnvilStateJson(d));
    expect(decodeAnvilStateHex(hex)).toEqual(d);
  });

  test("behavior: decodes a real anvil_dumpState answer", () => {
    const d = decodeAnvilStateHex(ANVIL_DUMP_HEX);
    expect(d.accounts.map((a) => `0x${bytesToHex(a.address)}`)).toEqual([
      AA,
      "0x0000f90827f1c53a10cb7a02335b175320002935",
      "0x4e59b44847b379578588920ca78fbf26c0b4956c",
      "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    ]);
    expect(d.accounts[0]?.storage).toEqual([{ slot: word(1n), value: word(255n) }]);
    expect(d.accounts[3]?.balance).toBe(10_000n * 10n ** 18n);
    expect(d).toMatchObject({ blockNumber: 0n, bestBlockNumber: 0n, gasLimit: 30_000_000n, baseFee: 1_000_000_000n });
  });

  test("behavior: anvil_loadState's input may also be plain JSON bytes, with or without 0x, in either case", () => {
    const json = bytesToHex(utf8ToBytes(ANVIL_1_3));
    const expected = decodeAnvilStateJson(ANVIL_1_3);
    expect(decodeAnvilStateHex(`0x${json}`)).toEqual(expected);
    expect(decodeAnvilStateHex(json.toUpperCase())).toEqual(expected);
    expect(decodeAnvilStateHex(ANVIL_DUMP_HEX.slice(2))).toEqual(decodeAnvilStateHex(ANVIL_DUMP_HEX));
  });

  test("error: damaged dumps throw StateDumpError and nothing else", () => {
    const text = encodeAnvilStateJson(decodeAnvilStateJson(ANVIL_1_2));
    for (let end = 0; end < text.length; end++) {
      expect(() => decodeAnvilStateJson(text.slice(0, end))).toThrow(StateDumpError);
    }
    let seed = 1;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const chars = '{}[]:,"\\-.0123456789abcdefxXeE tn\u0000\u00ff';
    for (let i = 0; i < 2000; i++) {
      const at = next(text.length);
      const damaged = text.slice(0, at) + chars[next(chars.length)] + text.slice(at + 1 + next(2));
      try {
        decodeAnvilStateJson(damaged);
      } catch (e) {
        expect(e).toBeInstanceOf(StateDumpError);
      }
    }
  });

  const BAD_HEX: [string, string, string][] = [
    [
      "not hex",
      "0xzz",
      "the state dump is not hex. Pass the answer of anvil_dumpState: 0x and an even number of hex digits",
    ],
    [
      "odd number of hex digits",
      "0x123",
      "the state dump is not hex. Pass the answer of anvil_dumpState: 0x and an even number of hex digits",
    ],
    [
      "gzip magic but not gzip",
      "0x1f8b0800deadbeef",
      "the state dump starts like gzip but does not decompress. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "truncated gzip",
      encodeAnvilStateHex({ accounts: [] }).slice(0, 40),
      "the state dump starts like gzip but does not decompress. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "neither gzip nor UTF-8",
      "0xff00",
      "the state dump is neither gzip nor UTF-8 text. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "empty",
      "0x",
      "the state dump is empty. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "plain bytes that are not JSON",
      `0x${bytesToHex(utf8ToBytes("hello"))}`,
      "the state dump is not valid JSON: expected a JSON value at line 1 column 1. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    ["not a string", 12 as unknown as string, "the state dump is a number, not a hex string"],
  ];
  test.each(BAD_HEX)("error: hex layer, %s", (_name, input, message) => {
    expect(messageOf(() => decodeAnvilStateHex(input))).toBe(message);
  });

  const BAD_JSON: [string, string, string][] = [
    [
      "empty text",
      "  ",
      "the state dump is empty. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "not JSON",
      "hello",
      "the state dump is not valid JSON: expected a JSON value at line 1 column 1. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "cut short",
      `{"accounts":{"${AA}":{"nonce":0,`,
      "the state dump is not valid JSON: expected a quoted field name at line 1 column 70. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "text after the object",
      `{"accounts":{}} {}`,
      "the state dump is not valid JSON: unexpected text after the JSON value at line 1 column 17. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "trailing comma",
      `{"accounts":{},}`,
      "the state dump is not valid JSON: expected a quoted field name at line 1 column 16. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "raw control character in a string",
      `{"accounts":{"a\tb":1}}`,
      "the state dump is not valid JSON: a string holds a raw control character at line 1 column 16. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "bad escape",
      `{"accounts":{"\\x":1}}`,
      "the state dump is not valid JSON: a string has a bad escape at line 1 column 14. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "nesting too deep",
      `{"accounts":{},"blocks":${"[".repeat(600)}${"]".repeat(600)}}`,
      "the state dump is not valid JSON: nesting deeper than 512 levels at line 1 column 536. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "not an object",
      "[1,2]",
      "the state dump is an array, not a JSON object. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState",
    ],
    [
      "no accounts",
      `{"block":null,"best_block_number":null}`,
      'the state dump has no "accounts". Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState',
    ],
    ["accounts not an object", `{"accounts":[]}`, "accounts is an array. Expected an object of address → account"],
    ["a top-level field twice", `{"accounts":{},"accounts":{}}`, 'the state dump has "accounts" twice. Keep one'],
    [
      "address of 2 bytes",
      `{"accounts":{"0x1234":{${OK_ACCOUNT}}}}`,
      'accounts["0x1234"]: the key is not a 20-byte hex address. Write it as 0x and 40 hex digits',
    ],
    [
      "address not hex",
      `{"accounts":{"0x${"zz".repeat(20)}":{${OK_ACCOUNT}}}}`,
      'accounts["0xzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"]: the key is not a 20-byte hex address. Write it as 0x and 40 hex digits',
    ],
    [
      "account not an object",
      `{"accounts":{"${AA}":"0x1"}}`,
      'accounts["0x00000000000000000000000000000000000000aa"] is the string "0x1". Expected an account object with nonce, balance, code and storage',
    ],
    [
      "account without nonce",
      withAccount(`"balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"] has no "nonce". Anvil always writes it',
    ],
    [
      "account without storage",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x"`),
      'accounts["0x00000000000000000000000000000000000000aa"] has no "storage". Anvil always writes it',
    ],
    [
      "account field twice",
      withAccount(`${OK_ACCOUNT},"nonce":1`),
      'accounts["0x00000000000000000000000000000000000000aa"] has "nonce" twice. Keep one',
    ],
    [
      "nonce as a string",
      withAccount(`"nonce":"0x1","balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].nonce is the string "0x1". Expected a JSON integer such as 1',
    ],
    [
      "nonce with a fraction",
      withAccount(`"nonce":1.5,"balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].nonce is the number 1.5. Expected an integer',
    ],
    [
      "nonce in exponent form",
      withAccount(`"nonce":1e3,"balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].nonce is the number 1e3. Expected an integer',
    ],
    [
      "negative nonce",
      withAccount(`"nonce":-1,"balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].nonce is the number -1. Expected a number that is not negative',
    ],
    [
      "nonce past u64",
      withAccount(`"nonce":18446744073709551616,"balance":"0x0","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].nonce is the number 18446744073709551616. Expected a number no larger than 2^64-1',
    ],
    [
      "balance as a boolean",
      withAccount(`"nonce":0,"balance":true,"code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].balance is true. Expected a hex quantity such as "0x1f" or a JSON integer',
    ],
    [
      "negative balance",
      withAccount(`"nonce":0,"balance":"-0x1","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].balance is the string "-0x1". Expected a number that is not negative',
    ],
    [
      "balance with spaces",
      withAccount(`"nonce":0,"balance":" 1","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].balance is the string " 1". Expected a hex quantity such as "0x1f"',
    ],
    [
      "empty balance",
      withAccount(`"nonce":0,"balance":"0x","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].balance is the string "0x". Expected a hex quantity such as "0x1f"',
    ],
    [
      "balance past 2^256",
      withAccount(`"nonce":0,"balance":"0x1${"0".repeat(64)}","code":"0x","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].balance is the string "0x10000000000000000000000000000000000000000000000000000000000000000". Expected a number no larger than 2^256-1',
    ],
    [
      "code not hex",
      withAccount(`"nonce":0,"balance":"0x0","code":"0xzz","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].code is the string "0xzz". Expected hex bytes such as "0x6080" or "0x"',
    ],
    [
      "code of odd length",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x123","storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].code is the string "0x123". Expected hex bytes such as "0x6080" or "0x"',
    ],
    [
      "code as a number",
      withAccount(`"nonce":0,"balance":"0x0","code":0,"storage":{}`),
      'accounts["0x00000000000000000000000000000000000000aa"].code is the number 0. Expected hex bytes such as "0x6080" or "0x"',
    ],
    [
      "storage as an array",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x","storage":[]`),
      'accounts["0x00000000000000000000000000000000000000aa"].storage is an array. Expected an object of slot → value',
    ],
    [
      "storage slot past 32 bytes",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x","storage":{"0x1${"0".repeat(64)}":"0x1"}`),
      'accounts["0x00000000000000000000000000000000000000aa"].storage["0x10000000000000000000000000000000000000000000000000000000000000000"] (the slot) is the string "0x10000000000000000000000000000000000000000000000000000000000000000". Expected a number no larger than 2^256-1',
    ],
    [
      "storage slot not a number",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x","storage":{"slot":"0x1"}`),
      'accounts["0x00000000000000000000000000000000000000aa"].storage["slot"] (the slot) is the string "slot". Expected a hex quantity such as "0x1f"',
    ],
    [
      "storage value past 32 bytes",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x","storage":{"0x1":"0x1${"0".repeat(64)}"}`),
      'accounts["0x00000000000000000000000000000000000000aa"].storage["0x1"] is the string "0x10000000000000000000000000000000000000000000000000000000000000000". Expected a number no larger than 2^256-1',
    ],
    [
      "storage value null",
      withAccount(`"nonce":0,"balance":"0x0","code":"0x","storage":{"0x1":null}`),
      'accounts["0x00000000000000000000000000000000000000aa"].storage["0x1"] is null. Expected a hex quantity such as "0x1f" or a JSON integer',
    ],
    [
      "block as a string",
      `{"block":"0x1","accounts":{}}`,
      'block is the string "0x1". Expected an object (revm\'s BlockEnv) or null',
    ],
    [
      "block number as a boolean",
      `{"block":{"number":false},"accounts":{}}`,
      'block.number is false. Expected a hex quantity such as "0x1f" or a JSON integer',
    ],
    [
      "gas limit past u64",
      `{"block":{"gas_limit":18446744073709551616},"accounts":{}}`,
      "block.gas_limit is the number 18446744073709551616. Expected a number no larger than 2^64-1",
    ],
    [
      "base fee negative",
      `{"block":{"basefee":"-1"},"accounts":{}}`,
      'block.basefee is the string "-1". Expected a number that is not negative',
    ],
    [
      "coinbase of 2 bytes",
      `{"block":{"coinbase":"0x1234"},"accounts":{}}`,
      'block.coinbase is the string "0x1234". Expected a 20-byte hex address',
    ],
    [
      "beneficiary and coinbase",
      `{"block":{"beneficiary":"${AA}","coinbase":"${AA}"},"accounts":{}}`,
      'block has both "beneficiary" and "coinbase". Keep one',
    ],
    [
      "prevrandao of 20 bytes",
      `{"block":{"prevrandao":"${AA}"},"accounts":{}}`,
      'block.prevrandao is the string "0x00000000000000000000000000000000000000aa". Expected a 32-byte hex hash',
    ],
    [
      "blob gas price as a string",
      `{"block":{"blob_excess_gas_and_price":{"excess_blob_gas":0,"blob_gasprice":"0x1"}},"accounts":{}}`,
      'block.blob_excess_gas_and_price.blob_gasprice is the string "0x1". Expected a JSON integer',
    ],
    [
      "blob gas price past u128",
      `{"block":{"blob_excess_gas_and_price":{"excess_blob_gas":0,"blob_gasprice":${2n ** 128n}}},"accounts":{}}`,
      "block.blob_excess_gas_and_price.blob_gasprice is the number 340282366920938463463374607431768211456. Expected a number no larger than 2^128-1",
    ],
    [
      "blob fields missing",
      `{"block":{"blob_excess_gas_and_price":{}},"accounts":{}}`,
      'block.blob_excess_gas_and_price has no "excess_blob_gas". Anvil always writes it',
    ],
    [
      "slot_num as a string",
      `{"block":{"slot_num":"0"},"accounts":{}}`,
      'block.slot_num is the string "0". Expected a JSON integer',
    ],
    [
      "best_block_number as a boolean",
      `{"accounts":{},"best_block_number":true}`,
      "best_block_number is true. Expected a block number such as 2",
    ],
    [
      "best_block_number past u64",
      `{"accounts":{},"best_block_number":"0x1${"0".repeat(16)}"}`,
      'best_block_number is the string "0x10000000000000000". Expected a number no larger than 2^64-1',
    ],
    ["blocks null", `{"accounts":{},"blocks":null}`, "blocks is null. Expected an array (or leave the field out)"],
    [
      "transactions an object",
      `{"accounts":{},"transactions":{}}`,
      "transactions is an object. Expected an array (or leave the field out)",
    ],
    [
      "historical_states a string",
      `{"accounts":{},"historical_states":"none"}`,
      "historical_states is a string. Expected an array or null",
    ],
    [
      "bad JSON inside blocks",
      `{"accounts":{},"blocks":[{"header":{"number":0x1}}]}`,
      'the state dump is not valid JSON: expected "," or "}" at line 1 column 47. Pass a file written by `anvil --dump-state` or the answer of anvil_dumpState',
    ],
  ];
  test.each(BAD_JSON)("error: %s", (_name, input, message) => {
    expect(messageOf(() => decodeAnvilStateJson(input))).toBe(message);
  });

  const account = (over: Partial<DumpAccount>): DumpAccount => ({
    address: bytes(AA),
    nonce: 0n,
    balance: 0n,
    code: new Uint8Array(0),
    storage: [],
    ...over,
  });
  const BAD_DUMPS: [string, StateDump, string][] = [
    [
      "an address of 19 bytes",
      { accounts: [account({}), account({ address: new Uint8Array(19) })] },
      "accounts[1].address is not 20 bytes. Give each account a 20-byte address",
    ],
    [
      "an account twice",
      { accounts: [account({}), account({ nonce: 1n })] },
      "account 0x00000000000000000000000000000000000000aa appears twice. Merge the two entries into one",
    ],
    [
      "a negative nonce",
      { accounts: [account({ nonce: -1n })] },
      "account 0x00000000000000000000000000000000000000aa nonce -1 is out of range. Give a bigint from 0 to 2^64-1",
    ],
    [
      "a balance past 2^256",
      { accounts: [account({ balance: 2n ** 256n })] },
      "account 0x00000000000000000000000000000000000000aa balance 115792089237316195423570985008687907853269984665640564039457584007913129639936 is out of range. Give a bigint from 0 to 2^256-1",
    ],
    [
      "a nonce that is a number",
      { accounts: [account({ nonce: 1 as unknown as bigint })] },
      "account 0x00000000000000000000000000000000000000aa nonce is a number, not a bigint. Give it as a bigint",
    ],
    [
      "a storage slot of 33 bytes",
      { accounts: [account({ storage: [{ slot: new Uint8Array(33), value: new Uint8Array(32) }] })] },
      "account 0x00000000000000000000000000000000000000aa storage slot is longer than 32 bytes. Storage slots and values are 32-byte words",
    ],
    [
      "a storage value of 33 bytes",
      { accounts: [account({ storage: [{ slot: new Uint8Array(32), value: new Uint8Array(33) }] })] },
      "account 0x00000000000000000000000000000000000000aa storage value is longer than 32 bytes. Storage slots and values are 32-byte words",
    ],
    [
      "a storage slot twice",
      {
        accounts: [
          account({
            storage: [
              { slot: word(1n), value: word(2n) },
              { slot: bytes("0x01"), value: word(3n) },
            ],
          }),
        ],
      },
      "account 0x00000000000000000000000000000000000000aa storage slot 0x0000000000000000000000000000000000000000000000000000000000000001 appears twice. Keep one value per slot",
    ],
    [
      "a gas limit past u64",
      { accounts: [], gasLimit: 2n ** 64n },
      "gasLimit 18446744073709551616 is out of range. Give a bigint from 0 to 2^64-1",
    ],
    [
      "a coinbase of 19 bytes",
      { accounts: [], coinbase: new Uint8Array(19) },
      "coinbase is not 20 bytes. Give exactly 20 bytes",
    ],
    [
      "a prevrandao of 31 bytes",
      { accounts: [], blockNumber: 1n, prevRandao: new Uint8Array(31) },
      "prevRandao is not 32 bytes. Give exactly 32 bytes",
    ],
    [
      "a timestamp past u64",
      { accounts: [], timestamp: 2n ** 64n },
      "timestamp 18446744073709551616 is out of range. Give a bigint from 0 to 2^64-1",
    ],
    [
      "a best block number past u64",
      { accounts: [], bestBlockNumber: 2n ** 64n },
      "bestBlockNumber 18446744073709551616 is out of range. Give a bigint from 0 to 2^64-1",
    ],
    [
      "a block number past u64 with no best block number",
      { accounts: [], blockNumber: 2n ** 64n },
      "blockNumber 18446744073709551616 is out of range. Give a bigint from 0 to 2^64-1",
    ],
  ];
  test.each(BAD_DUMPS)("error: encoding %s", (_name, d, message) => {
    expect(messageOf(() => encodeAnvilStateJson(d))).toBe(message);
  });
});
