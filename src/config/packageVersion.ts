import { readFileSync } from "node:fs";

/** cometh's own version, from package.json (web3_clientVersion, `cometh version`). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
  return pkg.version ?? "0.0.0";
}
