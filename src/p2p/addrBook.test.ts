import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { silentLogger } from "../util/logger.js";
import { AddrBook, type AddrBookOptions } from "./addrBook.js";
import { AddrBookFileError, AddrBookRejectedError } from "./errors.js";
import type { NetAddress } from "./reactor.js";

const id = (n: number) => n.toString(16).padStart(40, "0");
const addr = (n: number, host = `8.${n % 250}.${n % 7}.1`, port = 26656): NetAddress => ({ id: id(n), host, port });
const SRC = addr(999, "9.9.9.9");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "addrbook-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function book(opts: Partial<AddrBookOptions> = {}): AddrBook {
  return new AddrBook({
    filePath: join(dir, "config", "addrbook.json"),
    routabilityStrict: true,
    log: silentLogger(),
    ...opts,
  });
}

describe("AddrBook", () => {
  test("default: add, has, size, pick", () => {
    const b = book();
    expect(b.empty()).toBe(true);
    expect(b.pickAddress(50)).toBeUndefined();
    b.addAddress(addr(1), SRC);
    b.addAddress(addr(2), SRC);
    expect(b.size()).toBe(2);
    expect(b.hasAddress(addr(1))).toBe(true);
    expect(b.needMoreAddrs()).toBe(true);
    const picked = b.pickAddress(100);
    expect([id(1), id(2)]).toContain(picked?.id);
  });

  test("error: strict refuses non-routable, lax accepts it", () => {
    const strict = book();
    expect(() => strict.addAddress(addr(1, "127.0.0.1"), SRC)).toThrow(AddrBookRejectedError);
    expect(() => strict.addAddress(addr(1, "192.168.0.3"), SRC)).toThrow(/not routable/);
    const lax = book({ routabilityStrict: false });
    lax.addAddress(addr(1, "127.0.0.1"), SRC);
    expect(lax.size()).toBe(1);
  });

  test("error: invalid, ours, private, private source", () => {
    const b = book();
    const reason = (f: () => void) => {
      try {
        f();
      } catch (err) {
        return (err as AddrBookRejectedError).reason;
      }
      return "accepted";
    };
    expect(reason(() => b.addAddress(addr(1, "0.0.0.0"), SRC))).toBe("invalid");
    b.addOurAddress(addr(2));
    expect(b.ourAddress(addr(2))).toBe(true);
    expect(reason(() => b.addAddress(addr(2), SRC))).toBe("self");
    b.addPrivateIds([id(3), SRC.id]);
    expect(reason(() => b.addAddress(addr(3), addr(5)))).toBe("private");
    expect(reason(() => b.addAddress(addr(4), SRC))).toBe("privateSrc");
  });

  test("behavior: markGood moves to old, markBad bans, reinstate after the ban", () => {
    let now = 1_700_000_000_000;
    const b = book({ now: () => now });
    b.addAddress(addr(1), SRC);
    expect(b.isGood(addr(1))).toBe(false);
    b.markGood(id(1));
    expect(b.isGood(addr(1))).toBe(true);
    expect(b.pickAddress(0)?.id).toBe(id(1));
    b.markBad(addr(1), 1000);
    expect(b.isBanned(addr(1))).toBe(true);
    expect(b.hasAddress(addr(1))).toBe(false);
    expect(() => b.addAddress(addr(1), SRC)).toThrow(/banned/);
    b.reinstateBadPeers();
    expect(b.hasAddress(addr(1))).toBe(false);
    now += 1001;
    b.reinstateBadPeers();
    expect(b.hasAddress(addr(1))).toBe(true);
    expect(b.isBanned(addr(1))).toBe(false);
  });

  test("behavior: getSelection leaves out private IDs and caps the size", () => {
    const b = book();
    for (let i = 1; i <= 40; i++) b.addAddress(addr(i), SRC);
    expect(b.getSelection()).toHaveLength(32);
    b.addPrivateIds([id(1)]);
    for (let k = 0; k < 5; k++) expect(b.getSelection().some((a) => a.id === id(1))).toBe(false);
    b.markGood(id(2));
    const biased = b.getSelectionWithBias(30);
    expect(biased).toHaveLength(32);
    expect(new Set(biased.map((a) => a.id)).size).toBe(32);
  });

  test("behavior: save and load roundtrip in CometBFT's JSON shape", async () => {
    const b = book();
    await b.start();
    b.addAddress(addr(1), SRC);
    b.addAddress(addr(2, "2001:4860::8888"), SRC);
    b.markGood(id(2));
    b.markAttempt(addr(1));
    await b.stop();

    const json = JSON.parse(readFileSync(b.filePath, "utf8"));
    expect(typeof json.key).toBe("string");
    expect(json.addrs).toHaveLength(2);
    const one = json.addrs.find((a: { addr: { id: string } }) => a.addr.id === id(1));
    expect(one).toMatchObject({
      addr: { id: id(1), ip: addr(1).host, port: 26656 },
      src: { id: SRC.id, ip: "9.9.9.9", port: 26656 },
      attempts: 1,
      bucket_type: 1,
      last_success: "0001-01-01T00:00:00Z",
    });
    expect(one.buckets).toHaveLength(1);

    const again = book();
    await again.start();
    expect(again.size()).toBe(2);
    expect(again.isGood(addr(2, "2001:4860::8888"))).toBe(true);
    expect(again.isGood(addr(1))).toBe(false);
    await again.stop();
  });

  test("args: loads a file CometBFT wrote (nanosecond times, offsets, null buckets)", async () => {
    const b = book();
    const file = b.filePath;
    const content = {
      key: "0123456789abcdef01234567",
      addrs: [
        {
          addr: { id: id(7), ip: "5.6.7.8", port: 26656 },
          src: { id: id(8), ip: "5.6.7.9", port: 26656 },
          buckets: [3],
          attempts: 0,
          bucket_type: 2,
          last_attempt: "2024-01-01T10:00:00.123456789+02:00",
          last_success: "2024-01-01T10:00:00.123456789+02:00",
          last_ban_time: "0001-01-01T00:00:00Z",
        },
        {
          addr: { id: id(9), ip: "5.6.7.10", port: 1 },
          src: { id: id(8), ip: "5.6.7.9", port: 26656 },
          buckets: null,
          attempts: 2,
          bucket_type: 1,
          last_attempt: "2024-01-01T00:00:00Z",
          last_success: "0001-01-01T00:00:00Z",
          last_ban_time: "0001-01-01T00:00:00Z",
        },
      ],
    };
    mkdirSync(join(dir, "config"), { recursive: true });
    writeFileSync(file, JSON.stringify(content));
    expect(await b.load()).toBe(true);
    expect(b.size()).toBe(2);
    expect(b.isGood(addr(7, "5.6.7.8"))).toBe(true);
    expect(b.hasAddress(addr(9, "5.6.7.10", 1))).toBe(true);
  });

  test("error: a corrupt file fails to load", async () => {
    const b = book();
    mkdirSync(join(dir, "config"), { recursive: true });
    writeFileSync(b.filePath, "{not json");
    await expect(b.load()).rejects.toThrow(AddrBookFileError);
    writeFileSync(b.filePath, JSON.stringify({ key: 1, addrs: [] }));
    await expect(b.load()).rejects.toThrow(AddrBookFileError);
  });

  test("default: no file loads nothing", async () => {
    expect(await book().load()).toBe(false);
  });
});
