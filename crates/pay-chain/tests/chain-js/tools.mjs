// The tests' independent EVM client: viem (not this project's code) deploys the committed test
// contracts, sends payments from anvil's funded development accounts, sets the price feed and
// derives addresses from an xpub with viem's HDKey. One command per run; the answer is one
// JSON line on stdout.
//   node tools.mjs <command> '<json arguments>'     (RPC_URL: the anvil node)
import fs from 'node:fs';
import { createPublicClient, createWalletClient, http, defineChain, parseAbi } from 'viem';
import { mnemonicToAccount, HDKey, publicKeyToAddress } from 'viem/accounts';
import { bytesToHex } from 'viem';
import { secp256k1 } from '@noble/curves/secp256k1';
import { mnemonicToSeedSync } from '@scure/bip39';

const MNEMONIC = 'test test test test test test test test test test test junk';
const [command, rawArgs] = process.argv.slice(2);
const args = rawArgs ? JSON.parse(rawArgs) : {};
const compiled = JSON.parse(
  fs.readFileSync(new URL('./contracts/compiled.json', import.meta.url), 'utf8'),
);

function clients() {
  const url = process.env.RPC_URL;
  const chain = defineChain({
    id: Number(process.env.CHAIN_ID || 31337),
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  // The sender: child `from` of account `account` (m/44'/60'/<account>'/0/<from>), so a test
  // can also sweep a deposit address with the merchant's own key.
  const account = mnemonicToAccount(MNEMONIC, {
    accountIndex: args.account ?? 0,
    addressIndex: args.from ?? 0,
  });
  const transport = http(url);
  return {
    pub: createPublicClient({ chain, transport }),
    wallet: createWalletClient({ chain, transport, account }),
    account,
  };
}

async function deploy(name, constructorArgs) {
  const { pub, wallet } = clients();
  const { abi, bytecode } = compiled[name];
  const hash = await wallet.deployContract({ abi, bytecode, args: constructorArgs });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  return receipt.contractAddress;
}

// Sends and waits for the receipt only when the node mines on its own (`wait: true`);
// with mining off the transaction sits in the pool until the test mines.
async function sent(hash) {
  if (!args.wait) return { txHash: hash };
  const { pub } = clients();
  const r = await pub.waitForTransactionReceipt({ hash });
  return { txHash: hash, blockNumber: Number(r.blockNumber), status: r.status };
}

const commands = {
  async deploy() {
    const token = await deploy('TestToken', [
      args.name ?? 'Test USD',
      args.symbol ?? 'TUSD',
      args.decimals ?? 6,
      BigInt(args.supply ?? '1000000000000000'),
    ]);
    const feed = await deploy('TestAggregator', [8, BigInt(args.answer ?? '250000000000')]);
    const forwarder = await deploy('TestForwarder', []);
    return { token, feed, forwarder };
  },
  async sendEth() {
    const { wallet } = clients();
    return sent(await wallet.sendTransaction({ to: args.to, value: BigInt(args.value) }));
  },
  async sendToken() {
    const { wallet } = clients();
    const hash = await wallet.writeContract({
      address: args.token,
      abi: compiled.TestToken.abi,
      functionName: 'transfer',
      args: [args.to, BigInt(args.units)],
    });
    return sent(hash);
  },
  async forwardEth() {
    const { wallet } = clients();
    const hash = await wallet.writeContract({
      address: args.forwarder,
      abi: compiled.TestForwarder.abi,
      functionName: 'forward',
      args: [args.to],
      value: BigInt(args.value),
    });
    return sent(hash);
  },
  async setPrice() {
    const { wallet } = clients();
    const hash = await wallet.writeContract({
      address: args.feed,
      abi: compiled.TestAggregator.abi,
      functionName: 'set',
      args: [BigInt(args.answer), BigInt(args.updatedAt)],
    });
    return sent(hash);
  },
  async balance() {
    const { pub } = clients();
    return { wei: (await pub.getBalance({ address: args.address })).toString() };
  },
  async tokenBalance() {
    const { pub } = clients();
    const units = await pub.readContract({
      address: args.token,
      abi: parseAbi(['function balanceOf(address) view returns (uint256)']),
      functionName: 'balanceOf',
      args: [args.address],
    });
    return { units: units.toString() };
  },
  // The account key m/44'/60'/<account>' of the development mnemonic.
  async xpub() {
    const root = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
    const account = root.derive(`m/44'/60'/${args.account ?? 0}'`);
    return { xpub: account.publicExtendedKey };
  },
  // Addresses of the children 0/<i> of an xpub, by viem's HDKey.
  async derive() {
    const key = HDKey.fromExtendedKey(args.xpub);
    // HDKey gives the compressed point; an address hashes the uncompressed one.
    const addresses = args.indices.map((i) => {
      const point = secp256k1.ProjectivePoint.fromHex(key.derive(`m/0/${i}`).publicKey);
      return publicKeyToAddress(bytesToHex(point.toRawBytes(false)));
    });
    return { addresses };
  },
};

const run = commands[command];
if (!run) {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
try {
  console.log(JSON.stringify(await run()));
} catch (e) {
  console.error(e?.shortMessage ?? e?.message ?? String(e));
  process.exit(1);
}
