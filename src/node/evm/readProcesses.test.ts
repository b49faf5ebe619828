import { describe, expect, test } from "vitest";
import { silentLogger } from "../../util/logger.js";
import { ReadProcesses } from "./readProcesses.js";
import { TEST_SETUP } from "./readProcessSetup.fixture.js";

describe("ReadProcesses", () => {
  test("behavior: a forwarded request's sender hints reach hintSender before the request is answered", async () => {
    const events: string[] = [];
    let answered: (text: string) => void = () => undefined;
    const answerSeen = new Promise<string>((resolve) => {
      answered = resolve;
    });
    const log = silentLogger();
    const logWithError = Object.assign(Object.create(log) as typeof log, {
      error: (o: { err?: unknown }) => {
        if (typeof o?.err === "string" && o.err.startsWith("answer: ")) answered(o.err);
      },
      child: () => logWithError,
    });
    const pool = new ReadProcesses({
      size: 1,
      // No database: the stand-in child (readProcessHint.fixture.ts) opens none.
      setup: { ...TEST_SETUP, dbFile: "/nonexistent" },
      latestHeight: () => 1,
      onPublished: () => () => undefined,
      hintSender: (key, sender) => events.push(`hint ${key} ${Buffer.from(sender).toString("hex")}`),
      log: logWithError,
      script: new URL("./readProcessHint.fixture.ts", import.meta.url),
    });
    pool.share({
      answer: (body) => {
        events.push(`answer ${JSON.parse(body).method}`);
        return "HTTP/1.1 200 OK\r\n\r\n";
      },
      adopt: () => undefined,
    });
    try {
      await pool.start(30_000);
      await answerSeen;
      expect(events).toEqual([`hint ${"ab".repeat(32)} ${"cd".repeat(20)}`, "answer eth_sendRawTransaction"]);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
