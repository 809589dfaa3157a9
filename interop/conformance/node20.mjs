// Lets the conformance CLI start on Node.js 20: it imports fs.globSync (Node 22+)
// for its tier-check command only. Resolving `fs` for the suite to fs-shim.mjs
// adds a globSync that throws; every server scenario runs as published.
// Usage: node --import ./node20.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js ...
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  register('./node20-hooks.mjs', import.meta.url);
}
