import { CountingSummary } from "../interop/summaryReporter.js";

/** Prints the closing line CI reads, `conformance: N passed, N failed, N skipped`. */
export default class ConformanceSummary extends CountingSummary {
  constructor() {
    super("conformance");
  }
}
