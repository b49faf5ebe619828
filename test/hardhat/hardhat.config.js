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
      // The dev accounts of `cometh dev` (and Hardhat and Anvil): Hardhat signs locally and sends raw txs.
      accounts: { mnemonic: "test test test test test test test test test test test junk", count: 10 },
      timeout: 60_000,
    },
  },
  mocha: { timeout: 60_000 },
};
