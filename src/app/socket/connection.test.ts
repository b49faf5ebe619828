import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, test } from "vitest";
import { silentLogger } from "../../util/logger.js";
import { type AbciConnectionOptions, AbciSocketConnection } from "./connection.js";
import { AbciConnectionError } from "./errors.js";
import { FakeAbciServer } from "./testing.js";

let dir: string;
let fake: FakeAbciServer;
const conns: AbciSocketConnection[] = [];

async function setup(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "cometh-abci-"));
  fake = new FakeAbciServer();
  const path = join(dir, "app.sock");
  await fake.listen(path);
  return path;
}

async function connect(
  path: string,
  extra: Partial<AbciConnectionOptions> = {},
): Promise<{ conn: AbciSocketConnection; errors: AbciConnectionError[] }> {
  const errors: AbciConnectionError[] = [];
  const conn = await AbciSocketConnection.connect({
    name: "mempool",
    address: { protocol: "unix", path },
    log: silentLogger(),
    onError: (e) => errors.push(e),
    ...extra,
  });
  conns.push(conn);
  return { conn, errors };
}

function checkTx(conn: AbciSocketConnection, code: number) {
  return conn.request("checkTx", { tx: Uint8Array.of(code), type: 0 });
}

afterEach(async () => {
  for (const c of conns.splice(0)) c.close();
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("ABCI socket connection", () => {
  test("default: echo comes back, and the request is followed by a Flush", async () => {
    const { conn } = await connect(await setup());
    expect(await conn.echo("hello")).toBe("hello");
    expect(fake.received[0]).toEqual(["echo", "flush"]);
  });

  test("behavior: requests sent in one turn share one Flush and resolve in order", async () => {
    const { conn } = await connect(await setup());
    const codes = await Promise.all([1, 2, 3, 4, 5].map((c) => checkTx(conn, c)));
    expect(codes.map((r) => r.code)).toEqual([1, 2, 3, 4, 5]);
    expect(fake.received[0]).toEqual(["checkTx", "checkTx", "checkTx", "checkTx", "checkTx", "flush"]);
    // A later turn gets its own Flush; an explicit flush() is not followed by another.
    await checkTx(conn, 6);
    await conn.flush();
    expect(fake.received[0]?.slice(6)).toEqual(["checkTx", "flush", "flush"]);
    expect(conn.inFlight).toBe(0);
  });

  test("behavior: 2 000 requests in flight, answered in order", async () => {
    const { conn } = await connect(await setup());
    const all = await Promise.all(Array.from({ length: 2000 }, (_, i) => checkTx(conn, i % 251)));
    expect(all.every((r, i) => r.code === i % 251)).toBe(true);
  });

  test("error: an Exception answer stops the connection and rejects every waiting request", async () => {
    const { conn, errors } = await connect(await setup());
    fake.answer = (_req, kind) => (kind === "echo" ? { exception: { error: "app panicked" } } : undefined);
    const waiting = [conn.echo("a"), checkTx(conn, 1)];
    for (const w of waiting) {
      await expect(w).rejects.toThrowErrorMatchingInlineSnapshot(
        `[AbciConnectionError: ABCI mempool connection: the application answered with an exception: app panicked]`,
      );
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]?.connection).toBe("mempool");
    // Later requests fail at once with the same error.
    await expect(conn.echo("b")).rejects.toBe(errors[0]);
  });

  test("error: an answer of the wrong kind stops the connection", async () => {
    const { conn, errors } = await connect(await setup());
    fake.answer = (_req, kind) => (kind === "echo" ? { flush: {} } : undefined);
    await expect(conn.echo("a")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[AbciConnectionError: ABCI mempool connection: unexpected response flush to the request echo]`,
    );
    expect(errors).toHaveLength(1);
  });

  test("error: the application closing the connection stops it", async () => {
    const { conn, errors } = await connect(await setup());
    fake.answer = (_req, kind) => (kind === "checkTx" ? "close" : undefined);
    await expect(checkTx(conn, 1)).rejects.toThrow(AbciConnectionError);
    expect(errors.map((e) => e.message)).toEqual([
      "ABCI mempool connection: the application closed the connection (read message: EOF)",
    ]);
  });

  test("error: bytes that are not a Response stop the connection", async () => {
    const { conn, errors } = await connect(await setup());
    fake.answer = (_req, kind) => {
      if (kind === "flush") fake.sockets[0]?.write(Uint8Array.of(3, 0xff, 0xff, 0xff));
      return undefined;
    };
    await expect(conn.echo("x")).rejects.toThrow(/read message: not a tendermint\.abci\.Response/);
    expect(errors).toHaveLength(1);
  });

  test("behavior: close() rejects what waits and is not an error", async () => {
    const { conn, errors } = await connect(await setup());
    // The fake answers nothing: the request waits.
    fake.answer = () => "hold";
    const waiting = checkTx(conn, 1);
    await new Promise<void>((resolve) => {
      const check = () => ((fake.received[0]?.length ?? 0) >= 2 ? resolve() : setImmediate(check));
      check();
    });
    conn.close();
    await expect(waiting).rejects.toThrowErrorMatchingInlineSnapshot(
      `[AbciConnectionError: ABCI mempool connection: the connection was closed while a request waited]`,
    );
    expect(errors).toHaveLength(0);
  });

  test("behavior: dialling is retried until the application listens, each failure logged", async () => {
    dir = await mkdtemp(join(tmpdir(), "cometh-abci-"));
    const path = join(dir, "late.sock");
    fake = new FakeAbciServer();
    const lines: string[] = [];
    let onLine: () => void = () => {};
    const log = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          onLine();
          cb();
        },
      }),
    );
    const pending = connect(path, { log, retryIntervalMs: 10 });
    await new Promise<void>((resolve) => {
      onLine = () => {
        if (lines.some((l) => l.includes("failed to connect"))) resolve();
      };
      onLine();
    });
    await fake.listen(path);
    const { conn } = await pending;
    expect(await conn.echo("late")).toBe("late");
    expect(lines.find((l) => l.includes("failed to connect"))).toContain(
      `abci.socketClient failed to connect to unix://${path}.  Retrying after 0.01s...`,
    );
  });

  test("error: an aborted dial stops retrying", async () => {
    dir = await mkdtemp(join(tmpdir(), "cometh-abci-"));
    fake = new FakeAbciServer();
    const ac = new AbortController();
    const pending = connect(join(dir, "never.sock"), { retryIntervalMs: 60_000, signal: ac.signal });
    setImmediate(() => ac.abort());
    await expect(pending).rejects.toThrow(/stopped while dialling unix:\/\//);
  });
});
