import { describe, expect, test } from "vitest";
import { QueryParseError } from "./errors.js";
import { type EventsMap, parseQuery } from "./query.js";
import vectors from "./queryVectors.json" with { type: "json" };

/** Builds an events map from "type|key=value|key=value" templates, like upstream's newTestEvents. */
function events(...templates: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of templates) {
    const [type, ...kvs] = t.split("|");
    for (const kv of kvs) {
      const eq = kv.indexOf("=");
      const key = `${type}.${kv.slice(0, eq)}`;
      const list = out[key] ?? [];
      list.push(kv.slice(eq + 1));
      out[key] = list;
    }
  }
  return out;
}

describe("parseQuery vectors", () => {
  test.each(vectors.valid)("default: $in", (vector) => {
    const q = parseQuery(vector.in);
    expect(q.text).toBe(vector.in);
    expect(q.canonical()).toBe(vector.canonical);
    // The canonical form parses back to itself (except where upstream's own round trip fails).
    if (!("reparses" in vector && vector.reparses === false)) {
      expect(parseQuery(q.canonical()).canonical()).toBe(vector.canonical);
    }
  });

  test.each(vectors.invalid)("error: $in", ({ in: text, error }) => {
    let caught: unknown;
    try {
      parseQuery(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(QueryParseError);
    expect((caught as QueryParseError).message).toBe(error);
    expect((caught as QueryParseError).offset).toBe(Number(/^offset (\d+):/.exec(error)?.[1]));
  });
});

describe("parseQuery conditions", () => {
  test("default: tags, ops and args", () => {
    const q = parseQuery("tm.event = 'Tx' AND tx.height >= 5 AND t.x < TIME 2020-01-01T00:00:00Z AND d.x EXISTS");
    expect(q.conditions.map((c) => [c.tag, c.op, c.arg])).toEqual([
      ["tm.event", "=", { type: "string", text: "Tx" }],
      ["tx.height", ">=", { type: "number", text: "5" }],
      ["t.x", "<", { type: "time", text: "2020-01-01T00:00:00Z" }],
      ["d.x", "EXISTS", undefined],
    ]);
    expect(q.conditions[1]?.toString()).toBe("tx.height >= 5");
    expect(q.conditions[1]?.matchesValue("6")).toBe(true);
  });
});

const API_EVENTS: EventsMap = {
  "tm.event": ["Tx"],
  "tm.hash": ["XYZ"],
  "tm.height": ["5"],
  "rewards.withdraw.address": ["AddrA", "AddrB"],
  "rewards.withdraw.source": ["SrcX", "SrcY"],
  "rewards.withdraw.amount": ["100", "45"],
  "rewards.withdraw.balance": ["1500", "999"],
  "transfer.sender": ["AddrC"],
  "transfer.recipient": ["AddrD"],
  "transfer.amount": ["160"],
};

const BIG_NUMBERS: EventsMap = {
  "big.value": ["99999999999999999999"],
  "big2.value": ["18446744073709551615"],
  "big.floatvalue": ["99999999999999999999.10"],
  "big2.floatvalue": ["18446744073709551615.6"],
};

// Upstream libs/pubsub/query/query_test.go (TestCompiledMatches, TestBigNumbers) plus extra edges.
const MATCH_CASES: [string, EventsMap, boolean][] = [
  ["tm.events.type='NewBlock'", events("tm|events.type=NewBlock"), true],
  ["tx.gas > 7", events("tx|gas=8"), true],
  ["transfer.amount > 7", events("transfer|amount=8stake"), true],
  ["transfer.amount > 7", events("transfer|amount=8.045"), true],
  ["transfer.amount > 7.043", events("transfer|amount=8.045stake"), true],
  ["transfer.amount > 8.045", events("transfer|amount=8.045stake"), false],
  ["tx.gas > 7 AND tx.gas < 9", events("tx|gas=8"), true],
  ["body.weight >= 3.5", events("body|weight=3.5"), true],
  ["account.balance < 1000.0", events("account|balance=900"), true],
  ["apples.kg <= 4", events("apples|kg=4.0"), true],
  ["body.weight >= 4.5", events("body|weight=4.5"), true],
  ["oranges.kg < 4 AND watermellons.kg > 10", events("oranges|kg=3", "watermellons|kg=12"), true],
  ["peaches.kg < 4", events("peaches|kg=5"), false],
  ["tx.date > DATE 2017-01-01", events("tx|date=2024-06-30"), true],
  ["tx.date = DATE 2017-01-01", events("tx|date=2017-01-01"), true],
  ["tx.date = DATE 2018-01-01", events("tx|date=2017-01-01"), false],
  ["tx.time >= TIME 2013-05-03T14:45:00Z", events("tx|time=2024-06-30T10:00:00Z"), true],
  ["tx.time = TIME 2013-05-03T14:45:00Z", events("tx|time=2018-05-03T14:45:00Z"), false],
  ["abci.owner.name CONTAINS 'Igor'", events("abci|owner.name=Igor|owner.name=Ivan"), true],
  ["abci.owner.name CONTAINS 'Igor'", events("abci|owner.name=Pavel|owner.name=Ivan"), false],
  ["abci.owner.name = 'Igor'", events("abci|owner.name=Igor|owner.name=Ivan"), true],
  ["abci.owner.name = 'Ivan'", events("abci|owner.name=Igor|owner.name=Ivan"), true],
  ["abci.owner.name = 'Ivan' AND abci.owner.name = 'Igor'", events("abci|owner.name=Igor|owner.name=Ivan"), true],
  ["abci.owner.name = 'Ivan' AND abci.owner.name = 'John'", events("abci|owner.name=Igor|owner.name=Ivan"), false],
  ["tm.events.type='NewBlock'", events("tm|events.type=NewBlock", "app|name=fuzzed"), true],
  ["app.name = 'fuzzed'", events("tm|events.type=NewBlock", "app|name=fuzzed"), true],
  ["tm.events.type='NewBlock' AND app.name = 'fuzzed'", events("tm|events.type=NewBlock", "app|name=fuzzed"), true],
  ["tm.events.type='NewHeader' AND app.name = 'fuzzed'", events("tm|events.type=NewBlock", "app|name=fuzzed"), false],
  ["slash EXISTS", events("slash|reason=missing_signature|power=6000"), true],
  ["slash EXISTS", events("transfer|recipient=cosmos1gu6y2a|sender=cosmos1crje20"), false],
  ["slash.reason EXISTS AND slash.power > 1000", events("slash|reason=missing_signature|power=6000"), true],
  ["slash.reason EXISTS AND slash.power > 1000", events("slash|reason=missing_signature|power=500"), false],
  ["slash.reason EXISTS", events("transfer|recipient=cosmos1gu6y2a|sender=cosmos1crje20"), false],
  ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrA'", API_EVENTS, true],
  ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrA' AND rewards.withdraw.source = 'SrcY'", API_EVENTS, true],
  ["tm.event = 'Tx' AND transfer.sender = 'AddrA'", API_EVENTS, false],
  ["tm.event = 'Tx' AND transfer.sender = 'AddrC'", API_EVENTS, true],
  ["tm.event = 'Tx' AND transfer.sender = 'AddrZ'", API_EVENTS, false],
  ["tm.event = 'Tx' AND rewards.withdraw.address = 'AddrZ'", API_EVENTS, false],
  ["tm.event = 'Tx' AND rewards.withdraw.source = 'W'", API_EVENTS, false],
  // Big numbers: exact, not float64.
  ["big.value >= 99999999999999999999", BIG_NUMBERS, true],
  ["big.value > 99999999999999999998", BIG_NUMBERS, true],
  ["big2.value <= 18446744073709551615", BIG_NUMBERS, true],
  ["big.floatvalue >= 99999999999999999999", BIG_NUMBERS, true],
  ["big.floatvalue > 99999999999999999998.10", BIG_NUMBERS, true],
  ["big.floatvalue > 99999999999999999998", BIG_NUMBERS, true],
  ["big2.floatvalue <= 18446744073709551615.6", BIG_NUMBERS, true],
  ["big2.floatvalue >= 18446744073709551615", BIG_NUMBERS, true],
  ["big2.floatvalue >= 12.5", BIG_NUMBERS, true],
  ["big.value >= 10", BIG_NUMBERS, true],
  ["n.v = 9007199254740993", events("n|v=9007199254740993"), true],
  ["n.v = 9007199254740992", events("n|v=9007199254740993"), false],
  ["n.v > 9007199254740992", events("n|v=9007199254740993"), true],
  [
    "n.v < 123456789012345678901234567890123456789012345678902",
    events("n|v=123456789012345678901234567890123456789012345678901"),
    true,
  ],
  [
    "n.v = 123456789012345678901234567890123456789012345678901",
    events("n|v=123456789012345678901234567890123456789012345678901"),
    true,
  ],
  // Decimals are 125-bit binary floats on both sides: equal strings are equal, 0.1 is not 1/10 exactly.
  ["n.v = 0.1", events("n|v=0.1"), true],
  ["n.v = 0.10", events("n|v=0.1"), true],
  ["n.v = 5.", events("n|v=5"), true],
  ["n.v = 5", events("n|v=005"), true],
  ["n.v > 0", events("n|v=0.0000000000000000000000000000001"), true],
  ["n.v = 1.00000000000000000000000000000000000000001", events("n|v=1"), true],
  ["n.v = 1.0000000000000000000000000001", events("n|v=1"), false],
  // Values that are not numbers never match a numeric condition.
  ["n.v < 10", events("n|v=-5"), false],
  ["n.v < 10", events("n|v=+5"), false],
  ["n.v < 10", events("n|v=abc"), false],
  ["n.v < 10", events("n|v="), false],
  ["n.v = 1", events("n|v=1e5"), true],
  // Dates and times.
  ["d.v < DATE 2020-01-02", events("d|v=2020-01-01"), true],
  ["d.v <= DATE 2020-01-01", events("d|v=2020-01-01"), true],
  ["d.v > DATE 2020-01-01", events("d|v=2020-01-01"), false],
  ["d.v > DATE 2020-01-01", events("d|v=2020-01-01T10:00:00Z"), false],
  ["d.v = DATE 2020-01-01", events("d|v=not a date"), false],
  ["t.v = TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01T12:00:00+02:00"), true],
  ["t.v < TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01T09:59:59.999999999Z"), true],
  ["t.v > TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01T10:00:00.000000001Z"), true],
  ["t.v = TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01T10:00:00.0000000001Z"), true],
  ["t.v >= TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01"), false],
  ["t.v <= TIME 2020-01-01T10:00:00Z", events("t|v=2020-01-01T10:00:00z"), false],
  ["t.v = TIME 2020-01-01T00:00:00Z", events("t|v=2019-12-31T24:00:00Z"), false],
  ["t.v > DATE 2019-12-31", events("t|v=2020-01-01T10:00:00Z"), false],
  // A tag equal to an event type is matched against the empty value.
  ["slash = ''", events("slash|reason=x"), true],
  ["slash CONTAINS 'x'", events("slash|reason=x"), false],
  ["slash.reason CONTAINS ''", events("slash|reason=x"), true],
  ["a.b EXISTS", { "a.b": [] }, false],
  ["a EXISTS", { "a.b": [] }, true],
  ["a.b.c EXISTS", events("a|b.c=1"), true],
  ["a.b EXISTS", events("a|b.c=1"), true],
  ["a.b.c = 1", events("a.b|c=1"), true],
  // Keys without a dot never match, not even by name.
  ["tm.event EXISTS", { nodot: ["x"] }, false],
  // Tags that collide with Object.prototype names are ordinary tags.
  ["__proto__ EXISTS", events("a|b=1"), false],
  ["__proto__.x = 'a'", events("__proto__|x=a"), true],
  ["constructor EXISTS", events("a|b=1"), false],
  // No events never match.
  ["x.y EXISTS", {}, false],
  // Each condition independently: values from different events of the same key combine.
  ["app.key = 'a' AND app.key = 'b'", events("app|key=a", "app|key=b"), true],
];

describe("Query.matches", () => {
  test.each(MATCH_CASES)("behavior: %s", (text, evs, want) => {
    expect(parseQuery(text).matches(evs)).toBe(want);
  });
});
