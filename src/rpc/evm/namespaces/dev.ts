import type { JsonNode, WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { bigintToBytes, padBytes, toData, toQuantity } from "../encode/hex.js";
import { invalidParams, methodNotFound } from "../errors.js";
import { type Method, method, type Namespace } from "../method.js";
import { type Param, ParamError, p } from "../params.js";
import { type DevCheatRequest, type DevControl, DevInputError, type EvmServices } from "../services.js";

/**
 * The dev methods of a `cometh dev` chain under the names Anvil gives them and the aliases Anvil
 * accepts (Hardhat's `hardhat_*` and Ganache's `evm_*`), with Anvil's answers: a cheat answers
 * null once its block is committed, evm_snapshot an id, evm_revert true or false. On any other chain
 * each one answers -32601 saying it needs `cometh dev`. docs/dev-chain.md lists them.
 */

function requireDev(s: EvmServices, ctx: EvmCallContext): DevControl {
  if (s.dev === undefined) {
    throw methodNotFound(
      ctx.method,
      "dev methods need a dev chain: start one with `cometh dev` (or `npm run dev` from a checkout)",
    );
  }
  return s.dev;
}

/** A dev method: DevInputError from the chain becomes -32602 with its message. */
function devMethod<const P extends readonly Param<unknown>[]>(
  params: P,
  run: (args: { [K in keyof P]: P[K] extends Param<infer T> ? T : never }, dev: DevControl, s: EvmServices) => unknown,
): Method {
  const m = method(params, async (args, s, ctx) => {
    const dev = requireDev(s, ctx);
    try {
      return (await run(args as never, dev, s)) as WireValue;
    } catch (err) {
      if (err instanceof DevInputError) throw invalidParams(err.message);
      throw err;
    }
  });
  // Off a dev chain the answer is "needs cometh dev" whatever the params.
  return { ...m, guard: (s, ctx) => void requireDev(s, ctx) };
}

const MAX_U256 = (1n << 256n) - 1n;

/**
 * A non-negative number as Anvil reads one (`deserialize_number`): a JSON number, a 0x-hex string
 * (leading zeros allowed) or a decimal string.
 */
function decodeNumber(node: JsonNode): bigint {
  let v: bigint;
  if (node.kind === "number") {
    if (!/^-?\d+$/.test(node.raw)) throw new ParamError(`${node.raw} is not a whole number`);
    v = BigInt(node.raw);
  } else if (node.kind === "string") {
    const t = node.value.trim();
    if (/^0[xX][0-9a-fA-F]+$/.test(t)) v = BigInt(t);
    else if (/^-?\d+$/.test(t)) v = BigInt(t);
    else throw new ParamError(`"${node.value}" is not a number: use a JSON number, 0x-hex or decimal text`);
  } else {
    throw new ParamError("expected a number (JSON number, 0x-hex or decimal text)");
  }
  if (v < 0n) throw new ParamError(`${v} is negative; a non-negative number is required`);
  if (v > MAX_U256) throw new ParamError("number is larger than 256 bits");
  return v;
}

const number: Param<bigint> = { optional: false, decode: decodeNumber };

/** A storage slot or word: 0x-hex of at most 32 bytes (odd length allowed), left-padded to 32. */
function decodeWord(node: JsonNode): Uint8Array {
  if (node.kind === "number") return wordOf(decodeNumber(node));
  if (node.kind !== "string") throw new ParamError("expected 0x-hex of at most 32 bytes");
  let body = node.value.replace(/^0[xX]/, "");
  if (body.length % 2 === 1) body = `0${body}`;
  if (!/^[0-9a-fA-F]*$/.test(body) || body.length > 64) {
    throw new ParamError(`"${node.value}" is not 0x-hex of at most 32 bytes`);
  }
  const out = new Uint8Array(32);
  out.set(Buffer.from(body, "hex"), 32 - body.length / 2);
  return out;
}

function wordOf(v: bigint): Uint8Array {
  return padBytes(bigintToBytes(v), 32);
}

const word: Param<Uint8Array> = { optional: false, decode: decodeWord };

/** evm_mine's argument: a timestamp, or Anvil's `{timestamp, blocks}`. */
function decodeMineOptions(node: JsonNode): { timestamp?: bigint; blocks?: bigint } {
  if (node.kind === "object") {
    const out: { timestamp?: bigint; blocks?: bigint } = {};
    for (const [k, v] of node.entries) {
      if (v.kind === "null") continue;
      if (k === "timestamp") out.timestamp = decodeNumber(v);
      else if (k === "blocks") out.blocks = decodeNumber(v);
      else throw new ParamError(`unknown field "${k}": evm_mine takes {timestamp, blocks}`);
    }
    return out;
  }
  return { timestamp: decodeNumber(node) };
}

/**
 * anvil_reset / hardhat_reset options: `{forking: {jsonRpcUrl, blockNumber}}`. A URL (or a block
 * number alone, on a chain that is a fork) resets to a fork; `{forking: {}}` without either (what
 * viem sends for a plain reset) and anything else are a plain reset.
 */
function decodeResetOptions(node: JsonNode): { forking?: { urls?: string[]; blockNumber?: bigint } } {
  if (node.kind !== "object") throw new ParamError("expected an object");
  for (const [k, v] of node.entries) {
    if (k !== "forking" || v.kind !== "object") continue;
    const forking: { urls?: string[]; blockNumber?: bigint } = {};
    for (const [fk, fv] of v.entries) {
      if (fk === "jsonRpcUrl" && fv.kind === "string" && fv.value !== "") forking.urls = [fv.value];
      if (fk === "blockNumber" && fv.kind !== "null") forking.blockNumber = decodeNumber(fv);
    }
    return forking.urls === undefined && forking.blockNumber === undefined ? {} : { forking };
  }
  return {};
}

const U64_MAX = (1n << 64n) - 1n;

function cheat(c: DevCheatRequest) {
  return async (dev: DevControl) => {
    await dev.cheat(c);
    return null;
  };
}

/** One handler per Anvil method; the namespace tables below give it each name it answers to. */
const handlers = {
  // Mining
  mine: devMethod([p.optional(number), p.optional(number)], async ([blocks, interval], dev) => {
    await dev.mine(blocks ?? 1n, interval);
    return null;
  }),
  evmMine: devMethod([p.optional({ optional: false, decode: decodeMineOptions })], async ([opts], dev) => {
    const o = opts ?? {};
    if (o.blocks !== undefined && o.blocks !== 1n) {
      if (o.timestamp !== undefined) dev.setNextBlockTimestamp(o.timestamp);
      await dev.mine(o.blocks);
    } else {
      await dev.mineOne(o.timestamp);
    }
    return "0x0";
  }),
  setAutomine: devMethod([p.bool], ([on], dev) => {
    dev.setAutomine(on);
    return null;
  }),
  getAutomine: devMethod([], (_, dev) => dev.automine()),
  setIntervalMining: devMethod([number], ([seconds], dev) => {
    if (seconds > BigInt(Number.MAX_SAFE_INTEGER)) throw new DevInputError("interval too large");
    dev.setIntervalMining(Number(seconds));
    return null;
  }),
  getIntervalMining: devMethod([], (_, dev) => dev.intervalMining() ?? null),
  setBlockTimestampInterval: devMethod([number], ([seconds], dev) => {
    dev.setBlockTimestampInterval(seconds);
    return null;
  }),
  removeBlockTimestampInterval: devMethod([], (_, dev) => dev.removeBlockTimestampInterval()),
  dropTransaction: devMethod([p.hash], async ([hash], dev) => {
    const dropped = await dev.dropTransaction(hash);
    return dropped === undefined ? null : toData(dropped);
  }),
  dropAllTransactions: devMethod([], async (_, dev) => {
    await dev.dropAllTransactions();
    return null;
  }),
  removePoolTransactions: devMethod([p.address], async ([address], dev) => {
    await dev.removePoolTransactions(address);
    return null;
  }),

  // Time
  increaseTime: devMethod([number], ([seconds], dev) => {
    if (seconds > U64_MAX) throw new DevInputError("the time increase does not fit in 64 bits");
    return Number(dev.increaseTime(seconds));
  }),
  setNextBlockTimestamp: devMethod([number], ([ts], dev) => {
    if (ts >= U64_MAX) throw new DevInputError("the timestamp does not fit in 64 bits");
    dev.setNextBlockTimestamp(ts);
    return null;
  }),
  setTime: devMethod([number], ([ts], dev) => {
    if (ts >= U64_MAX) throw new DevInputError("the timestamp does not fit in 64 bits");
    // Anvil: values above 1e12 are milliseconds (Ganache's evm_setTime takes a date in ms).
    const seconds = ts > 1_000_000_000_000n ? ts / 1000n : ts;
    return Number(dev.setTime(seconds));
  }),

  // Snapshots
  snapshot: devMethod([], (_, dev) => toQuantity(dev.snapshot())),
  revert: devMethod([number], ([id], dev) => dev.revert(id)),
  rollback: devMethod([p.optional(number)], async ([depth], dev) => {
    await dev.rollback(depth ?? 1n);
    return null;
  }),
  setRpcUrl: devMethod([p.string], async ([url], dev) => {
    await dev.setRpcUrl(url);
    return null;
  }),
  reset: devMethod([p.optional({ optional: false, decode: decodeResetOptions })], async ([opts], dev) => {
    if (opts?.forking !== undefined) await dev.resetFork(opts.forking);
    else await dev.reset();
    return null;
  }),

  // Cheats
  setBalance: devMethod([p.address, number], ([address, value], dev) =>
    cheat({ op: "setBalance", address, value })(dev),
  ),
  addBalance: devMethod([p.address, number], async ([address, value], dev, s) => {
    const balance = await s.state.balance(address, s.chain.latestHeight());
    const next = balance + value;
    if (next > MAX_U256) throw new DevInputError("the balance would overflow 256 bits");
    return cheat({ op: "setBalance", address, value: next })(dev);
  }),
  setCode: devMethod([p.address, p.data], ([address, code], dev) => cheat({ op: "setCode", address, code })(dev)),
  setNonce: devMethod([p.address, number], ([address, value], dev) => {
    if (value > U64_MAX) throw new DevInputError("the nonce does not fit in 64 bits");
    return cheat({ op: "setNonce", address, value })(dev);
  }),
  setStorageAt: devMethod([p.address, word, word], async ([address, slot, value], dev) => {
    await dev.cheat({ op: "setStorageAt", address, slot, value });
    return true;
  }),
  setCoinbase: devMethod([p.address], ([address], dev) => cheat({ op: "setCoinbase", address })(dev)),
  setNextBlockBaseFeePerGas: devMethod([number], ([value], dev) => cheat({ op: "setNextBaseFee", value })(dev)),
  setMinGasPrice: devMethod([number], ([value], dev) => cheat({ op: "setMinGasPrice", value })(dev)),
  setBlockGasLimit: devMethod([number], async ([value], dev) => {
    if (value > (1n << 63n) - 1n) throw new DevInputError("the gas limit does not fit in 63 bits");
    if (value === 0n) throw new DevInputError("the block gas limit must be above 0");
    await dev.cheat({ op: "setBlockGasLimit", value });
    return true;
  }),

  // Impersonation
  impersonateAccount: devMethod([p.address], ([address], dev) => {
    dev.impersonate(address);
    return null;
  }),
  stopImpersonatingAccount: devMethod([p.address], ([address], dev) => {
    dev.stopImpersonating(address);
    return null;
  }),
  autoImpersonateAccount: devMethod([p.bool], ([on], dev) => {
    dev.setAutoImpersonate(on);
    return null;
  }),

  // State and node
  dumpState: devMethod([p.optional(p.bool)], (_, dev) => dev.dumpState()),
  loadState: devMethod([p.data], async ([dump], dev) => {
    await dev.loadState(dump);
    return true;
  }),
  nodeInfo: devMethod([], (_, dev) => {
    const n = dev.nodeInfo();
    return {
      currentBlockNumber: n.currentBlockNumber,
      currentBlockTimestamp: Number(n.currentBlockTimestamp),
      currentBlockHash: toData(n.currentBlockHash),
      hardFork: n.hardFork,
      transactionOrder: "fifo",
      environment: {
        baseFee: toQuantity(n.baseFee),
        chainId: Number(n.chainId),
        gasLimit: toQuantity(n.gasLimit),
        gasPrice: toQuantity(n.gasPrice),
      },
      // Anvil's forkConfig: the source's URL and fork block ({} on a chain that is no fork).
      forkConfig:
        n.fork === undefined
          ? {}
          : { forkUrl: n.fork.url, forkBlockNumber: Number(n.fork.blockNumber), forkRetryBackoff: 0 },
      // Foundry reads `network` as the execution family ("ethereum", "optimism", "tempo", "monad") and
      // refuses a fork source that names another; cometh runs Ethereum's EVM.
      network: "ethereum",
    };
  }),
  metadata: devMethod([], (_, dev) => {
    const m = dev.metadata();
    return {
      clientVersion: m.clientVersion,
      chainId: Number(m.chainId),
      instanceId: toData(m.instanceId),
      latestBlockNumber: m.latestBlockNumber,
      latestBlockHash: toData(m.latestBlockHash),
      // Hardhat's forkedNetwork: the source's chain id and fork block.
      forkedNetwork:
        m.fork === undefined
          ? null
          : {
              chainId: Number(m.fork.chainId),
              forkBlockNumber: Number(m.fork.blockNumber),
              forkBlockHash: m.fork.blockHash,
            },
      snapshots: Object.fromEntries(m.snapshots.map((id) => [id.toString(), null])),
    };
  }),
  setLoggingEnabled: devMethod([p.bool], ([on], dev) => {
    dev.setLoggingEnabled(on);
    return null;
  }),
};

/** Ganache's names, as Anvil and Hardhat answer them. */
export const evm = {
  mine: handlers.evmMine,
  setAutomine: handlers.setAutomine,
  setIntervalMining: handlers.setIntervalMining,
  increaseTime: handlers.increaseTime,
  setNextBlockTimestamp: handlers.setNextBlockTimestamp,
  setTime: handlers.setTime,
  snapshot: handlers.snapshot,
  revert: handlers.revert,
  setBlockGasLimit: handlers.setBlockGasLimit,
  // Anvil's alias.
  setAccountNonce: handlers.setNonce,
} satisfies Namespace;

/** Hardhat's names (Anvil's aliases). */
export const hardhat = {
  mine: handlers.mine,
  getAutomine: handlers.getAutomine,
  dropTransaction: handlers.dropTransaction,
  reset: handlers.reset,
  setBalance: handlers.setBalance,
  setCode: handlers.setCode,
  setNonce: handlers.setNonce,
  setStorageAt: handlers.setStorageAt,
  setCoinbase: handlers.setCoinbase,
  setNextBlockBaseFeePerGas: handlers.setNextBlockBaseFeePerGas,
  setMinGasPrice: handlers.setMinGasPrice,
  impersonateAccount: handlers.impersonateAccount,
  stopImpersonatingAccount: handlers.stopImpersonatingAccount,
  // Anvil's aliases under Hardhat's prefix.
  autoImpersonateAccount: handlers.autoImpersonateAccount,
  dropAllTransactions: handlers.dropAllTransactions,
  metadata: handlers.metadata,
  setLoggingEnabled: handlers.setLoggingEnabled,
  // viem's test client in hardhat mode calls these names.
  dumpState: handlers.dumpState,
  loadState: handlers.loadState,
} satisfies Namespace;

/** Anvil's own names. */
export const anvil = {
  mine: handlers.mine,
  setAutomine: handlers.setAutomine,
  getAutomine: handlers.getAutomine,
  setIntervalMining: handlers.setIntervalMining,
  getIntervalMining: handlers.getIntervalMining,
  setBlockTimestampInterval: handlers.setBlockTimestampInterval,
  removeBlockTimestampInterval: handlers.removeBlockTimestampInterval,
  dropTransaction: handlers.dropTransaction,
  dropAllTransactions: handlers.dropAllTransactions,
  removePoolTransactions: handlers.removePoolTransactions,
  increaseTime: handlers.increaseTime,
  setNextBlockTimestamp: handlers.setNextBlockTimestamp,
  setTime: handlers.setTime,
  snapshot: handlers.snapshot,
  revert: handlers.revert,
  rollback: handlers.rollback,
  reset: handlers.reset,
  setRpcUrl: handlers.setRpcUrl,
  setBalance: handlers.setBalance,
  addBalance: handlers.addBalance,
  setCode: handlers.setCode,
  setNonce: handlers.setNonce,
  setStorageAt: handlers.setStorageAt,
  setCoinbase: handlers.setCoinbase,
  setNextBlockBaseFeePerGas: handlers.setNextBlockBaseFeePerGas,
  setMinGasPrice: handlers.setMinGasPrice,
  setBlockGasLimit: handlers.setBlockGasLimit,
  impersonateAccount: handlers.impersonateAccount,
  stopImpersonatingAccount: handlers.stopImpersonatingAccount,
  autoImpersonateAccount: handlers.autoImpersonateAccount,
  dumpState: handlers.dumpState,
  loadState: handlers.loadState,
  nodeInfo: handlers.nodeInfo,
  metadata: handlers.metadata,
  setLoggingEnabled: handlers.setLoggingEnabled,
} satisfies Namespace;

/** The dev namespaces: always routed (their methods say when the chain is not a dev chain). */
export const DEV_NAMESPACES: Readonly<Record<string, Namespace>> = { evm, hardhat, anvil };
