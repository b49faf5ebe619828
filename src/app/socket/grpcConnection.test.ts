import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Http2Server, type ServerHttp2Session } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pb from "cosmjs-types/tendermint/abci/types";
import { afterEach, describe, expect, test } from "vitest";
import { silentLogger } from "../../util/logger.js";
import type { AbciConnectionError } from "./errors.js";
import { AbciGrpcConnection, decodeGrpcMessage, encodeGrpcMessage } from "./grpcConnection.js";

/** An h2c server answering `tendermint.abci.ABCI` calls the way grpc-go does (status in trailers). */
type Handler = (method: string, body: Uint8Array) => { status: number; message?: string; body?: Uint8Array };

let dir: string;
let server: Http2Server | undefined;
const sessions: ServerHttp2Session[] = [];
const calls: { path: string; contentType: string | undefined }[] = [];
let handler: Handler;

function defaultHandler(method: string, body: Uint8Array): ReturnType<Handler> {
  if (method === "Echo") return { status: 0, body: pb.ResponseEcho.encode(pb.RequestEcho.decode(body)).finish() };
  if (method === "CheckTx") {
    const req = pb.RequestCheckTx.decode(body);
    return {
      status: 0,
      body: pb.ResponseCheckTx.encode(pb.ResponseCheckTx.fromPartial({ code: req.tx[0] ?? 0 })).finish(),
    };
  }
  return { status: 12, message: `unimplemented ${method}` };
}

async function start(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "cometh-grpc-"));
  handler = defaultHandler;
  calls.length = 0;
  const srv = createServer();
  server = srv;
  srv.on("session", (s) => sessions.push(s));
  srv.on("stream", (stream, headers) => {
    const path = String(headers[":path"]);
    calls.push({ path, contentType: headers["content-type"] as string | undefined });
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const msg = decodeGrpcMessage(new Uint8Array(Buffer.concat(chunks)));
      if (typeof msg === "string") throw new Error(msg);
      const res = handler(path.slice(path.lastIndexOf("/") + 1), msg);
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () =>
        stream.sendTrailers({
          "grpc-status": String(res.status),
          ...(res.message === undefined ? {} : { "grpc-message": encodeURIComponent(res.message) }),
        }),
      );
      stream.end(res.body === undefined ? undefined : encodeGrpcMessage(res.body));
    });
  });
  const path = join(dir, "grpc.sock");
  await new Promise<void>((resolve) => srv.listen(path, resolve));
  return path;
}

async function connect(
  path: string,
): Promise<{ conn: AbciGrpcConnection; errors: AbciConnectionError[]; failed: Promise<void> }> {
  const errors: AbciConnectionError[] = [];
  let onFailed: () => void = () => {};
  const failed = new Promise<void>((resolve) => {
    onFailed = resolve;
  });
  const conn = await AbciGrpcConnection.connect({
    name: "consensus",
    address: { protocol: "unix", path },
    log: silentLogger(),
    onError: (e) => {
      errors.push(e);
      onFailed();
    },
  });
  return { conn, errors, failed };
}

afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  const s = server;
  server = undefined;
  if (s === undefined) return;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe("gRPC message framing", () => {
  test("default: flag 0, big-endian length, the message", () => {
    expect(Buffer.from(encodeGrpcMessage(Uint8Array.of(0xaa, 0xbb))).toString("hex")).toBe("0000000002aabb");
    expect(decodeGrpcMessage(Uint8Array.of(0, 0, 0, 0, 2, 0xaa, 0xbb))).toEqual(Uint8Array.of(0xaa, 0xbb));
  });

  test("error: short, compressed, or not exactly one message", () => {
    expect(decodeGrpcMessage(Uint8Array.of(0, 0))).toBe("the answer has 2 bytes, less than a gRPC message header");
    expect(decodeGrpcMessage(Uint8Array.of(1, 0, 0, 0, 0))).toBe(
      "the answer is compressed (flag 1); the client asked for none",
    );
    expect(decodeGrpcMessage(Uint8Array.of(0, 0, 0, 0, 2, 1))).toBe(
      "the answer is 1 bytes after its header but declares 2 (one message expected)",
    );
  });
});

describe("ABCI gRPC connection", () => {
  test("default: connects with an Echo, then calls /tendermint.abci.ABCI/<Method>", async () => {
    const { conn } = await connect(await start());
    expect((await conn.request("checkTx", { tx: Uint8Array.of(7), type: 0 })).code).toBe(7);
    expect(await conn.echo("hi")).toBe("hi");
    expect(calls).toEqual([
      { path: "/tendermint.abci.ABCI/Echo", contentType: "application/grpc" },
      { path: "/tendermint.abci.ABCI/CheckTx", contentType: "application/grpc" },
      { path: "/tendermint.abci.ABCI/Echo", contentType: "application/grpc" },
    ]);
    conn.close();
  });

  test("error: a call answered with a gRPC error status stops the connection", async () => {
    const { conn, errors } = await connect(await start());
    handler = (method, body) =>
      method === "CheckTx" ? { status: 13, message: "app: boom" } : defaultHandler(method, body);
    await expect(conn.request("checkTx", { tx: Uint8Array.of(1), type: 0 })).rejects.toThrowErrorMatchingInlineSnapshot(
      `[AbciConnectionError: ABCI consensus connection: CheckTx: gRPC status 13: app: boom]`,
    );
    expect(errors).toHaveLength(1);
    await expect(conn.echo("later")).rejects.toBe(errors[0]);
  });

  test("error: the application closing the connection stops it", async () => {
    const { conn, errors, failed } = await connect(await start());
    for (const s of sessions) s.destroy();
    await failed;
    expect(errors[0]?.message).toMatch(
      /^ABCI consensus connection: the application (closed the connection|sent GOAWAY)/,
    );
    await expect(conn.echo("x")).rejects.toBe(errors[0]);
  });
});
