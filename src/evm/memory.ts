/**
 * A frame's memory: one growable Uint8Array. `size` is the active size the EVM sees (MSIZE, always a
 * multiple of 32); the buffer's capacity grows by doubling so expansion is amortised. Bytes past
 * `size` are kept zero, which makes growing a matter of moving `size`.
 */
export class Memory {
  buf: Uint8Array;
  /** A DataView of `buf` (MLOAD and MSTORE read and write words through it). */
  dv: DataView;
  size = 0;

  constructor(capacity = 4096) {
    this.buf = new Uint8Array(capacity);
    this.dv = new DataView(this.buf.buffer);
  }

  /** Makes `newSize` bytes (a multiple of 32, ≥ size) active. */
  grow(newSize: number): void {
    if (newSize <= this.size) return;
    if (newSize > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < newSize) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.buf.subarray(0, this.size));
      this.buf = next;
      this.dv = new DataView(next.buffer);
    }
    this.size = newSize;
  }

  /** A copy of `length` bytes at `offset` (within the active size). */
  read(offset: number, length: number): Uint8Array {
    return this.buf.slice(offset, offset + length);
  }

  /** A view of `length` bytes at `offset`: valid until the memory grows or is written. */
  view(offset: number, length: number): Uint8Array {
    return this.buf.subarray(offset, offset + length);
  }

  /**
   * Writes `length` bytes at `offset` from `data` starting at `dataOffset`; bytes past the end of
   * `data` are written as zeros (CALLDATACOPY, CODECOPY, EXTCODECOPY semantics).
   */
  writePadded(offset: number, length: number, data: Uint8Array, dataOffset: number): void {
    if (length === 0) return;
    const avail = dataOffset >= data.length ? 0 : Math.min(length, data.length - dataOffset);
    if (avail > 0) this.buf.set(data.subarray(dataOffset, dataOffset + avail), offset);
    if (avail < length) this.buf.fill(0, offset + avail, offset + length);
  }

  /** MCOPY: overlapping copy within memory. */
  copyWithin(dst: number, src: number, length: number): void {
    if (length > 0) this.buf.copyWithin(dst, src, src + length);
  }

  /** Clears the memory for reuse by another frame. */
  reset(): void {
    this.buf.fill(0, 0, this.size);
    this.size = 0;
  }
}
