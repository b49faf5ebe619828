import { expect, test } from "vitest";
import { ChainEpoch } from "./chainEpoch.js";

test("behavior: each rewind moves the epoch and reaches every listener once, until it unsubscribes", () => {
  const epoch = new ChainEpoch();
  expect(epoch.current()).toBe(0);
  const heard: string[] = [];
  const offA = epoch.onRewind((h) => heard.push(`a${h}`));
  epoch.onRewind((h) => heard.push(`b${h}`));
  epoch.rewound(5);
  offA();
  epoch.rewound(0);
  expect(epoch.current()).toBe(2);
  expect(heard).toEqual(["a5", "b5", "b0"]);
});
