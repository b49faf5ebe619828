import { createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";
import { createTx, type TypedTxData } from "@ethereumjs/tx";
import { bytesToBigint } from "../encode/hex.js";
import { type AccessListEntry, TX_TYPE } from "../services.js";

/**
 * Builds and signs a transaction for the dev keyring (eth_sendTransaction, personal_*, eth_resend)
 * with @ethereumjs/tx; the keyring only ever signs a digest.
 */

export interface UnsignedTx {
  readonly type: 0 | 1 | 2;
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  readonly to: Uint8Array | undefined;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly gasPrice?: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly accessList: readonly AccessListEntry[];
}

const commons = new Map<bigint, ReturnType<typeof createCustomCommon>>();

function commonFor(chainId: bigint) {
  let c = commons.get(chainId);
  if (c === undefined) {
    c = createCustomCommon({ chainId: Number(chainId) }, Mainnet, { hardfork: Hardfork.Prague });
    commons.set(chainId, c);
  }
  return c;
}

/** Signs with `sign` (digest → r‖s‖yParity) and returns the signed encoding. */
export async function signTransaction(
  u: UnsignedTx,
  sign: (digest: Uint8Array) => Promise<Uint8Array> | Uint8Array,
): Promise<Uint8Array> {
  const common = commonFor(u.chainId);
  const base = {
    nonce: u.nonce,
    gasLimit: u.gasLimit,
    value: u.value,
    data: u.data,
    ...(u.to === undefined ? {} : { to: u.to }),
  };
  const accessList = u.accessList.map((e) => [e.address, [...e.storageKeys]] as [Uint8Array, Uint8Array[]]);
  let data: TypedTxData;
  if (u.type === TX_TYPE.legacy) data = { ...base, type: 0, gasPrice: u.gasPrice ?? 0n };
  else if (u.type === TX_TYPE.accessList) {
    data = { ...base, type: 1, chainId: u.chainId, gasPrice: u.gasPrice ?? 0n, accessList };
  } else {
    data = {
      ...base,
      type: 2,
      chainId: u.chainId,
      maxFeePerGas: u.maxFeePerGas ?? 0n,
      maxPriorityFeePerGas: u.maxPriorityFeePerGas ?? 0n,
      accessList,
    };
  }
  const tx = createTx(data, { common });
  const sig = await sign(tx.getHashedMessageToSign());
  const r = bytesToBigint(sig.subarray(0, 32));
  const s = bytesToBigint(sig.subarray(32, 64));
  const recovery = BigInt(sig[64] ?? 0);
  const signed =
    u.type === TX_TYPE.legacy
      ? // EIP-155: v = recovery + chainId·2 + 35.
        tx.addSignature(recovery + u.chainId * 2n + 35n, r, s, false)
      : tx.addSignature(recovery, r, s);
  return signed.serialize();
}
