import { toQuantity } from "../encode/hex.js";
import { method, type Namespace } from "../method.js";

/** net: the EIP-155 chain id as a decimal string, the peer count as a quantity (docs/ethereum-rpc.md "Namespaces"). */
export const net = {
  version: method([], (_, s) => s.node.chainId().toString(10)),
  peerCount: method([], async (_, s) => toQuantity(await s.node.peerCount())),
  listening: method([], async (_, s) => s.node.listening()),
} satisfies Namespace;
