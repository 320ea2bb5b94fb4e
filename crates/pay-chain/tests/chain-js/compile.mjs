// Compiles contracts/*.sol with the npm `solc` into contracts/compiled.json (ABI and
// bytecode), which is committed: the tests deploy that bytecode without compiling.
// Run: node compile.mjs
import fs from 'node:fs';
import solc from 'solc';

const names = ['TestToken', 'TestAggregator', 'TestForwarder'];
const sources = Object.fromEntries(
  names.map((n) => [`${n}.sol`, { content: fs.readFileSync(`contracts/${n}.sol`, 'utf8') }]),
);
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join('\n'));
  process.exit(1);
}
const compiled = { solc: solc.version() };
for (const n of names) {
  const c = out.contracts[`${n}.sol`][n];
  compiled[n] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}
fs.writeFileSync('contracts/compiled.json', `${JSON.stringify(compiled, null, 1)}\n`);
console.log(`compiled ${names.join(', ')} with solc ${compiled.solc}`);
