import protobuf from "protobufjs";

/**
 * One message type of a CometBFT .proto package that cosmjs-types does not generate (consensus,
 * mempool, blocksync, the p2p PEX messages), read through protobufjs reflection from the schema
 * text the caller copies from the .proto. `encode` gives a plain Uint8Array view; `decode` turns
 * protobufjs' wire errors into the caller's error, which names the package and what to do.
 */
export class SchemaMessage<Decoded> {
  readonly #type: protobuf.Type;

  constructor(schema: string, typeName: string) {
    this.#type = protobuf.parse(schema).root.lookupType(typeName);
  }

  encode(value: object): Uint8Array {
    const b = this.#type.encode(value).finish();
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  /** The decoded message (protobufjs shapes: int64 as number or Long, bytes as Buffer, unset fields at their defaults). */
  decode(bytes: Uint8Array, corrupt: (err: Error) => Error): Decoded {
    try {
      return this.#type.decode(bytes) as unknown as Decoded;
    } catch (err) {
      throw corrupt(err as Error);
    }
  }
}
