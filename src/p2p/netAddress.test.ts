import { describe, expect, test } from "vitest";
import { InvalidNodeIdError, NetAddressInvalidError, NetAddressNoIdError } from "./errors.js";
import {
  formatNetAddress,
  isLocalAddress,
  isRoutableAddress,
  netAddressFromNodeInfo,
  netAddressProblem,
  parseNetAddress,
  sameNetAddress,
  splitAddressList,
  validateNodeId,
} from "./netAddress.js";
import type { NodeInfo } from "./reactor.js";

const ID = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

describe("parseNetAddress", () => {
  test("default: id@host:port", () => {
    expect(parseNetAddress(`${ID}@127.0.0.1:26656`)).toEqual({ id: ID, host: "127.0.0.1", port: 26656 });
  });

  test("args: tcp:// prefix, host name, IPv6, uppercase ID", () => {
    expect(parseNetAddress(`tcp://${ID}@node0:26656`)).toEqual({ id: ID, host: "node0", port: 26656 });
    expect(parseNetAddress(`${ID}@[::1]:1`)).toEqual({ id: ID, host: "::1", port: 1 });
    expect(parseNetAddress(`${ID.toUpperCase()}@1.2.3.4:5`).id).toBe(ID);
  });

  test("behavior: formats back, IPv6 in brackets", () => {
    for (const s of [`${ID}@127.0.0.1:26656`, `${ID}@[::1]:1`, `${ID}@node0:0`]) {
      expect(formatNetAddress(parseNetAddress(s))).toBe(s);
    }
  });

  const bad: [string, string, new (...args: never[]) => Error][] = [
    ["no id", "127.0.0.1:26656", NetAddressNoIdError],
    ["two @", `${ID}@x@127.0.0.1:1`, NetAddressNoIdError],
    ["short id", "abcd@127.0.0.1:1", NetAddressInvalidError],
    ["non-hex id", `${"z".repeat(40)}@127.0.0.1:1`, NetAddressInvalidError],
    ["no port", `${ID}@127.0.0.1`, NetAddressInvalidError],
    ["empty host", `${ID}@:26656`, NetAddressInvalidError],
    ["port too big", `${ID}@127.0.0.1:65536`, NetAddressInvalidError],
    ["port not a number", `${ID}@127.0.0.1:abc`, NetAddressInvalidError],
    ["IPv6 without brackets", `${ID}@::1:26656`, NetAddressInvalidError],
  ];
  for (const [name, input, cls] of bad) {
    test(`error: ${name}`, () => {
      expect(() => parseNetAddress(input)).toThrow(cls);
    });
  }

  test("error: messages name the address and the fix", () => {
    expect(() => parseNetAddress("127.0.0.1:26656")).toThrowErrorMatchingInlineSnapshot(
      `[NetAddressNoIdError: address (127.0.0.1:26656) does not contain ID. Write it as <40 hex id>@<host>:<port>]`,
    );
    expect(() => parseNetAddress("abcd@127.0.0.1:1")).toThrowErrorMatchingInlineSnapshot(
      `[NetAddressInvalidError: invalid address (abcd@127.0.0.1:1): invalid node ID "abcd": invalid hex length - got 2, expected 20. A node ID is 40 hex characters (20 bytes). Write it as <40 hex id>@<host>:<port>]`,
    );
  });
});

describe("validateNodeId", () => {
  test("default: 40 hex chars pass", () => {
    expect(() => validateNodeId(ID)).not.toThrow();
  });
  test("error: empty, odd, wrong length", () => {
    for (const id of ["", "abc", "ab".repeat(19)]) expect(() => validateNodeId(id)).toThrow(InvalidNodeIdError);
  });
});

describe("routability", () => {
  const a = (host: string) => ({ id: ID, host, port: 26656 });
  test("default: public IPv4 is routable", () => {
    expect(isRoutableAddress(a("8.8.8.8"))).toBe(true);
  });
  test("behavior: loopback, private and link-local are not", () => {
    for (const h of [
      "127.0.0.1",
      "10.1.2.3",
      "192.168.1.1",
      "172.16.0.1",
      "169.254.1.1",
      "::1",
      "fe80::1",
      "fd00::1",
    ]) {
      expect(isRoutableAddress(a(h)), h).toBe(false);
    }
    expect(isLocalAddress(a("127.0.0.1"))).toBe(true);
    expect(isLocalAddress(a("localhost"))).toBe(true);
  });
  test("behavior: unspecified and broadcast are invalid", () => {
    expect(netAddressProblem(a("0.0.0.0"))).toBe("invalid IP");
    expect(netAddressProblem(a("255.255.255.255"))).toBe("invalid IP");
    expect(netAddressProblem(a("2001:db8::1"))).toBe("invalid IP");
    expect(netAddressProblem(a("1.2.3.4"))).toBeUndefined();
    expect(netAddressProblem({ id: "x", host: "1.2.3.4", port: 1 })).toMatch(/invalid node ID/);
  });
});

describe("helpers", () => {
  test("args: splitAddressList trims and drops empties", () => {
    expect(splitAddressList(" a , ,b,")).toEqual(["a", "b"]);
    expect(splitAddressList("")).toEqual([]);
  });

  test("behavior: sameNetAddress by dial string or ID", () => {
    const x = { id: ID, host: "1.2.3.4", port: 1 };
    expect(sameNetAddress(x, { ...x, id: "" })).toBe(true);
    expect(sameNetAddress(x, { ...x, port: 2 })).toBe(true);
    expect(sameNetAddress(x, { id: "b".repeat(40), host: "1.2.3.4", port: 2 })).toBe(false);
  });

  test("behavior: netAddressFromNodeInfo substitutes the remote IP for 0.0.0.0", () => {
    const info = { id: ID, listenAddr: "tcp://0.0.0.0:26656" } as NodeInfo;
    expect(netAddressFromNodeInfo(info, "::ffff:10.0.0.5")).toEqual({ id: ID, host: "10.0.0.5", port: 26656 });
    expect(netAddressFromNodeInfo({ ...info, listenAddr: "1.2.3.4:5" }, "10.0.0.5")).toEqual({
      id: ID,
      host: "1.2.3.4",
      port: 5,
    });
  });
});
