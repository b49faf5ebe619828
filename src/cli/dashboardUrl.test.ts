import { expect, test } from "vitest";
import { dashboardUrl } from "./dashboardUrl.js";

test("args: dashboardUrl from [rpc] laddr, only when the dashboard is on", () => {
  expect(dashboardUrl("tcp://127.0.0.1:26657", true)).toBe("http://127.0.0.1:26657/dashboard");
  expect(dashboardUrl("tcp://0.0.0.0:26667", true)).toBe("http://127.0.0.1:26667/dashboard");
  expect(dashboardUrl("tcp://[::1]:26657,unix:///tmp/s", true)).toBe("http://[::1]:26657/dashboard");
  expect(dashboardUrl("unix:///tmp/rpc.sock", true)).toBeUndefined();
  expect(dashboardUrl("tcp://127.0.0.1:26657", false)).toBeUndefined();
});
