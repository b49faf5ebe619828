import { CountingSummary } from "../interop/summaryReporter.js";

/** Prints the closing line CI reads, `geth-diff: N passed, N failed, N skipped`. */
export default class GethDiffSummary extends CountingSummary {
  constructor() {
    super("geth-diff");
  }
}
