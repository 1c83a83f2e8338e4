#!/usr/bin/env node
// Headless kernel runner: runs one real WGSL kernel in headless Chromium (WebGPU; SwiftShader
// on machines without a GPU) on a JSON request read from stdin, prints the JSON result.
//
//   echo '{"logits":[[0,1,2]],"tokens":[2]}' | node scripts/kernel.mjs logprobs
//
// NAME is logprobs, group_advantage, policy_loss or distill; the fields are listed in README.md.
// Invalid input: one line on stderr naming the field, exit status 2. Other failures: exit 1.
import { openHarness } from './lib/browser.mjs';

const KERNELS = ['logprobs', 'group_advantage', 'policy_loss', 'distill'];

function fail(message, code) {
  process.stderr.write(`kernel: ${message.split('\n')[0]}\n`);
  process.exit(code);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const name = process.argv[2];
if (!name || name === '--help' || name === '-h') {
  process.stdout.write(`usage: node scripts/kernel.mjs NAME < request.json\nNAME: ${KERNELS.join(', ')}\n`);
  process.exit(name ? 0 : 2);
}
if (!KERNELS.includes(name)) fail(`unknown kernel "${name}" (known: ${KERNELS.join(', ')})`, 2);

let request;
try {
  request = JSON.parse(await readStdin());
} catch (err) {
  fail(`stdin is not valid JSON (${err.message})`, 2);
}

let harness;
try {
  harness = await openHarness();
} catch (err) {
  fail(err.message, 1);
}
try {
  const result = await harness.run(name, request);
  process.stdout.write(JSON.stringify(result) + '\n');
} catch (err) {
  // page.evaluate prefixes its own words; keep the kernel's message.
  const message = String(err.message).replace(/^page\.evaluate: (Error|RangeError|KernelRequestError): /, '');
  const invalid = /^[A-Za-z_][\w.\[\]]*: /.test(message) || err.message.includes('KernelRequestError');
  await harness.close();
  fail(message, invalid ? 2 : 1);
}
await harness.close();
