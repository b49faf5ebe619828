/**
 * A stand-in read process for readProcesses.test.ts: says it is ready, passes one request to the main
 * process with a sender hint, and sends back, as an error message, the answer it gets.
 */
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: ["0x02"] });
process.on("message", (m: { t?: string; a?: string }) => {
  if (m.t === "answer") process.send?.({ t: "error", error: `answer: ${m.a}` });
});
process.on("disconnect", () => process.exit(0));
process.send?.({ t: "ready" });
process.send?.({ t: "forward", r: 1, b: body, s: Date.now(), h: [["ab".repeat(32), "cd".repeat(20)]] });
