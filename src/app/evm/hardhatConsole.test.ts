import { AbiCoder, concat, getBytes, Interface, id } from "ethers";
import { describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { CONSOLE_ADDRESS, formatConsoleLog } from "./hardhatConsole.js";

const coder = AbiCoder.defaultAbiCoder();

/** Calldata of console.sol's `log(<types>)` as solc's abi.encodeWithSignature builds it. */
function logCall(types: string, args: unknown[]): Uint8Array {
  return getBytes(new Interface([`function log(${types})`]).encodeFunctionData("log", args));
}

/** Calldata under the selector of `signature` hashed as written (ethers would canonicalize `uint` to `uint256`). */
function rawCall(signature: string, types: string[], args: unknown[]): Uint8Array {
  return getBytes(concat([id(signature).slice(0, 10), coder.encode(types, args)]));
}

const ALICE = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ALICE_LOWER = ALICE.toLowerCase();
const MAX_UINT = 2n ** 256n - 1n;
const MIN_INT = -(2n ** 255n);
// The numbers of Hardhat's own console.log test (hardhat-core test/fixture-projects/console-log/contracts/Test.sol).
const n1 = 11111111111111111111111111111111n;
const n3 = 33333333333333333333333333333333n;

// Expected texts: Hardhat's ConsoleLogger (decode to strings, `%d`/`%i` → `%s` in the first, util.format).
const VECTORS: { name: string; types: string; args: unknown[]; out: string }[] = [
  { name: "log()", types: "", args: [], out: "" },
  { name: "log(string)", types: "string", args: ["Hello, world!"], out: "Hello, world!" },
  { name: "log(string) unicode", types: "string", args: ["∑ 😀 é"], out: "∑ 😀 é" },
  { name: "log(string) empty", types: "string", args: [""], out: "" },
  // util.format returns a lone argument untouched, so `%%` stays; Hardhat still rewrites `%d` (its test: "%d" → "%s").
  { name: "log(string) lone specifiers", types: "string", args: ["%d %i %s %%d"], out: "%s %s %s %%d" },
  { name: "log(uint256)", types: "uint256", args: [42n], out: "42" },
  { name: "log(uint256) max", types: "uint256", args: [MAX_UINT], out: MAX_UINT.toString() },
  { name: "log(int256) negative", types: "int256", args: [-42n], out: "-42" },
  { name: "log(int256) min", types: "int256", args: [MIN_INT], out: MIN_INT.toString() },
  { name: "log(bool) true", types: "bool", args: [true], out: "true" },
  { name: "log(bool) false", types: "bool", args: [false], out: "false" },
  // Hardhat prints addresses as lowercase hex (bytesToHexString / bufferToHex), not EIP-55.
  { name: "log(address)", types: "address", args: [ALICE], out: ALICE_LOWER },
  { name: "log(bytes)", types: "bytes", args: ["0x0102ff"], out: "0x0102ff" },
  { name: "log(bytes) empty", types: "bytes", args: ["0x"], out: "0x" },
  { name: "log(bytes1)", types: "bytes1", args: ["0xab"], out: "0xab" },
  { name: "logBytes5", types: "bytes5", args: ["0x68656c6c6f"], out: "0x68656c6c6f" },
  { name: "log(bytes32)", types: "bytes32", args: [id("x")], out: id("x") },
  { name: "log(string,uint256)", types: "string,uint256", args: ["balance", 1000n], out: "balance 1000" },
  { name: "log(string,address)", types: "string,address", args: ["owner:", ALICE], out: `owner: ${ALICE_LOWER}` },
  // The first argument is the format string whatever its type; a number has no specifiers, so all join.
  { name: "log(uint256,string)", types: "uint256,string", args: [5n, "%s"], out: "5 %s" },
  { name: "format %s is %d", types: "string,string,uint256", args: ["%s is %d", "Alice", 30n], out: "Alice is 30" },
  {
    name: "format %d keeps precision",
    types: "string,uint256",
    args: ["%d", 123456789123456789123456789n],
    out: "123456789123456789123456789",
  },
  { name: "format %i", types: "string,uint256", args: ["%i", 13n], out: "13" },
  {
    name: "format escaped %% before %d",
    types: "string,uint256,uint256,uint256",
    args: ["%d %%d %%%d %%%%d %%%%%d %%%%%%d", n1, 2n, n3],
    out: `${n1} %d %2 %%d %%${n3} %%%d`,
  },
  {
    name: "format escaped %% before %s",
    types: "string,uint256,uint256,uint256",
    args: ["%s %%s %%%s %%%%s %%%%%s %%%%%%s", n1, 2n, n3],
    out: `${n1} %s %2 %%s %%${n3} %%%s`,
  },
  // Only the first argument is a format string.
  {
    name: "format later strings",
    types: "string,uint256,string,uint256",
    args: ["%d", n1, "%i", n1],
    out: `${n1} %i ${n1}`,
  },
  // Node's util.format: %j is JSON, %o inspects, %c consumes its argument and prints nothing, extra args join.
  { name: "format %j %c", types: "string,string,string", args: ["%j and %c!", "a", "b"], out: '"a" and !' },
  { name: "format %o", types: "string,string", args: ["%o", "x"], out: "'x'" },
  { name: "format missing argument", types: "string,bool", args: ["%s and %s", true], out: "true and %s" },
  {
    name: "4 arguments",
    types: "address,bool,string,uint256",
    args: [ALICE, true, "tokens", 7n],
    out: `${ALICE_LOWER} true tokens 7`,
  },
  {
    name: "4 arguments with format",
    types: "string,uint256,uint256,uint256",
    args: ["%d%i%s", n1, 2n, n3],
    out: `${n1}2${n3}`,
  },
];

describe("hardhat console.log", () => {
  test("default: CONSOLE_ADDRESS is 0x000000000000000000636F6e736F6c652e6c6f67 (ASCII console.log)", () => {
    expect(`0x${bytesToHex(CONSOLE_ADDRESS)}`).toBe("0x000000000000000000636f6e736f6c652e6c6f67");
    expect(CONSOLE_ADDRESS).toHaveLength(20);
    expect(Buffer.from(CONSOLE_ADDRESS.subarray(9)).toString("latin1")).toBe("console.log");
  });

  test("default: selectors are keccak256 of log(...) as in Hardhat's table", () => {
    // A few entries of CONSOLE_LOG_SIGNATURES in Hardhat's console-log-signatures.ts.
    const table: [string, string][] = [
      ["0x51973ec9", "log()"],
      ["0x2d5b6cb9", "log(int256)"],
      ["0xa684808d", "log(bytes5)"],
      ["0x27b7cf85", "log(bytes32)"],
      ["0xb60e72cc", "log(string,uint256)"],
      ["0x665bf134", "log(address,address,address,address)"],
    ];
    for (const [selector, signature] of table) {
      expect(id(signature).slice(0, 10)).toBe(selector);
      expect(formatConsoleLog(getBytes(selector)), signature).toBe(signature === "log()" ? "" : undefined);
    }
  });

  test.each(VECTORS)("args: $name", ({ types, args, out }) => {
    expect(formatConsoleLog(logCall(types, args))).toBe(out);
  });

  test("args: legacy selectors hash uint/int for uint256/int256 (Hardhat before 2.22.13)", () => {
    // Selectors as Hardhat's logger.ts listed them before commit 3df95d3c9e.
    expect(id("log(uint)").slice(0, 10)).toBe("0xf5b1bba9");
    expect(id("log(int)").slice(0, 10)).toBe("0x4e0c1d1d");
    expect(formatConsoleLog(rawCall("log(uint)", ["uint256"], [42n]))).toBe("42");
    expect(formatConsoleLog(rawCall("log(int)", ["int256"], [-7n]))).toBe("-7");
    expect(formatConsoleLog(rawCall("log(string,uint)", ["string", "uint256"], ["%d items", 3n]))).toBe("3 items");
    expect(
      formatConsoleLog(
        rawCall("log(uint,bool,address,uint)", ["uint256", "bool", "address", "uint256"], [1n, false, ALICE, 2n]),
      ),
    ).toBe(`1 false ${ALICE_LOWER} 2`);
  });

  test("behavior: every console.sol function decodes, and its legacy alias when it has one", () => {
    const sample: Record<string, [unknown, string]> = {
      uint256: [12345678901234567890123n, "12345678901234567890123"],
      int256: [-5n, "-5"],
      string: ["text", "text"],
      bool: [true, "true"],
      address: [ALICE, ALICE_LOWER],
      bytes: ["0xc0ffee", "0xc0ffee"],
    };
    const value = (t: string): [unknown, string] => {
      const n = Number(t.slice(5));
      const hex = `0x${"a5".repeat(n)}`;
      return sample[t] ?? [hex, hex];
    };
    const single = ["int256", "uint256", "string", "bool", "address", "bytes"];
    for (let n = 1; n <= 32; n++) single.push(`bytes${n}`);
    const combos: string[][] = [[]];
    let level: string[][] = [[]];
    for (let n = 1; n <= 4; n++) {
      level = level.flatMap((p) => ["uint256", "string", "bool", "address"].map((t) => [...p, t]));
      combos.push(...level);
    }
    const functions = [...single.map((t) => [t]), ...combos];
    expect(functions).toHaveLength(38 + 1 + 4 + 16 + 64 + 256); // 379 functions in console.sol
    const selectors = new Set<string>();
    for (const types of functions) {
      const args = types.map((t) => value(t)[0]);
      const out = types.map((t) => value(t)[1]).join(" ");
      const canonical = `log(${types.join(",")})`;
      selectors.add(id(canonical).slice(0, 10));
      expect(formatConsoleLog(rawCall(canonical, types, args)), canonical).toBe(out);
      if (types.some((t) => t === "uint256" || t === "int256")) {
        const legacy = `log(${types.map((t) => t.replace("int256", "int")).join(",")})`;
        selectors.add(id(legacy).slice(0, 10));
        expect(formatConsoleLog(rawCall(legacy, types, args)), legacy).toBe(out);
      }
    }
    expect(selectors.size).toBe(596); // Hardhat's table before the legacy selectors were dropped
  });

  test("behavior: padding is not checked, as Hardhat reads only the bytes it prints", () => {
    const word = (last: number, first = 0) => {
      const w = new Uint8Array(32);
      w[0] = first;
      w[31] = last;
      return w;
    };
    const call = (sig: string, w: Uint8Array) => concat([id(sig).slice(0, 10), w]);
    expect(formatConsoleLog(getBytes(call("log(bool)", word(2))))).toBe("true");
    expect(formatConsoleLog(getBytes(call("log(bool)", word(0, 1))))).toBe("false");
    expect(formatConsoleLog(getBytes(call("log(address)", word(1, 0xff))))).toBe(
      "0x0000000000000000000000000000000000000001",
    );
    expect(formatConsoleLog(getBytes(call("log(bytes2)", word(0xff, 0x12))))).toBe("0x1200");
  });

  test("behavior: calldata may be a view into a larger buffer", () => {
    const data = logCall("string,uint256", ["n =", 9n]);
    const big = new Uint8Array(data.length + 10);
    big.set(data, 7);
    expect(formatConsoleLog(big.subarray(7, 7 + data.length))).toBe("n = 9");
  });

  test("error: a selector that is not console.sol's gives undefined", () => {
    expect(formatConsoleLog(rawCall("log(uint8)", ["uint8"], [1]))).toBeUndefined();
    expect(formatConsoleLog(rawCall("log(bytes33)", ["bytes32"], [id("x")]))).toBeUndefined();
    expect(formatConsoleLog(rawCall("logUint(uint256)", ["uint256"], [1n]))).toBeUndefined();
    expect(formatConsoleLog(rawCall("transfer(address,uint256)", ["address", "uint256"], [ALICE, 1n]))).toBeUndefined();
    expect(formatConsoleLog(getBytes("0xdeadbeef"))).toBeUndefined();
  });

  test("error: calldata shorter than a selector gives undefined", () => {
    expect(formatConsoleLog(new Uint8Array(0))).toBeUndefined();
    expect(formatConsoleLog(getBytes("0x51973e"))).toBeUndefined();
    expect(formatConsoleLog(getBytes("0x51973ec9"))).toBe(""); // log()
  });

  test("error: truncated calldata gives undefined", () => {
    const uint = logCall("uint256", [1n]);
    for (let len = 4; len < uint.length; len++)
      expect(formatConsoleLog(uint.subarray(0, len)), `${len}`).toBeUndefined();

    // selector, offset word, length word, "hello" and its 27 bytes of padding
    const str = logCall("string", ["hello"]);
    expect(str).toHaveLength(100);
    for (let len = 4; len < 4 + 32 + 32 + 5; len++) {
      expect(formatConsoleLog(str.subarray(0, len)), `${len}`).toBeUndefined();
    }
    // The padding after the last bytes is not needed (Hardhat does not read it).
    expect(formatConsoleLog(str.subarray(0, 73))).toBe("hello");

    const four = logCall("string,uint256,bytes,bool", ["a", 1n, "0x01", true]);
    for (let len = 4; len < 4 + 4 * 32; len++)
      expect(formatConsoleLog(four.subarray(0, len)), `${len}`).toBeUndefined();
  });

  test("error: an offset or a length past the end gives undefined", () => {
    const str = logCall("string", ["hello"]);
    const withWord = (at: number, word: string) => {
      const out = new Uint8Array(str);
      out.set(getBytes(word), 4 + at);
      return out;
    };
    const uint = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
    expect(formatConsoleLog(withWord(0, uint(2n ** 255n)))).toBeUndefined(); // offset beyond 2^53
    expect(formatConsoleLog(withWord(0, uint(97n)))).toBeUndefined(); // length word runs past the end
    expect(formatConsoleLog(withWord(0, uint(65n)))).toBeUndefined(); // no room for a length word
    expect(formatConsoleLog(withWord(0, uint(64n)))).toBeUndefined(); // the length word is "hello…": too long
    expect(formatConsoleLog(withWord(32, uint(33n)))).toBeUndefined(); // 33 bytes with 32 left
    expect(formatConsoleLog(withWord(32, uint(32n)))).toBe(`hello${"\0".repeat(27)}`);
    expect(formatConsoleLog(withWord(32, uint(MAX_UINT)))).toBeUndefined();
  });

  test("error: random bytes after known selectors never throw", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const known = ["log(string)", "log(bytes)", "log(string,uint256,string,string)", "log(uint256,bytes32)"].map((s) =>
      getBytes(id(s).slice(0, 10)),
    );
    for (let i = 0; i < 3000; i++) {
      const body = new Uint8Array(next() % 200);
      // Mostly small words so that offsets and lengths often land inside the data.
      for (let j = 0; j < body.length; j++)
        body[j] = next() % 4 === 0 ? next() & 0xff : j % 32 === 31 ? next() % 160 : 0;
      const data = concat([known[i % known.length] as Uint8Array, body]);
      const out = formatConsoleLog(getBytes(data));
      expect(out === undefined || typeof out === "string").toBe(true);
    }
  });
});
