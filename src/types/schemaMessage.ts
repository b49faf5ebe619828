import protobuf from "protobufjs";

/**
 * One message type of a CometBFT .proto package that cosmjs-types does not generate (consensus,
 * mempool, blocksync, the p2p PEX messages), read through protobufjs reflection from the schema
 * text the caller copies from the .proto. `encode` gives a plain Uint8Array view; `decode` turns
 * protobufjs' wire errors into the caller's error, which names the package and what to do.
 * The schema is parsed on first use, not when the module defining the message loads (start-up time,
 * docs/dev-chain.md "Start-up").
 */
export class SchemaMessage<Decoded> {
  readonly #schema: string;
  readonly #typeName: string;
  #parsed: protobuf.Type | undefined;

  constructor(schema: string, typeName: string) {
    this.#schema = schema;
    this.#typeName = typeName;
  }

  get #type(): protobuf.Type {
    this.#parsed ??= protobuf.parse(this.#schema).root.lookupType(this.#typeName);
    return this.#parsed;
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
