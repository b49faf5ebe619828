// Sender recovery off the main thread (see senderRecovery.ts): for each raw signed Ethereum tx, the
// keccak256 tx hash and the sender address, computed as ethereumjs' getSenderAddress does (signing
// message, secp256k1 public key recovery, keccak256 of the key). Plain JavaScript so that a worker
// starts the same under tsx, vitest and a build. Any tx it cannot recover is answered with an error
// text; the main thread then decodes it itself, which words the error.
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";

const require = createRequire(import.meta.url);
/** libsecp256k1's N-API build (the package root would fall back to JS silently). */
const secp = require("secp256k1/bindings");

const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const TYPED_FIELDS = { 1: 11, 2: 12, 4: 13 };

function toBigint(b) {
  if (!(b instanceof Uint8Array)) throw new Error("integer field is a list");
  if (b.length === 0) return 0n;
  return BigInt(`0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex")}`);
}

function minimalBytes(n) {
  if (n === 0n) return new Uint8Array(0);
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

function word(b) {
  if (!(b instanceof Uint8Array) || b.length > 32) throw new Error("signature value is not a 32-byte integer");
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

/** { hash, from } of one signed tx; throws when it cannot be recovered. */
function recoverOne(raw) {
  if (raw.length === 0) throw new Error("empty tx");
  const first = raw[0];
  let message;
  let recid;
  let r;
  let s;
  if (first >= 0xc0) {
    const list = RLP.decode(raw);
    if (!Array.isArray(list) || list.length !== 9) throw new Error("legacy tx has the wrong field count");
    const v = toBigint(list[6]);
    const unsigned = list.slice(0, 6);
    if (v === 27n || v === 28n) recid = Number(v - 27n);
    else if (v >= 35n) {
      const chainId = (v - 35n) / 2n;
      recid = Number(v - 35n - chainId * 2n);
      unsigned.push(minimalBytes(chainId), new Uint8Array(0), new Uint8Array(0));
    } else throw new Error("invalid v");
    message = RLP.encode(unsigned);
    r = list[7];
    s = list[8];
  } else {
    const count = TYPED_FIELDS[first];
    if (count === undefined) throw new Error("unsupported type");
    const list = RLP.decode(raw.subarray(1));
    if (!Array.isArray(list) || list.length !== count) throw new Error("typed tx has the wrong field count");
    const yParity = toBigint(list[count - 3]);
    if (yParity !== 0n && yParity !== 1n) throw new Error("invalid y-parity");
    recid = Number(yParity);
    const body = RLP.encode(list.slice(0, count - 3));
    message = new Uint8Array(body.length + 1);
    message[0] = first;
    message.set(body, 1);
    r = list[count - 2];
    s = list[count - 1];
  }
  const sValue = toBigint(s);
  if (sValue > HALF_N) throw new Error("high s");
  const sig = new Uint8Array(64);
  sig.set(word(r), 0);
  sig.set(word(s), 32);
  const pub = secp.ecdsaRecover(sig, recid, keccak_256(message), false);
  const from = keccak_256(pub.subarray(1)).subarray(12);
  return { hash: keccak_256(raw), from };
}

// One message per batch: { id, raws: Uint8Array[] } → { id, results: ({ hash, from } | { error })[] }.
parentPort.on("message", (msg) => {
  const results = msg.raws.map((raw) => {
    try {
      return recoverOne(raw);
    } catch (err) {
      return { error: String(err?.message ?? err) };
    }
  });
  parentPort.postMessage({ id: msg.id, results });
});
