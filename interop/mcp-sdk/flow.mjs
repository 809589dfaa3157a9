// Interop check: Quarry's query flow driven by the official MCP TypeScript
// SDK client, over stdio (spawning the binary) and over Streamable HTTP
// (spawning `quarry serve --transport http` on a free loopback port, with a
// bearer token). Exits non-zero on the first failed assertion.
//
//   npm ci --prefix interop/mcp-sdk
//   node interop/mcp-sdk/flow.mjs --bin bin/quarry    (or QUARRY_BIN=...)

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const argBin = process.argv.indexOf("--bin");
const bin = path.resolve(
  argBin > 0 ? process.argv[argBin + 1] : process.env.QUARRY_BIN || path.join(here, "..", "..", "bin", "quarry"),
);
const DATASET = "sensors/readings";

// Never hang: the whole run is bounded.
setTimeout(() => {
  console.error("interop: timed out after 120 s");
  process.exit(2);
}, 120_000).unref();

class AssertionError extends Error {}

function assert(cond, msg) {
  if (!cond) throw new AssertionError(msg);
}

function newClient() {
  return new Client({ name: "quarry-interop", version: "1.0.0" }, { capabilities: {} });
}

// call runs a tool that must succeed and returns its structured result.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  if (res.structuredContent) return res.structuredContent;
  return JSON.parse(res.content.find((c) => c.type === "text").text);
}

// runFlow is catalog -> schema -> estimate -> query -> page -> artifact.
async function runFlow(client, label) {
  const log = (msg) => console.log(`[${label}] ${msg}`);

  const { tools } = await client.listTools();
  const names = new Set(tools.map((t) => t.name));
  for (const n of ["get_catalog", "get_schema", "estimate_query", "query_data", "query_next_page"]) {
    assert(names.has(n), `tool ${n} missing from tools/list`);
  }
  log(`tools/list: ${tools.length} tools`);

  // tools/list stays small (shared $defs, short descriptions, no output
  // schemas), and it plus the query_examples prompt is all a client needs:
  // every example call runs as written.
  const listBytes = Buffer.byteLength(JSON.stringify({ tools }));
  assert(listBytes < 16 * 1024, `tools/list is ${listBytes} bytes, want < 16 KB (e2e/toolslist_test.go: toolsListBudget)`);
  const prompt = await client.getPrompt({ name: "query_examples", arguments: {} });
  const text = prompt.messages.map((m) => m.content.text || "").join("\n");
  const examples = [...text.matchAll(/^\s+([a-z_]+) (\{.*\})$/gm)];
  assert(examples.length >= 3, `query_examples has ${examples.length} calls:\n${text}`);
  for (const [, tool, args] of examples) {
    assert(names.has(tool), `example tool ${tool} not in tools/list`);
    await call(client, tool, JSON.parse(args));
  }
  log(`tools/list: ${listBytes} bytes; ${examples.length} query_examples calls ran as written`);

  const cat = await call(client, "get_catalog", {});
  const ds = cat.datasets.find((d) => d.id === DATASET);
  assert(ds && ds.row_count === 100000 && ds.row_count_exact, `catalog entry ${JSON.stringify(ds)}`);
  assert(cat.total === cat.datasets.length, "catalog total");
  log(`catalog: ${cat.total} datasets`);

  const schema = await call(client, "get_schema", { dataset: DATASET });
  assert(schema.columns[0].name === "id" && schema.columns[0].type === "int64", `schema ${JSON.stringify(schema.columns[0])}`);
  assert(schema.shape[0] === 100000 && schema.sample_rows.length > 0, "schema shape/sample");
  const card = await client.readResource({ uri: schema.schema_uri });
  assert(JSON.parse(card.contents[0].text).dataset === DATASET, "schema resource");
  log(`schema: ${schema.columns.length} columns, resource ${schema.schema_uri}`);

  const est = await call(client, "estimate_query", {
    dataset: DATASET,
    group_by: ["sensor"],
    aggs: [{ col: "*", fn: "count" }, { col: "value", fn: "avg" }],
  });
  assert(est.row_estimate > 0 && est.plan && est.preview.length > 0, `estimate ${JSON.stringify(est)}`);
  log(`estimate: ${est.row_estimate} rows (${est.estimate_kind})`);

  const direct = await call(client, "query_data", {
    dataset: DATASET,
    columns: ["id", "value"],
    filters: [{ col: "id", op: "lte", value: 10 }],
    order_by: [{ col: "id", desc: true }],
  });
  assert(direct.method === "direct" && direct.row_count === 10 && direct.total_rows === 10 && !direct.truncated, "direct result");
  assert(direct.data[0].id === 10, `first row ${JSON.stringify(direct.data[0])}`);
  log("query: 10 rows inline");

  const first = await call(client, "query_data", { dataset: DATASET, columns: ["id"] });
  assert(first.method === "handle" && first.total_rows === 100000 && first.truncated && first.page_info.has_more, "handle result");
  const seen = new Set(first.data.map((r) => r.id));
  let page = first;
  for (let i = 0; i < 3; i++) {
    const next = await call(client, "query_next_page", {
      result_handle: first.result_handle,
      page_token: page.page_info.page_token,
    });
    assert(next.page_info.offset === page.page_info.offset + page.page_info.size, `page ${i + 1} offset`);
    for (const r of next.data) {
      assert(!seen.has(r.id), `id ${r.id} delivered twice`);
      seen.add(r.id);
    }
    page = next;
  }
  assert(seen.size === first.row_count + 3 * page.row_count, "paged ids");
  log(`pages: ${seen.size} distinct ids over 4 pages`);

  const fileRes = await client.callTool({ name: "query_data", arguments: { dataset: DATASET, output_format: "parquet" } });
  assert(!fileRes.isError, "parquet query failed");
  const file = fileRes.structuredContent;
  assert(file.method === "file" && file.row_count === 100000 && file.resource_uri, `file result ${JSON.stringify(file)}`);
  assert(
    fileRes.content.some((c) => c.type === "resource_link" && c.uri === file.resource_uri),
    "no resource_link content item",
  );
  const art = await client.readResource({ uri: file.resource_uri });
  const blob = Buffer.from(art.contents[0].blob, "base64");
  assert(blob.length === file.size_bytes, `artifact ${blob.length} bytes, result said ${file.size_bytes}`);
  assert(
    blob.subarray(0, 4).toString() === "PAR1" && blob.subarray(blob.length - 4).toString() === "PAR1",
    "artifact is not Parquet",
  );
  log(`artifact: ${file.resource_uri} (${blob.length} bytes of Parquet)`);

  const bad = await client.callTool({ name: "get_schema", arguments: { dataset: "no/such/dataset" } });
  const err = JSON.parse(bad.content[0].text);
  assert(bad.isError && err.code === "dataset_not_found" && err.hint, `structured error ${JSON.stringify(bad)}`);
  log("errors: structured {error, code, hint}");
}

async function viaStdio() {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve", "--log-level", "warn"],
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = newClient();
  await client.connect(transport);
  try {
    assert(client.getServerVersion()?.name === "quarry", "server name over stdio");
    await runFlow(client, "stdio");
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

async function waitHealthy(base, child, stderr) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${stderr()}`);
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server never became healthy:\n${stderr()}`);
}

async function viaHTTP() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const token = randomBytes(24).toString("hex");
  const child = spawn(bin, ["serve", "--transport", "http", "--addr", `127.0.0.1:${port}`, "--log-level", "warn"], {
    env: { ...process.env, QUARRY_AUTH_TOKENS: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  try {
    await waitHealthy(base, child, () => err);
    assert((await fetch(`${base}/readyz`)).ok, "/readyz");

    // Without the token the server refuses the connection.
    const anon = newClient();
    let refused = false;
    try {
      await anon.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    } catch (e) {
      refused = /401|nauthorized/.test(String(e?.message ?? e)) || e?.code === 401;
    }
    assert(refused, "connecting without a token must fail with 401");

    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = newClient();
    await client.connect(transport);
    try {
      assert(client.getServerVersion()?.name === "quarry", "server name over HTTP");
      assert(transport.sessionId, "the SDK client should hold an Mcp-Session-Id (2025-11-25 session)");
      console.log(`[http] session ${transport.sessionId}, protocol ${transport.protocolVersion ?? "?"}`);
      await runFlow(client, "http");
      await transport.terminateSession();
    } finally {
      await client.close();
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
      child.on("exit", () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

try {
  console.log(`interop: @modelcontextprotocol/sdk client against ${bin}`);
  await viaStdio();
  await viaHTTP();
  console.log("interop: OK");
} catch (e) {
  console.error(`interop: FAILED: ${e instanceof AssertionError ? e.message : e?.stack ?? e}`);
  process.exitCode = 1;
}
