import { type KvSnapshotStore, openKvSnapshotStore } from "../../store/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { createEvmCommon, createTxCommon } from "./executor.js";
import { EvmReaderImpl } from "./reader.js";
import type { ReadWorkerSetup } from "./readWire.js";
import type { ChainSettings } from "./records.js";
import { EvmStateDb } from "./stateDb.js";
import { type DecodeContext, DecodedTxCache, recoverTxSender, txKey } from "./txDecode.js";

/**
 * The app's database opened again for reads by another thread or process (a `[json-rpc] read-workers`
 * thread, readWorker.ts; a `[json-rpc] read-processes` child, node/evm/readProcess.ts), with an
 * EvmReaderImpl over it: what the app's own reader answers, read
 * from snapshots of what the app committed.
 */
export interface SnapshotReader {
  readonly reader: EvmReaderImpl;
  /**
   * Pins a snapshot of the latest commit (ending the previous one), follows its pointer and settings,
   * and returns its committed height (-1 before InitChain). Reads use it until release().
   */
  pin(): number;
  release(): void;
  /**
   * The CometBFT key (hex) and sender (hex) of a signed tx, recovered as this node's CheckTx recovers
   * it (recoverTxSender: decodeEthTx's envelope checks and recovery, the same chain id): given with a
   * forwarded eth_sendRawTransaction, the main process's CheckTx takes the sender instead of recovering
   * it again (EvmApplication.hintSender). undefined when the bytes do not get that far (the main
   * process's CheckTx says why).
   */
  senderOf(raw: Uint8Array): { key: string; sender: string } | undefined;
  close(): Promise<void>;
}

export async function openSnapshotReader(
  setup: ReadWorkerSetup,
  opts: { pendingNonce: (address: Uint8Array) => bigint; decodeCacheSize?: number },
): Promise<SnapshotReader> {
  const kv: KvSnapshotStore = await openKvSnapshotStore(setup.dbFile, { noSync: setup.noSync });
  const db = new EvmStateDb(kv);
  const common = createEvmCommon(setup.chainId);
  const decodeCtx: DecodeContext = {
    common: createTxCommon(setup.chainId),
    chainId: setup.chainId,
    allowUnprotectedTxs: setup.allowUnprotectedTxs,
  };
  const decoded = new DecodedTxCache(opts.decodeCacheSize ?? 100);
  let settings: ChainSettings | undefined;
  let settingsHeight: number | undefined;
  const reader = new EvmReaderImpl({
    db,
    common: () => common,
    txCommon: () => decodeCtx.common,
    settings: () => settings,
    pendingNonce: opts.pendingNonce,
    decode: (raw) => decoded.decode(raw, decodeCtx),
  });
  return {
    reader,
    pin: () => {
      kv.pin();
      const meta = db.followCommitted();
      if (meta !== undefined && meta.height !== settingsHeight) {
        settings = db.settings();
        settingsHeight = meta.height;
      }
      return meta?.height ?? -1;
    },
    release: () => kv.release(),
    senderOf: (raw) => {
      const sender = recoverTxSender(raw, decodeCtx);
      return sender === undefined ? undefined : { key: txKey(raw), sender: bytesToHex(sender) };
    },
    close: () => kv.close(),
  };
}
