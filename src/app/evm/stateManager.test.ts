import { describe, expect, test } from "vitest";
import { MemoryStateReader } from "../../../test/evm/stateTests.js";
import { bytesToHex } from "../../util/bytes.js";
import { OverlayStateManager } from "./stateManager.js";

const A = new Uint8Array(20).fill(0xaa);

describe("OverlayStateManager storage words", () => {
  test("behavior: hasStorage counts only non-zero slots, whether a slot was read, written or zeroed as a number or a bigint", () => {
    const pre = new MemoryStateReader();
    pre.put(A, { nonce: 1n, balance: 0n, code: new Uint8Array([0x00]) });
    const state = new OverlayStateManager(pre);
    const key = bytesToHex(A);
    // An empty slot read into the working set (value 0) is not storage.
    expect(state.slotOf(A, key, 5).value).toBe(0);
    expect(state.hasStorage(A)).toBe(false);
    // A small value and a large one are.
    state.writeSlot(state.slotOf(A, key, 5), 7);
    expect(state.hasStorage(A)).toBe(true);
    state.writeSlot(state.slotOf(A, key, 5), 0);
    expect(state.hasStorage(A)).toBe(false);
    state.writeSlot(state.slotOf(A, key, 1n << 200n), 1n << 60n);
    expect(state.hasStorage(A)).toBe(true);
    // The bytes view agrees with the words.
    expect(bytesToHex(state.storage(A, new Uint8Array(32).fill(0, 0, 31).fill(5, 31)))).toBe("");
  });
});
