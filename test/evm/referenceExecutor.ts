import { type Block, createBlock } from "@ethereumjs/block";
import {
  type AccountFields,
  type Common,
  createCustomCommon,
  Hardfork,
  Mainnet,
  type StateManagerInterface,
} from "@ethereumjs/common";
import { type EVMMockBlockchainInterface, getActivePrecompiles, type PrecompileFunc } from "@ethereumjs/evm";
import { createTx, type TypedTransaction } from "@ethereumjs/tx";
import { Account, Address } from "@ethereumjs/util";
import { createVM, runTx, type VM } from "@ethereumjs/vm";
import { ecrecover, keccak256 } from "../../src/app/evm/crypto.js";
import { EMPTY_TRIE_ROOT } from "../../src/app/evm/records.js";
import { OverlayStateManager } from "../../src/app/evm/stateManager.js";
import { type BlockEnv, type EngineTx, EngineTxError, type Fork, type TxResult } from "../../src/evm/types.js";
import type { Executor } from "./stateTests.js";

/**
 * The reference Executor: @ethereumjs/vm's runTx (mainnet rules at the fork) over the
 * OverlayStateManager the harness hands in, with a block made from BlockEnv. It proves the state-test
 * harness and is the other side of the differential tests; cometh's engine must agree with it.
 */

/** A storage root that is not the empty one: EIP-7610's "account has storage" for ethereumjs. */
const NON_EMPTY_STORAGE_ROOT = keccak256(new TextEncoder().encode("cometh: storage not tracked"));
const MAX_UINT64 = (1n << 64n) - 1n;

/** A view of `tx` whose sender is given rather than derived (runTx asks for it several times). */
function withSender(tx: TypedTransaction, from: Uint8Array): TypedTransaction {
  const sender = new Address(from);
  if (!Object.isFrozen(tx)) {
    (tx as { getSenderAddress: () => Address }).getSenderAddress = () => sender;
    return tx;
  }
  return Object.create(tx, { getSenderAddress: { value: () => sender } }) as TypedTransaction;
}

/** A StateReader that can tell whether an account incarnation has storage (MemoryStateReader can). */
interface StorageAware {
  hasStorage(addr: Uint8Array, incarnation: number): boolean;
}

function isStorageAware(x: unknown): x is StorageAware {
  return typeof (x as Partial<StorageAware>).hasStorage === "function";
}

/**
 * One VM per fork runs over this forwarder; each call points it at the overlay it was given. The
 * overlay reports every account with the empty storage root; where the base can tell that an
 * untouched account has storage (a state test's pre-state), the root reported is non-empty, so
 * ethereumjs' create-collision check (EIP-7610) sees it.
 */
class ForwardingStateManager implements StateManagerInterface {
  target: OverlayStateManager | undefined;

  get #t(): OverlayStateManager {
    if (this.target === undefined) throw new RangeError("reference executor: no state");
    return this.target;
  }

  readonly originalStorageCache = {
    get: (address: Address, key: Uint8Array): Promise<Uint8Array> => this.#t.originalStorageCache.get(address, key),
    clear: (): void => this.target?.originalStorageCache.clear(),
  };

  async getAccount(address: Address): Promise<Account | undefined> {
    const t = this.#t;
    const a = await t.getAccount(address);
    if (a === undefined) return a;
    const base = t.base;
    if (isStorageAware(base)) {
      const stored = t.account(address.bytes);
      // Storage written in this overlay at the same incarnation is not looked at: a collision with
      // storage written earlier in the same transaction cannot happen (the address had no code then).
      if (base.hasStorage(address.bytes, stored.incarnation)) {
        return new Account(a.nonce, a.balance, NON_EMPTY_STORAGE_ROOT, a.codeHash);
      }
    }
    return a;
  }
  putAccount(address: Address, account?: Account): Promise<void> {
    return this.#t.putAccount(address, account);
  }
  deleteAccount(address: Address): Promise<void> {
    return this.#t.deleteAccount(address);
  }
  modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    return this.#t.modifyAccountFields(address, fields);
  }
  putCode(address: Address, value: Uint8Array): Promise<void> {
    return this.#t.putCode(address, value);
  }
  getCode(address: Address): Promise<Uint8Array> {
    return this.#t.getCode(address);
  }
  getCodeSize(address: Address): Promise<number> {
    return this.#t.getCodeSize(address);
  }
  getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    return this.#t.getStorage(address, key);
  }
  putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    return this.#t.putStorage(address, key, value);
  }
  clearStorage(address: Address): Promise<void> {
    return this.#t.clearStorage(address);
  }
  checkpoint(): Promise<void> {
    return this.#t.checkpoint();
  }
  commit(): Promise<void> {
    return this.#t.commit();
  }
  revert(): Promise<void> {
    return this.#t.revert();
  }
  async getStateRoot(): Promise<Uint8Array> {
    return EMPTY_TRIE_ROOT;
  }
  setStateRoot(): Promise<void> {
    return this.#t.setStateRoot();
  }
  hasStateRoot(): Promise<boolean> {
    return this.#t.hasStateRoot();
  }
  clearCaches(): void {}
  shallowCopy(): StateManagerInterface {
    return this;
  }
}

type Kzg = NonNullable<NonNullable<Common["customCrypto"]>["kzg"]>;

let kzgLoaded: Kzg | undefined;
let kzgLoading: Promise<Kzg> | undefined;

/**
 * The KZG library (kzg-wasm with the ceremony's trusted setup) for the point-evaluation precompile,
 * loaded once per process and only when a transaction reaches 0x0a: loading takes tens of seconds.
 */
function loadKzg(): Promise<Kzg> {
  kzgLoading ??= import("kzg-wasm").then(async ({ loadKZG }) => {
    kzgLoaded = await loadKZG();
    return kzgLoaded;
  });
  return kzgLoading;
}

function loadedKzg(): Kzg {
  if (kzgLoaded === undefined) throw new RangeError("KZG is not loaded yet");
  return kzgLoaded;
}

/** Common's KZG: forwards to the library once 0x0a (below) has loaded it. */
const LAZY_KZG: Kzg = {
  blobToKzgCommitment: (...a) => loadedKzg().blobToKzgCommitment(...a),
  computeBlobProof: (...a) => loadedKzg().computeBlobProof(...a),
  verifyProof: (...a) => loadedKzg().verifyProof(...a),
  verifyBlobProofBatch: (...a) => loadedKzg().verifyBlobProofBatch(...a),
  computeCells: (...a) => loadedKzg().computeCells(...a),
  computeCellsAndProofs: (...a) => loadedKzg().computeCellsAndProofs(...a),
  recoverCellsAndProofs: (...a) => loadedKzg().recoverCellsAndProofs(...a),
  verifyCellKzgProofBatch: (...a) => loadedKzg().verifyCellKzgProofBatch(...a),
};

const POINT_EVALUATION = "0x000000000000000000000000000000000000000a";

/** 0x0a as ethereumjs has it, after loading KZG. */
function lazyPointEvaluation(common: Common): PrecompileFunc {
  const original = getActivePrecompiles(common).get(POINT_EVALUATION.slice(2)) as PrecompileFunc;
  return async (input) => {
    await loadKzg();
    return original(input);
  };
}

const HARDFORKS: Record<Fork, Hardfork> = { cancun: Hardfork.Cancun, prague: Hardfork.Prague };

interface ForkVm {
  vm: VM;
  common: Common;
}

/** Builds the ethereumjs transaction of an EngineTx (unsigned; its sender is given). */
function ethTx(tx: EngineTx, common: Common): TypedTransaction {
  const base = {
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    value: tx.value,
    data: tx.data,
    ...(tx.to === undefined ? {} : { to: tx.to }),
  };
  const accessList = tx.accessList.map((e) => ({
    address: `0x${Buffer.from(e.address).toString("hex")}` as `0x${string}`,
    storageKeys: e.storageKeys.map((k) => `0x${Buffer.from(k).toString("hex")}` as `0x${string}`),
  }));
  switch (tx.type) {
    case 0:
      return createTx({ ...base, type: 0, gasPrice: tx.maxFeePerGas }, { common });
    case 1:
      return createTx({ ...base, type: 1, gasPrice: tx.maxFeePerGas, accessList }, { common });
    case 2:
      return createTx(
        {
          ...base,
          type: 2,
          maxFeePerGas: tx.maxFeePerGas,
          maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
          accessList,
        },
        { common },
      );
    case 3:
      return createTx(
        {
          ...base,
          type: 3,
          maxFeePerGas: tx.maxFeePerGas,
          maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
          accessList,
          blobVersionedHashes: tx.blobVersionedHashes,
          maxFeePerBlobGas: tx.maxFeePerBlobGas,
        },
        { common },
      );
    default:
      // EngineTx's authorizations carry the recovered authority but not the signature ethereumjs needs.
      throw new EngineTxError(`reference executor: transaction type ${tx.type} is not supported`);
  }
}

function ethBlockOf(env: BlockEnv, common: Common): Block {
  const block = createBlock(
    {
      header: {
        number: env.number,
        timestamp: env.timestamp,
        coinbase: new Address(env.coinbase),
        gasLimit: env.gasLimit > MAX_UINT64 ? MAX_UINT64 : env.gasLimit,
        baseFeePerGas: env.baseFee,
        mixHash: env.prevRandao,
        difficulty: 0n,
        excessBlobGas: 0n,
        blobGasUsed: 0n,
        parentBeaconBlockRoot: new Uint8Array(32),
      },
    },
    { common, skipConsensusFormatValidation: true, freeze: false },
  );
  // BLOBBASEFEE and the blob fee check read the price; BlockEnv gives it, not the excess gas.
  const header = block.header as { getBlobGasPrice: () => bigint };
  header.getBlobGasPrice = () => env.blobBaseFee;
  return block;
}

/** geth's texts for ethereumjs EVM errors (receipts' vmError, `ethereumTxFailed`). */
export function vmErrorText(error: string | undefined): string {
  if (error === undefined) return "";
  if (error === "revert") return "execution reverted";
  // ethereumjs 10 appends the location ("invalid JUMP at pc 12 …").
  if (error === "invalid JUMP" || error.startsWith("invalid JUMP ")) return "invalid jump destination";
  if (error === "static state change") return "write protection";
  if (error === "create collision") return "contract address collision";
  if (error === "insufficient balance") return "insufficient balance for transfer";
  if (error === "initcode exceeds max initcode size") return "max initcode size exceeded";
  if (error === "code size to deposit exceeds maximum code size") return "max code size exceeded";
  if (error === "invalid bytecode deployed") return "invalid code: must not begin with 0xef";
  return error;
}

/**
 * Creates the reference Executor. The state it is given must be an OverlayStateManager (ethereumjs
 * runs on its StateManagerInterface side).
 */
export async function createReferenceExecutor(): Promise<Executor> {
  const forwarder = new ForwardingStateManager();
  let current: BlockEnv | undefined;
  const blockchain: EVMMockBlockchainInterface = {
    getBlock: async (n: number) => {
      const h = current?.blockHash(BigInt(n)) ?? new Uint8Array(32);
      return { hash: () => h };
    },
    putBlock: async () => {},
    shallowCopy: () => blockchain,
  };
  const vms = new Map<string, ForkVm>();
  const blocks = new WeakMap<BlockEnv, Block>();

  async function forkVm(fork: Fork, chainId: bigint): Promise<ForkVm> {
    const key = `${fork}:${chainId}`;
    let v = vms.get(key);
    if (v === undefined) {
      const common = createCustomCommon({ chainId: Number(chainId) }, Mainnet, {
        hardfork: HARDFORKS[fork],
        customCrypto: { ecrecover, keccak256, kzg: LAZY_KZG },
      });
      const vm = await createVM({
        common,
        stateManager: forwarder,
        blockchain,
        evmOpts: { customPrecompiles: [{ address: POINT_EVALUATION, function: lazyPointEvaluation(common) }] },
      });
      v = { vm, common };
      vms.set(key, v);
    }
    return v;
  }

  return async (state, tx, block, fork): Promise<TxResult> => {
    if (!(state instanceof OverlayStateManager)) {
      throw new TypeError("the reference executor runs on an OverlayStateManager");
    }
    const { vm, common } = await forkVm(fork, block.chainId);
    let b = blocks.get(block);
    if (b === undefined) {
      b = ethBlockOf(block, common);
      blocks.set(block, b);
    }
    forwarder.target = state;
    current = block;
    try {
      let etx: TypedTransaction;
      try {
        etx = withSender(ethTx(tx, common), tx.from);
      } catch (err) {
        if (err instanceof EngineTxError) throw err;
        throw new EngineTxError(`invalid transaction: ${(err as Error).message}`);
      }
      let r: Awaited<ReturnType<typeof runTx>>;
      try {
        r = await runTx(vm, { tx: etx, block: b, skipHardForkValidation: true });
      } catch (err) {
        throw new EngineTxError((err as Error).message);
      }
      const failed = r.execResult.exceptionError !== undefined;
      return {
        success: !failed,
        gasUsed: r.totalGasSpent,
        refund: r.gasRefund ?? 0n,
        returnData: r.execResult.returnValue,
        logs: failed ? [] : (r.execResult.logs ?? []).map(([address, topics, data]) => ({ address, topics, data })),
        error: vmErrorText(r.execResult.exceptionError?.error),
        createdAddress: r.createdAddress?.bytes,
      };
    } finally {
      forwarder.target = undefined;
      current = undefined;
    }
  };
}
