import { serverError } from "../errors.js";
import { method, type Namespace } from "../method.js";
import { p } from "../params.js";

/**
 * miner: stubs, as in Cosmos EVM v0.5 (docs/ethereum-rpc.md "Namespaces"; blocks come from CometBFT
 * consensus, not mining).
 */

const unsupported = (name: string) =>
  method([p.optional(p.any)], () => {
    throw serverError(`unsupported rpc function: ${name}`);
  });

export const miner = {
  setEtherbase: method([p.address], async ([who], s) => (await s.miner?.setEtherbase(who)) ?? false),
  setGasPrice: method([p.quantity], async ([wei], s) => (await s.miner?.setGasPrice(wei)) ?? false),
  getHashrate: method([], () => 0),
  setGasLimit: method([p.quantity], () => false),
  setExtra: unsupported("miner_setExtra"),
  start: unsupported("miner_start"),
  stop: method([], () => null),
} satisfies Namespace;
