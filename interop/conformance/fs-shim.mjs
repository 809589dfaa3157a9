// node:fs plus a globSync that refuses (Node 20 has none); see node20.mjs.
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node.js 22 (only the tier-check command uses it)');
}
