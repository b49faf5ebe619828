import { createServer, type Server, type Socket } from "node:net";
import { Request as PbRequest, Response as PbResponse } from "cosmjs-types/tendermint/abci/types";
import { encodeFrame, FrameDecoder } from "./codec.js";

// Tests only: an ABCI socket server in process, to drive the client without Go's binaries.

/** A custom answer (`conn`: the connection's accept order, from 0), or undefined for the default one. */
export type Answer = (req: PbRequest, kind: string, conn: number) => PbResponse | "close" | "hold" | undefined;

/** What Go's abci/server/socket_server.go does: answers buffered until a Flush, then written with its answer. */
export class FakeAbciServer {
  readonly server: Server;
  /** Request kinds in the order received, per connection. */
  readonly received: string[][] = [];
  /** The requests received, per connection. */
  readonly requests: PbRequest[][] = [];
  /** The accepted sockets, in order. */
  readonly sockets: Socket[] = [];
  answer: Answer = () => undefined;

  constructor() {
    this.server = createServer((socket) => {
      const log: string[] = [];
      const requests: PbRequest[] = [];
      const conn = this.received.length;
      this.received.push(log);
      this.requests.push(requests);
      this.sockets.push(socket);
      const decoder = new FrameDecoder();
      let buffered: Uint8Array[] = [];
      socket.on("error", () => {});
      socket.on("data", (chunk: Buffer) => {
        for (const body of decoder.push(chunk)) {
          const req = PbRequest.decode(body);
          const kind = Object.keys(req).find((k) => req[k as keyof PbRequest] !== undefined) ?? "?";
          log.push(kind);
          requests.push(req);
          const custom = this.answer(req, kind, conn);
          if (custom === "close") {
            socket.destroy();
            return;
          }
          if (custom === "hold") continue;
          const res = custom ?? defaultAnswer(req, kind);
          buffered.push(encodeFrame(PbResponse.encode(res).finish()));
          if (kind === "flush") {
            socket.write(Buffer.concat(buffered));
            buffered = [];
          }
        }
      });
    });
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve) => this.server.listen(path, resolve));
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function defaultAnswer(req: PbRequest, kind: string): PbResponse {
  switch (kind) {
    case "echo":
      return { echo: { message: req.echo?.message ?? "" } };
    case "flush":
      return { flush: {} };
    case "checkTx":
      return {
        checkTx: {
          code: req.checkTx?.tx[0] ?? 0,
          data: new Uint8Array(0),
          log: "",
          info: "",
          gasWanted: 0n,
          gasUsed: 0n,
          events: [],
          codespace: "",
        },
      };
    default:
      return { exception: { error: `no answer for ${kind}` } };
  }
}
