/**
 * Assembles test/data/erc20.json: a compile-free ERC-20 written in EVM assembly, with OpenZeppelin v4's
 * storage layout (balances at slot 0, allowances at slot 1, totalSupply at slot 2), its revert reasons
 * (Error(string)) and events. The constructor mints 1 000 000 CMT (18 decimals) to the deployer.
 *
 *   node --import tsx test/data/erc20.build.ts   # rewrites erc20.json
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const OPS: Record<string, number> = {
  STOP: 0x00,
  ADD: 0x01,
  SUB: 0x03,
  LT: 0x10,
  GT: 0x11,
  EQ: 0x14,
  ISZERO: 0x15,
  AND: 0x16,
  NOT: 0x19,
  SHR: 0x1c,
  SHA3: 0x20,
  CALLER: 0x33,
  CALLVALUE: 0x34,
  CALLDATALOAD: 0x35,
  CALLDATASIZE: 0x36,
  CODECOPY: 0x39,
  POP: 0x50,
  MSTORE: 0x52,
  SLOAD: 0x54,
  SSTORE: 0x55,
  JUMP: 0x56,
  JUMPI: 0x57,
  JUMPDEST: 0x5b,
  PUSH0: 0x5f,
  DUP1: 0x80,
  DUP2: 0x81,
  DUP3: 0x82,
  DUP4: 0x83,
  SWAP1: 0x90,
  SWAP2: 0x91,
  LOG3: 0xa3,
  RETURN: 0xf3,
  REVERT: 0xfd,
};

type Item = string | { push: bigint; bytes?: number } | { label: string } | { ref: string };

/** Two-pass assembler: labels are 2-byte PUSH2 targets. */
function assemble(items: Item[]): Uint8Array {
  const out: number[] = [];
  const labels = new Map<string, number>();
  const fixups: { at: number; label: string }[] = [];
  for (const it of items) {
    if (typeof it === "string") {
      const op = OPS[it];
      if (op === undefined) throw new RangeError(`unknown op ${it}`);
      out.push(op);
    } else if ("label" in it) {
      labels.set(it.label, out.length);
      out.push(OPS.JUMPDEST as number);
    } else if ("ref" in it) {
      out.push(0x61);
      fixups.push({ at: out.length, label: it.ref });
      out.push(0, 0);
    } else {
      let hex = it.push.toString(16);
      if (hex.length % 2 === 1) hex = `0${hex}`;
      const n = Math.max(it.bytes ?? hex.length / 2, 1);
      hex = hex.padStart(n * 2, "0");
      out.push(0x5f + n);
      for (let i = 0; i < n; i++) out.push(Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16));
    }
  }
  for (const f of fixups) {
    const target = labels.get(f.label);
    if (target === undefined) throw new RangeError(`unknown label ${f.label}`);
    out[f.at] = target >> 8;
    out[f.at + 1] = target & 0xff;
  }
  return Uint8Array.from(out);
}

const p = (v: bigint | number, bytes?: number): Item =>
  bytes === undefined ? { push: BigInt(v) } : { push: BigInt(v), bytes };
const ref = (label: string): Item => ({ ref: label });
const label = (name: string): Item => ({ label: name });

function word(text: string, index: number): bigint {
  const b = Buffer.alloc(32);
  Buffer.from(text, "utf8")
    .subarray(index * 32, index * 32 + 32)
    .copy(b);
  return BigInt(`0x${b.toString("hex")}`);
}

const ADDRESS_MASK: Item[] = [p((1n << 160n) - 1n, 20), "AND"];
const TRANSFER_SIG = 0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3efn;
const APPROVAL_SIG = 0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925n;
const RETURN_WORD: Item[] = [p(0), "MSTORE", p(0x20), p(0), "RETURN"];

/** Error(string) revert with `msg`. */
function revertWith(msg: string): Item[] {
  const words = Math.ceil(Buffer.byteLength(msg) / 32);
  const items: Item[] = [p(0x08c379a0n << 224n, 32), p(0), "MSTORE", p(0x20), p(4), "MSTORE"];
  items.push(p(Buffer.byteLength(msg)), p(0x24), "MSTORE");
  for (let i = 0; i < words; i++) items.push(p(word(msg, i), 32), p(0x44 + 32 * i), "MSTORE");
  items.push(p(0x44 + 32 * words), p(0), "REVERT");
  return items;
}

/** Returns an ABI-encoded string constant. */
function returnString(s: string): Item[] {
  return [
    p(0x20),
    p(0),
    "MSTORE",
    p(Buffer.byteLength(s)),
    p(0x20),
    "MSTORE",
    p(word(s, 0), 32),
    p(0x40),
    "MSTORE",
    p(0x60),
    p(0),
    "RETURN",
  ];
}

const SELECTORS: [number, string][] = [
  [0x70a08231, "balanceOf"],
  [0xa9059cbb, "transfer"],
  [0x18160ddd, "totalSupply"],
  [0x313ce567, "decimals"],
  [0x06fdde03, "name"],
  [0x95d89b41, "symbol"],
  [0xdd62ed3e, "allowance"],
  [0x095ea7b3, "approve"],
  [0x23b872dd, "transferFrom"],
];

const runtime: Item[] = [
  // Non-payable, like Solidity's default.
  "CALLVALUE",
  ref("fail"),
  "JUMPI",
  p(0),
  "CALLDATALOAD",
  p(0xe0),
  "SHR",
  ...SELECTORS.flatMap(([sel, name]): Item[] => ["DUP1", p(sel, 4), "EQ", ref(name), "JUMPI"]),
  label("fail"),
  p(0),
  p(0),
  "REVERT",

  label("balanceOf"),
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0),
  "MSTORE",
  p(0),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  "SLOAD",
  ...RETURN_WORD,

  label("totalSupply"),
  p(2),
  "SLOAD",
  ...RETURN_WORD,
  label("decimals"),
  p(18),
  ...RETURN_WORD,
  label("name"),
  ...returnString("Cometh Test Token"),
  label("symbol"),
  ...returnString("CMT"),

  label("transfer"),
  ref("returnTrue"),
  "CALLER",
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0x24),
  "CALLDATALOAD",
  ref("_transfer"),
  "JUMP",

  label("returnTrue"),
  p(1),
  ...RETURN_WORD,

  label("allowance"),
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0),
  "MSTORE",
  p(1),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  p(0x20),
  "MSTORE",
  p(0x24),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  "SLOAD",
  ...RETURN_WORD,

  label("approve"),
  "CALLER",
  p(0),
  "MSTORE",
  p(1),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  p(0x20),
  "MSTORE",
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  "DUP1",
  p(0),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  p(0x24),
  "CALLDATALOAD",
  "DUP1",
  "SWAP2",
  "SSTORE",
  p(0),
  "MSTORE",
  "CALLER",
  p(APPROVAL_SIG, 32),
  p(0x20),
  p(0),
  "LOG3",
  ref("returnTrue"),
  "JUMP",

  label("transferFrom"),
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0),
  "MSTORE",
  p(1),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  p(0x20),
  "MSTORE",
  "CALLER",
  p(0),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  "DUP1",
  "SLOAD",
  p(0x44),
  "CALLDATALOAD",
  "DUP1",
  "DUP3",
  "LT",
  ref("errAllowance"),
  "JUMPI",
  "DUP2",
  "NOT",
  "ISZERO",
  ref("skipAllowance"),
  "JUMPI",
  "DUP1",
  "DUP3",
  "SUB",
  "DUP4",
  "SSTORE",
  label("skipAllowance"),
  "POP",
  "POP",
  "POP",
  ref("returnTrue"),
  p(4),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0x24),
  "CALLDATALOAD",
  ...ADDRESS_MASK,
  p(0x44),
  "CALLDATALOAD",
  ref("_transfer"),
  "JUMP",

  // _transfer: stack [ret, from, to, amount] → [] and jumps to ret.
  label("_transfer"),
  "DUP2",
  "ISZERO",
  ref("errZero"),
  "JUMPI",
  "DUP3",
  p(0),
  "MSTORE",
  p(0),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  "DUP1",
  "SLOAD",
  "DUP1",
  "DUP4",
  "GT",
  ref("errBalance"),
  "JUMPI",
  "DUP3",
  "SWAP1",
  "SUB",
  "SWAP1",
  "SSTORE",
  "DUP2",
  p(0),
  "MSTORE",
  p(0),
  p(0x20),
  "MSTORE",
  p(0x40),
  p(0),
  "SHA3",
  "DUP1",
  "SLOAD",
  "DUP3",
  "ADD",
  "SWAP1",
  "SSTORE",
  p(0),
  "MSTORE",
  "SWAP1",
  p(TRANSFER_SIG, 32),
  p(0x20),
  p(0),
  "LOG3",
  "JUMP",

  label("errBalance"),
  ...revertWith("ERC20: transfer amount exceeds balance"),
  label("errAllowance"),
  ...revertWith("ERC20: insufficient allowance"),
  label("errZero"),
  ...revertWith("ERC20: transfer to the zero address"),
];

const SUPPLY = 1_000_000n * 10n ** 18n;
const runtimeCode = assemble(runtime);

function initCodeItems(runtimeOffset: number): Item[] {
  return [
    p(SUPPLY, 32),
    "DUP1",
    p(2),
    "SSTORE",
    "CALLER",
    p(0),
    "MSTORE",
    p(0),
    p(0x20),
    "MSTORE",
    p(0x40),
    p(0),
    "SHA3",
    "DUP2",
    "SWAP1",
    "SSTORE",
    p(0),
    "MSTORE",
    "CALLER",
    p(0),
    p(TRANSFER_SIG, 32),
    p(0x20),
    p(0),
    "LOG3",
    p(runtimeCode.length, 2),
    "DUP1",
    p(runtimeOffset, 2),
    p(0),
    "CODECOPY",
    p(0),
    "RETURN",
  ];
}

const initLength = assemble(initCodeItems(0)).length;
const initCode = assemble(initCodeItems(initLength));
const bytecode = Buffer.concat([initCode, runtimeCode]);

const abi = [
  "constructor()",
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function totalSupply() view returns (uint256)",
  "function balanceOf(address account) view returns (uint256)",
  "function transfer(address to, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function approve(address spender, uint256 amount) returns (bool)",
  "function transferFrom(address from, address to, uint256 amount) returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
];

const out = {
  contractName: "CometTestToken",
  description:
    "ERC-20 assembled by erc20.build.ts (OpenZeppelin v4 storage layout and revert reasons); the constructor mints 1e24 (1 000 000 tokens, 18 decimals) to the deployer",
  abi,
  bytecode: `0x${bytecode.toString("hex")}`,
  deployedBytecode: `0x${Buffer.from(runtimeCode).toString("hex")}`,
};

const here = dirname(fileURLToPath(import.meta.url));
writeFileSync(join(here, "erc20.json"), `${JSON.stringify(out, null, 2)}\n`);
