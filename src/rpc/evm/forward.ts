/**
 * Thrown by a service a read process (node/evm/readProcess.ts) does not have, or cannot answer as the
 * main process would (a block it does not find by hash): the payload is answered by the main
 * process instead (EvmPayloads.answerHere), so the client gets exactly the main process's answer.
 */
export class ForwardToMainError extends Error {
  constructor(what: string) {
    super(`${what} is answered by the main process`);
    this.name = "ForwardToMainError";
  }
}
