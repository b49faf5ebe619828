import { missingBinaries } from "./binaries.js";

/** Says once, before the run, which interop tests will skip and why. */
export default function setup(): void {
  const cometbft = missingBinaries("cometbft", "abci-cli", "cometbft-signer");
  const geth = missingBinaries("geth");
  const harness = missingBinaries("tm-signer-harness");
  if (cometbft !== undefined) console.warn(`interop: the CometBFT tests are ${cometbft}`);
  if (geth !== undefined) console.warn(`interop: the geth tests are ${geth}`);
  if (harness !== undefined) console.warn(`interop: the remote signer harness test is ${harness}`);
}
