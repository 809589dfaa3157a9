// Interop check: a result file far bigger than one message, read through
// the official MCP TypeScript SDK client with its default limits. Over
// stdio the whole-file resources/read is refused (the session survives)
// and the file is read in ranges; over Streamable HTTP it is downloaded
// from its signed download_url, whole and by Range. Prints one JSON line
// {"stdio": {size, sha256}, "http": {size, sha256, ranged_sha256}} and
// "bigartifact: OK".
//
//   node interop/mcp-sdk/bigartifact.mjs --bin bin/quarry --data DIR --dataset ID [-- serve flags for stdio]

import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:net";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const arg = (name) => {
  const i = process.argv.indexOf(name);
  if (i < 0) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
};
const bin = path.resolve(arg("--bin"));
const data = path.resolve(arg("--data"));
const dataset = arg("--dataset");
const dash = process.argv.indexOf("--");
const extra = dash > 0 ? process.argv.slice(dash + 1) : [];
const maxMessage = extra.includes("--max-message-bytes") ? Number(extra[extra.indexOf("--max-message-bytes") + 1]) : 8 * 1024 * 1024;

setTimeout(() => {
  console.error("bigartifact: timed out after 180 s");
  process.exit(2);
}, 180_000).unref();

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert(!res.isError, `${name} failed: ${JSON.stringify(res.content).slice(0, 500)}`);
  return res.structuredContent;
}

const sha = (buf) => createHash("sha256").update(buf).digest("hex");

async function viaStdio() {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve", "--data", data, "--log-level", "warn", ...extra],
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "quarry-bigartifact", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  try {
    const res = await call(client, "query_data", { dataset, output_format: "csv" });
    assert(res.method === "file" && res.size_bytes > 40e6, `file result ${JSON.stringify(res).slice(0, 300)}`);
    const info = await call(client, "get_server_info", {});
    const limit = info.limits.resource_read_limit_bytes;
    assert(limit > 0 && (limit / 3) * 4 < maxMessage, `resource read limit ${limit} for messages of ${maxMessage}`);

    let refused = "";
    try {
      await client.readResource({ uri: res.resource_uri });
    } catch (e) {
      refused = String(e?.message ?? e);
    }
    assert(/oversize_result/.test(refused) && /offset=0/.test(refused), `whole read not refused with a range hint: ${refused}`);

    const parts = [];
    for (let off = 0; off < res.size_bytes; off += limit) {
      const r = await client.readResource({ uri: `${res.resource_uri}?offset=${off}&length=${limit}` });
      parts.push(Buffer.from(r.contents[0].blob, "base64"));
    }
    const all = Buffer.concat(parts);
    assert(all.length === res.size_bytes, `ranges gave ${all.length} bytes of ${res.size_bytes}`);
    // The session is still usable.
    await call(client, "get_catalog", {});
    return { size: all.length, sha256: sha(all), uri: res.resource_uri };
  } finally {
    await client.close();
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function viaHTTP() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const token = randomBytes(24).toString("hex");
  const child = spawn(bin, ["serve", "--transport", "http", "--addr", `127.0.0.1:${port}`, "--data", data, "--log-level", "warn"], {
    env: { ...process.env, QUARRY_AUTH_TOKENS: token },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      assert(Date.now() < deadline && child.exitCode === null, "server did not start");
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const client = new Client({ name: "quarry-bigartifact", version: "1.0.0" }, { capabilities: {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const res = await call(client, "query_data", { dataset, output_format: "csv" });
      assert(res.download_url && res.download_url.startsWith(`${base}/artifacts/`), `download_url ${res.download_url}`);
      const whole = Buffer.from(await (await fetch(res.download_url)).arrayBuffer());
      assert(whole.length === res.size_bytes, `download gave ${whole.length} bytes of ${res.size_bytes}`);
      const half = Math.floor(res.size_bytes / 2);
      const a = await fetch(res.download_url, { headers: { Range: `bytes=0-${half - 1}` } });
      const b = await fetch(res.download_url, { headers: { Range: `bytes=${half}-` } });
      assert(a.status === 206 && b.status === 206, `range status ${a.status} ${b.status}`);
      const ranged = Buffer.concat([Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())]);
      return { size: whole.length, sha256: sha(whole), ranged_sha256: sha(ranged) };
    } finally {
      await client.close();
    }
  } finally {
    child.kill("SIGTERM");
  }
}

const stdio = await viaStdio();
const http = await viaHTTP();
console.log(JSON.stringify({ stdio, http }));
console.log("bigartifact: OK");
