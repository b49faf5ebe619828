// A Hardhat 2 project without Solidity sources: the tests deploy test/data/erc20.json with ethers'
// ContractFactory, so `hardhat test` never downloads solc. The `cometh` network is a running
// `cometh dev` (test/integration/hardhat.test.ts starts one and passes its address in COMETH_RPC_URL).
require("@nomicfoundation/hardhat-ethers");

/** @type {import("hardhat/config").HardhatUserConfig} */
module.exports = {
  defaultNetwork: "cometh",
  networks: {
    cometh: {
      url: process.env.COMETH_RPC_URL ?? "http://127.0.0.1:8545",
      // "remote" (the default, spelled out): signers send eth_sendTransaction and the node signs with
      // its dev accounts. Local accounts (a mnemonic here) cannot send for an impersonated address:
      // Hardhat 2 refuses any `from` it has no key for (HH103) instead of passing it to the node.
      accounts: "remote",
      timeout: 60_000,
    },
  },
  mocha: { timeout: 60_000 },
};
