import type { GenesisDoc } from "../../../types/genesis.js";
import { encodeJson, parseJson, RawJson, type WireValue } from "../../jsonrpc/index.js";
import { encodeConsensusParams } from "./abci.js";
import { encodePubKey, hex, i64, time } from "./wire.js";

/** The genesis document in cmtjson form (types.GenesisDoc field order; validators and app_state omitempty). */

function appStateValue(appState: unknown): WireValue | undefined {
  if (appState === undefined || appState === null) return undefined;
  let text: string;
  if (typeof appState === "string") text = appState;
  else if (appState instanceof Uint8Array) text = Buffer.from(appState).toString("utf8");
  else text = JSON.stringify(appState, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  if (text.trim() === "") return undefined;
  try {
    parseJson(text);
  } catch {
    // Not JSON (json.RawMessage would refuse it): keep it visible as a string rather than break the document.
    return text;
  }
  return new RawJson(text);
}

export function encodeGenesisDoc(g: GenesisDoc): WireValue {
  return {
    genesis_time: time(g.genesisTime),
    chain_id: g.chainId,
    initial_height: i64(g.initialHeight),
    consensus_params: encodeConsensusParams(g.consensusParams),
    validators:
      g.validators.length === 0
        ? undefined
        : g.validators.map((v) => ({
            address: hex(v.address),
            pub_key: encodePubKey(v.pubKey),
            power: i64(v.power),
            name: v.name,
          })),
    app_hash: hex(g.appHash),
    app_state: appStateValue(g.appState),
  };
}

/** genesis_chunked splits the compact document into 16 MiB pieces (rpc/core env.go genesisChunkSize). */
export const GENESIS_CHUNK_SIZE = 16 * 1024 * 1024;

/** Base64 chunks of the compact cmtjson genesis, computed once at startup (InitGenesisChunks). */
export function genesisChunks(g: GenesisDoc, chunkSize = GENESIS_CHUNK_SIZE): string[] {
  const data = Buffer.from(encodeJson(encodeGenesisDoc(g)), "utf8");
  const chunks: string[] = [];
  for (let i = 0; i < data.length; i += chunkSize) {
    chunks.push(data.subarray(i, Math.min(i + chunkSize, data.length)).toString("base64"));
  }
  return chunks;
}
