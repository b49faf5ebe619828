import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import {
  decodeEd25519PrivKeyJson,
  encodePrivKeyJson,
  writeFileAtomic,
  writeFileAtomicNoSync,
} from "../privval/index.js";
import {
  addressFromPubKey,
  generateEd25519PrivKey,
  type PrivKey,
  type PubKey,
  pubKeyFromPrivKey,
} from "../types/index.js";
import { bytesEqual, bytesToHex } from "../util/bytes.js";
import { NodeKeyFileError } from "./errors.js";

/** The node's p2p identity (config/node_key.json). */
export interface NodeKey {
  privKey: PrivKey;
  pubKey: PubKey;
  /** Lowercase hex of the address of pubKey (p2p.ID). */
  id: string;
}

/** A NodeKey for the given private key (random when none is given); nothing is written. */
export function generateNodeKey(privKey: PrivKey = generateEd25519PrivKey()): NodeKey {
  const pubKey = pubKeyFromPrivKey(privKey);
  return { privKey, pubKey, id: nodeIdFromPubKey(pubKey) };
}

/** The node ID: lowercase hex of the pubkey's address. */
export function nodeIdFromPubKey(pubKey: PubKey): string {
  return bytesToHex(addressFromPubKey(pubKey));
}

/** Reads node_key.json: `{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"<base64 of 64 bytes>"}}`. */
export async function loadNodeKey(path: string): Promise<NodeKey> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new NodeKeyFileError(
      path,
      code === "ENOENT"
        ? 'node key file does not exist. Run "cometh init" to create it'
        : `cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new NodeKeyFileError(path, `is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof obj !== "object" || obj === null) throw new NodeKeyFileError(path, "must hold a JSON object");
  const priv = decodeEd25519PrivKeyJson((obj as Record<string, unknown>).priv_key);
  if (typeof priv === "string") throw new NodeKeyFileError(path, `priv_key: ${priv}`);
  const key = generateNodeKey(priv);
  if (!bytesEqual(generateEd25519PrivKey(priv.bytes.slice(0, 32)).bytes, priv.bytes)) {
    throw new NodeKeyFileError(
      path,
      "priv_key: the last 32 bytes are not the public key of the first 32 (corrupt key)",
    );
  }
  return key;
}

/** Writes node_key.json (indented, mode 0600, atomically). */
/** `durable: false`: no fsyncs (a home deleted at exit, InitHomeOptions.durable). */
export async function saveNodeKey(path: string, key: NodeKey, opts: { durable?: boolean } = {}): Promise<void> {
  if (opts.durable === false) writeFileAtomicNoSync(path, encodeNodeKeyFile(key), 0o600);
  else await writeFileAtomic(path, encodeNodeKeyFile(key), 0o600);
}

export function encodeNodeKeyFile(key: NodeKey): string {
  return `${JSON.stringify({ priv_key: encodePrivKeyJson(key.privKey) }, null, 2)}\n`;
}

/** Loads node_key.json, or generates and saves a new key when the file does not exist (p2p.LoadOrGenNodeKey). */
export async function loadOrGenerateNodeKey(
  path: string,
  opts: { durable?: boolean } = {},
): Promise<NodeKey & { generated: boolean }> {
  if (existsSync(path)) return { ...(await loadNodeKey(path)), generated: false };
  const key = generateNodeKey();
  await saveNodeKey(path, key, opts);
  return { ...key, generated: true };
}
