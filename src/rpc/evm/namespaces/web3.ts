import { toData } from "../encode/hex.js";
import { method, type Namespace } from "../method.js";
import { p } from "../params.js";
import { keccak256 } from "../tx/signatures.js";

/** web3: client identity and keccak256 of hex-decoded data (geth; v0.5 hashes the raw text: docs/compatibility.md). */

/** geth's one-line form: Name/vVersion/os-arch/runtime. */
export function clientVersion(version: string): string {
  return `cometh/v${version}/${process.platform}-${process.arch}/node${process.versions.node}`;
}

export const web3 = {
  // A dev chain answers Anvil's form: hardhat-network-helpers and other test tools accept only
  // "HardhatNetwork…", "anvil…" or "zksync…" (docs/compatibility.md).
  clientVersion: method([], (_, s) => s.dev?.clientVersion() ?? clientVersion(s.node.version())),
  sha3: method([p.data], ([data]) => toData(keccak256(data))),
} satisfies Namespace;
