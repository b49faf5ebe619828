import { type ListenAddress, parseListenAddress } from "./listenAddress.js";

/** Built-in applications `proxy_app` can name; anything else is the address of an external ABCI app. */
export const PROXY_APPS = ["evm", "kvstore"] as const;
export type ProxyApp = (typeof PROXY_APPS)[number];

/** What `proxy_app` names: a built-in app run in process, or an external app's socket address. */
export type ProxyAppTarget =
  | { readonly kind: "builtin"; readonly name: ProxyApp }
  | {
      readonly kind: "socket";
      /** The address to dial: TCP (host and a port above 0) or a UNIX socket path. */
      readonly address: ListenAddress;
      /** As written in the config, for messages. */
      readonly text: string;
    };

/** CometBFT's other built-in apps (proxy.DefaultClientCreator), which cometh does not include. */
const COMETBFT_BUILTINS = new Set([
  "kvstore_connsync",
  "persistent_kvstore",
  "persistent_kvstore_connsync",
  "e2e",
  "e2e_connsync",
  "noop",
]);

const EXPECTED =
  'must be "evm", "kvstore", or the address of an external ABCI application such as ' +
  '"tcp://127.0.0.1:26658" or "unix:///path/to/app.sock"';

/**
 * Reads `proxy_app` as CometBFT does (proxy.DefaultClientCreator, cmtnet.ProtocolAndAddress): a
 * built-in app's name, or a dial address, "tcp://host:port", "unix:///path" or a bare "host:port"
 * (TCP). Returns a problem text naming the valid forms when it is neither.
 */
export function parseProxyApp(text: string): ProxyAppTarget | string {
  if ((PROXY_APPS as readonly string[]).includes(text)) return { kind: "builtin", name: text as ProxyApp };
  if (COMETBFT_BUILTINS.has(text)) {
    return `${EXPECTED}; got ${JSON.stringify(text)}, one of CometBFT's built-in apps that cometh does not include (run it as an external app, e.g. \`abci-cli kvstore\`)`;
  }
  if (!text.includes(":")) return `${EXPECTED}; got ${JSON.stringify(text)}`;
  const address = parseListenAddress(text);
  if (typeof address === "string") return `${EXPECTED}; got ${JSON.stringify(text)} (${address})`;
  if (address.protocol === "tcp" && address.port === 0) {
    return `${EXPECTED}; got ${JSON.stringify(text)} (port 0 cannot be dialled: give the port the application listens on)`;
  }
  return { kind: "socket", address, text };
}
