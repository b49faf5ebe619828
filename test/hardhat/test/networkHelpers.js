// A Hardhat user's test suite against `cometh dev`: @nomicfoundation/hardhat-network-helpers (which
// accept the node because web3_clientVersion starts with "anvil/") on the repo's compile-free ERC-20
// (test/data/erc20.json: OpenZeppelin v4 storage layout, 1e24 minted to the deployer).
const { expect } = require("chai");
const { ethers, network } = require("hardhat");
const helpers = require("@nomicfoundation/hardhat-network-helpers");
const ERC20 = require("../../data/erc20.json");

const { loadFixture, mine, time, takeSnapshot } = helpers;
const SUPPLY = 10n ** 24n;
const MNEMONIC = "test test test test test test test test test test test junk";
/** An address that holds tokens but whose key nobody has (Hardhat and Anvil docs use such "whales"). */
const WHALE = ethers.getAddress("0x00000000000000000000000000000000000fa11e");

let fixtureRuns = 0;

/** Deploys the ERC-20 and makes a few transfers; loadFixture snapshots the chain after it. */
async function deployTokenFixture() {
  fixtureRuns += 1;
  const [owner, alice, bob] = await ethers.getSigners();
  const factory = new ethers.ContractFactory(ERC20.abi, ERC20.bytecode, owner);
  const token = await factory.deploy();
  await token.waitForDeployment();
  await (await token.transfer(alice.address, 1_000n)).wait();
  await (await token.transfer(bob.address, 500n)).wait();
  await (await token.transfer(WHALE, 250n)).wait();
  const blockNumber = await ethers.provider.getBlockNumber();
  return { token, owner, alice, bob, blockNumber };
}

/** The error a promise rejects with, or undefined when it resolves (chai 4 has no rejects without a plugin). */
async function rejection(promise) {
  try {
    await promise;
    return undefined;
  } catch (err) {
    return err;
  }
}

/** The storage slot of `balances[account]` (OpenZeppelin v4: the mapping sits at slot 0). */
function balanceSlot(account) {
  return ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [account, 0n]));
}

describe("cometh dev with hardhat-network-helpers", () => {
  it("answers as an Anvil-compatible development network", async () => {
    const version = await network.provider.request({ method: "web3_clientVersion" });
    // cometh dev answers "anvil/vX.Y.Z (cometh/vA.B.C)"; the suite also passes against Anvil itself.
    expect(version).to.match(/^anvil\/v\d+\.\d+\.\d+( \(cometh\/v\d+\.\d+\.\d+\))?$/);
    // Automine: a sent tx is mined in its own block by the time the send returns, whether the node
    // signs it (eth_sendTransaction from a Hardhat signer) or the client does (eth_sendRawTransaction).
    const [, , , carol] = await ethers.getSigners();
    const dave = ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/4").connect(ethers.provider);
    const before = await ethers.provider.getBlockNumber();
    for (const [i, [method, from]] of [
      ["eth_sendTransaction", carol],
      ["eth_sendRawTransaction", dave],
    ].entries()) {
      const tx = await from.sendTransaction({ to: ethers.Wallet.createRandom().address, value: 1n });
      const receipt = await ethers.provider.getTransactionReceipt(tx.hash);
      expect(receipt, `receipt right after ${method}`).to.not.equal(null);
      expect(receipt.status).to.equal(1);
      expect(receipt.blockNumber).to.equal(before + i + 1);
    }
    expect(await ethers.provider.getBlockNumber()).to.equal(before + 2);
  });

  it("loadFixture: deploys the token and makes the transfers", async () => {
    const { token, owner, alice, bob } = await loadFixture(deployTokenFixture);
    expect(await token.name()).to.equal("Cometh Test Token");
    expect(await token.totalSupply()).to.equal(SUPPLY);
    expect(await token.balanceOf(owner.address)).to.equal(SUPPLY - 1_750n);
    expect(await token.balanceOf(alice.address)).to.equal(1_000n);
    expect(await token.balanceOf(bob.address)).to.equal(500n);
    expect(await token.balanceOf(WHALE)).to.equal(250n);
  });

  it("loadFixture: a test changes the state", async () => {
    const { token, alice, bob } = await loadFixture(deployTokenFixture);
    await (await token.connect(alice).transfer(bob.address, 100n)).wait();
    await mine(3);
    expect(await token.balanceOf(alice.address)).to.equal(900n);
    expect(await token.balanceOf(bob.address)).to.equal(600n);
  });

  it("loadFixture: the next test starts from the fixture's snapshot again", async () => {
    const { token, alice, bob, blockNumber } = await loadFixture(deployTokenFixture);
    expect(fixtureRuns, "the fixture ran once; later calls revert to its snapshot").to.equal(1);
    expect(await ethers.provider.getBlockNumber()).to.equal(blockNumber);
    expect(await ethers.provider.getCode(await token.getAddress())).to.equal(ERC20.deployedBytecode);
    expect(await token.balanceOf(alice.address)).to.equal(1_000n);
    expect(await token.balanceOf(bob.address)).to.equal(500n);
    // The reverted chain accepts new txs from the accounts whose nonces the revert rolled back.
    await (await token.connect(alice).transfer(bob.address, 1n)).wait();
    expect(await token.balanceOf(bob.address)).to.equal(501n);
    expect(await ethers.provider.getBlockNumber()).to.equal(blockNumber + 1);
  });

  it("mine: moves the block number by exactly the count, with the interval between timestamps", async () => {
    await loadFixture(deployTokenFixture);
    const start = await ethers.provider.getBlockNumber();
    await mine();
    expect(await ethers.provider.getBlockNumber()).to.equal(start + 1);
    await mine(10);
    expect(await ethers.provider.getBlockNumber()).to.equal(start + 11);
    await mine(100);
    expect(await ethers.provider.getBlockNumber()).to.equal(start + 111);
    await mine(4, { interval: 3_600 });
    const end = start + 115;
    expect(await ethers.provider.getBlockNumber()).to.equal(end);
    const stamps = [];
    for (let n = end - 3; n <= end; n++) stamps.push((await ethers.provider.getBlock(n)).timestamp);
    expect(stamps.slice(1).map((t, i) => t - stamps[i])).to.deep.equal([3_600, 3_600, 3_600]);
  });

  it("time.increase and time.increaseTo: the next blocks carry the asked timestamps", async () => {
    const { token, alice, bob } = await loadFixture(deployTokenFixture);
    const t0 = await time.latest();
    const n0 = await ethers.provider.getBlockNumber();
    const t1 = await time.increase(3_600);
    expect(t1).to.equal(t0 + 3_600);
    expect(await ethers.provider.getBlockNumber()).to.equal(n0 + 1);

    const target = t1 + time.duration.days(30);
    await time.increaseTo(target);
    expect(await time.latest()).to.equal(target);
    expect(await ethers.provider.getBlockNumber()).to.equal(n0 + 2);

    // Blocks mined after the jump keep going on from there (Anvil may repeat the timestamp; cometh, whose
    // CometBFT block times strictly increase, and Hardhat move on by at least a second).
    const receipt = await (await token.connect(alice).transfer(bob.address, 5n)).wait();
    const block = await ethers.provider.getBlock(receipt.blockNumber);
    expect(block.timestamp).to.be.at.least(target);
    expect(block.timestamp).to.be.lessThan(target + 60);

    // A timestamp in the past is refused.
    expect(await rejection(time.increaseTo(target - 10)), "evm_setNextBlockTimestamp in the past").to.be.an("error");
  });

  it("impersonateAccount + setBalance: a keyless token holder sends a transfer", async () => {
    const { token, bob } = await loadFixture(deployTokenFixture);
    expect(await ethers.provider.getBalance(WHALE)).to.equal(0n);
    await helpers.setBalance(WHALE, ethers.parseEther("1"));
    expect(await ethers.provider.getBalance(WHALE)).to.equal(ethers.parseEther("1"));

    await helpers.impersonateAccount(WHALE);
    const whale = await ethers.getSigner(WHALE);
    const receipt = await (await token.connect(whale).transfer(bob.address, 100n)).wait();
    expect(receipt.status).to.equal(1);
    expect(receipt.from.toLowerCase()).to.equal(WHALE.toLowerCase());
    expect(await token.balanceOf(WHALE)).to.equal(150n);
    expect(await token.balanceOf(bob.address)).to.equal(600n);
    expect(await ethers.provider.getTransactionCount(WHALE)).to.equal(1);
    expect((await ethers.provider.getBalance(WHALE)) < ethers.parseEther("1"), "the whale paid for gas").to.equal(true);

    // hardhat-ethers' own way (hardhat_impersonateAccount, then a signer sending eth_sendTransaction).
    const again = await ethers.getImpersonatedSigner(WHALE);
    await (await token.connect(again).transfer(bob.address, 50n)).wait();
    expect(await token.balanceOf(WHALE)).to.equal(100n);

    // Once impersonation stops, the node refuses to send for that address.
    await helpers.stopImpersonatingAccount(WHALE);
    const refused = await rejection(token.connect(whale).transfer(bob.address, 1n));
    expect(refused, "eth_sendTransaction from an address no longer impersonated").to.be.an("error");
    expect(await token.balanceOf(WHALE)).to.equal(100n);
  });

  it("takeSnapshot().restore(): undoes blocks, balances and cheats, and can be restored twice", async () => {
    const { token, alice, bob } = await loadFixture(deployTokenFixture);
    const snapshot = await takeSnapshot();
    const n0 = await ethers.provider.getBlockNumber();
    const eth0 = await ethers.provider.getBalance(alice.address);

    await (await token.connect(alice).transfer(bob.address, 400n)).wait();
    await mine(5);
    await helpers.setBalance(bob.address, 123n);
    expect(await token.balanceOf(alice.address)).to.equal(600n);
    expect(await ethers.provider.getBalance(bob.address)).to.equal(123n);

    await snapshot.restore();
    expect(await ethers.provider.getBlockNumber()).to.equal(n0);
    expect(await token.balanceOf(alice.address)).to.equal(1_000n);
    expect(await ethers.provider.getBalance(alice.address)).to.equal(eth0);
    expect((await ethers.provider.getBalance(bob.address)) > 123n, "bob's balance is back").to.equal(true);

    await (await token.connect(alice).transfer(bob.address, 10n)).wait();
    expect(await token.balanceOf(alice.address)).to.equal(990n);
    await snapshot.restore();
    expect(await token.balanceOf(alice.address)).to.equal(1_000n);
    expect(await ethers.provider.getBlockNumber()).to.equal(n0);
  });

  it("setCode + setStorageAt: the token's runtime code at a new address, its storage written directly", async () => {
    const { alice } = await loadFixture(deployTokenFixture);
    const where = ethers.getAddress("0x00000000000000000000000000000000c0ffee00");
    await helpers.setCode(where, ERC20.deployedBytecode);
    expect(await ethers.provider.getCode(where)).to.equal(ERC20.deployedBytecode);
    const token = new ethers.Contract(where, ERC20.abi, alice);
    expect(await token.symbol()).to.equal("CMT");
    expect(await token.totalSupply()).to.equal(0n);

    await helpers.setStorageAt(where, 2, 777n); // totalSupply
    await helpers.setStorageAt(where, balanceSlot(alice.address), ethers.toBeHex(777n, 32));
    expect(await token.totalSupply()).to.equal(777n);
    expect(await token.balanceOf(alice.address)).to.equal(777n);
    expect(BigInt(await helpers.getStorageAt(where, 2))).to.equal(777n);

    // The planted balance is spendable by a real transfer.
    await (await token.transfer(WHALE, 77n)).wait();
    expect(await token.balanceOf(alice.address)).to.equal(700n);
    expect(await token.balanceOf(WHALE)).to.equal(77n);
  });

  it("setNonce: the next tx and contract address follow the set nonce", async () => {
    await loadFixture(deployTokenFixture);
    const wallet = ethers.Wallet.createRandom().connect(ethers.provider);
    await helpers.setBalance(wallet.address, ethers.parseEther("10"));
    await helpers.setNonce(wallet.address, 42);
    expect(await ethers.provider.getTransactionCount(wallet.address)).to.equal(42);

    const token = await new ethers.ContractFactory(ERC20.abi, ERC20.bytecode, wallet).deploy();
    await token.waitForDeployment();
    expect(token.deploymentTransaction().nonce).to.equal(42);
    expect(await token.getAddress()).to.equal(ethers.getCreateAddress({ from: wallet.address, nonce: 42 }));
    expect(await token.balanceOf(wallet.address)).to.equal(SUPPLY);
    expect(await ethers.provider.getTransactionCount(wallet.address)).to.equal(43);
  });
});
