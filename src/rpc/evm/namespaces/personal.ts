import { toAddress } from "../encode/hex.js";
import { invalidParams, serverError } from "../errors.js";
import { method, type Namespace } from "../method.js";
import { p } from "../params.js";
import { personalMessageHash, recoverAddress } from "../tx/signatures.js";
import { requireKeyring, sendWithKeyring, signDigest27 } from "./sending.js";

/**
 * personal: the node's dev keyring (docs/ethereum-rpc.md "Namespaces"). Keys are always usable, so unlock and
 * lock answer false as v0.5 does; personal_sign applies the EIP-191 prefix (geth; docs/compatibility.md).
 */

const SMARTCARD = "smartcard wallet not supported yet";

function decodePrivateKey(text: string): Uint8Array {
  const body = text.startsWith("0x") || text.startsWith("0X") ? text.slice(2) : text;
  if (!/^[0-9a-fA-F]{64}$/.test(body)) {
    throw invalidParams("invalid argument 0: private key must be 32 bytes of hex (64 hex digits)");
  }
  return new Uint8Array(Buffer.from(body, "hex"));
}

export const personal = {
  importRawKey: method([p.string, p.string], async ([key, password], s, ctx) =>
    toAddress(await requireKeyring(s, ctx).importRawKey(decodePrivateKey(key), password)),
  ),
  listAccounts: method([], async (_, s, ctx) => (await requireKeyring(s, ctx).accounts()).map(toAddress)),
  newAccount: method([p.string], async ([password], s, ctx) =>
    toAddress(await requireKeyring(s, ctx).newAccount(password)),
  ),
  unlockAccount: method([p.address, p.string, p.optional(p.uint64)], () => false),
  lockAccount: method([p.address], () => false),
  sendTransaction: method([p.callRequest, p.string], ([req], s, ctx) => sendWithKeyring(req, s, ctx)),
  sign: method([p.data, p.address, p.string], ([data, who], s, ctx) =>
    signDigest27(s, ctx, who, personalMessageHash(data)),
  ),
  ecRecover: method([p.data, p.data], ([data, sig]) => {
    if (sig.length !== 65) throw serverError("signature must be 65 bytes long");
    const v = sig[64] as number;
    if (v !== 27 && v !== 28) throw serverError("invalid Ethereum signature (V is not 27 or 28)");
    const normalized = new Uint8Array(sig);
    normalized[64] = v - 27;
    const address = recoverAddress(personalMessageHash(data), normalized);
    if (address === undefined) throw serverError("invalid signature: the public key cannot be recovered");
    return toAddress(address);
  }),
  listWallets: method([], () => null),
  initializeWallet: method([p.string], () => {
    throw serverError(SMARTCARD);
  }),
  unpair: method([p.string, p.string], () => {
    throw serverError(SMARTCARD);
  }),
} satisfies Namespace;
