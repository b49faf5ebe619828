import { randomBytes } from "node:crypto";

/**
 * Filter and subscription ids as geth makes them (rpc.NewID): 16 random bytes as hex with the
 * leading zeros stripped ("0x9cef478923ff08bf67fde6c64013158d").
 */
export function newRpcId(): string {
  const hex = randomBytes(16).toString("hex").replace(/^0+/, "");
  return `0x${hex === "" ? "0" : hex}`;
}
