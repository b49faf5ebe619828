/** Consensus round steps (consensus/types RoundStepType): the numbers the dump shows, 1..8. */
export const ROUND_STEP = {
  newHeight: 1,
  newRound: 2,
  propose: 3,
  prevote: 4,
  prevoteWait: 5,
  precommit: 6,
  precommitWait: 7,
  commit: 8,
} as const;
export type RoundStep = (typeof ROUND_STEP)[keyof typeof ROUND_STEP];

const STEP_NAMES: Record<RoundStep, string> = {
  1: "RoundStepNewHeight",
  2: "RoundStepNewRound",
  3: "RoundStepPropose",
  4: "RoundStepPrevote",
  5: "RoundStepPrevoteWait",
  6: "RoundStepPrecommit",
  7: "RoundStepPrecommitWait",
  8: "RoundStepCommit",
};

/** The step name event payloads carry, e.g. "RoundStepPropose" (RoundStepType.String()). */
export function roundStepName(step: RoundStep): string {
  return STEP_NAMES[step];
}

export function isRoundStep(n: number): n is RoundStep {
  return Number.isInteger(n) && n >= 1 && n <= 8;
}

/** Orders two height/round/step triples (CometBFT CompareHRS): negative, zero or positive. */
export function compareHrs(h1: number, r1: number, s1: number, h2: number, r2: number, s2: number): number {
  if (h1 !== h2) return h1 < h2 ? -1 : 1;
  if (r1 !== r2) return r1 < r2 ? -1 : 1;
  if (s1 !== s2) return s1 < s2 ? -1 : 1;
  return 0;
}
