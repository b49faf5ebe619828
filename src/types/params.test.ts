import { describe, expect, test } from "vitest";
import {
  type ConsensusParams,
  decodeConsensusParams,
  defaultConsensusParams,
  encodeConsensusParams,
  InvalidConsensusParamsError,
  updateConsensusParams,
  validateConsensusParams,
  validateConsensusParamsUpdate,
  voteExtensionsEnabled,
} from "./index.js";

describe("consensus params", () => {
  test("default: defaults are valid and round trip through proto", () => {
    const p = defaultConsensusParams();
    expect(p.evidence.maxAgeDurationNs).toBe(172800000000000n);
    expect(() => validateConsensusParams(p)).not.toThrow();
    expect(decodeConsensusParams(encodeConsensusParams(p))).toEqual(p);
  });

  test("error: invalid values", () => {
    const cases: [(p: ConsensusParams) => void, string][] = [
      [(p) => (p.block.maxBytes = 0n), "block.MaxBytes cannot be 0"],
      [(p) => (p.block.maxBytes = 104857601n), "block.MaxBytes is too big. 104857601 > 104857600"],
      [(p) => (p.block.maxGas = -2n), "block.MaxGas must be greater or equal to -1. Got -2"],
      [(p) => (p.evidence.maxAgeNumBlocks = 0n), "evidence.MaxAgeNumBlocks must be greater than 0. Got 0"],
      [
        (p) => (p.evidence.maxBytes = 22020097n),
        "evidence.MaxBytesEvidence is greater than upper bound, 22020097 > 22020096",
      ],
      [(p) => (p.validator.pubKeyTypes = []), "len(Validator.PubKeyTypes) must be greater than 0"],
      [
        (p) => (p.validator.pubKeyTypes = ["sr25519"]),
        "params.Validator.PubKeyTypes[0], sr25519, is an unknown pubkey type",
      ],
    ];
    for (const [mutate, message] of cases) {
      const p = defaultConsensusParams();
      mutate(p);
      expect(() => validateConsensusParams(p)).toThrow(new InvalidConsensusParamsError(message));
    }
  });

  test("behavior: updates replace whole sections; vote extensions only move forward", () => {
    const p = defaultConsensusParams();
    const u = updateConsensusParams(p, { block: { maxBytes: 1000n, maxGas: 5n } });
    expect(u.block).toEqual({ maxBytes: 1000n, maxGas: 5n });
    expect(u.evidence).toEqual(p.evidence);
    expect(() => validateConsensusParamsUpdate(p, { abci: { voteExtensionsEnableHeight: 10n } }, 5)).not.toThrow();
    expect(() => validateConsensusParamsUpdate(p, { abci: { voteExtensionsEnableHeight: 5n } }, 5)).toThrow(
      InvalidConsensusParamsError,
    );
    const enabled = updateConsensusParams(p, { abci: { voteExtensionsEnableHeight: 3n } });
    expect(voteExtensionsEnabled(enabled, 2)).toBe(false);
    expect(voteExtensionsEnabled(enabled, 3)).toBe(true);
    expect(() => validateConsensusParamsUpdate(enabled, { abci: { voteExtensionsEnableHeight: 0n } }, 5)).toThrow(
      /cannot be disabled/,
    );
  });
});
