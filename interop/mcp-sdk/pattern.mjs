// Interop check of pattern_filter with the official MCP TypeScript SDK
// client over stdio: the needs_confirmation loop (no elicitation), the
// elicitation form accepted, declined and cancelled, and the confirmed
// token in query_data, aggregate and advanced_query giving exactly the rows
// of the equivalent IN filter. Exits non-zero on the first failed assertion.
//
//   node interop/mcp-sdk/pattern.mjs --bin bin/quarry --data DIR \
//     --dataset budget/programs_2024 --extra "<value the user adds in the form>"

import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing --${name}`);
  return process.argv[i + 1];
}
const bin = arg("bin");
const data = arg("data");
const DATASET = arg("dataset");
const EXTRA = arg("extra");
const PATTERN = { dataset: DATASET, field: "program", patterns: ["գիտություն"] };

setTimeout(() => {
  console.error("pattern: timed out after 90 s");
  process.exit(2);
}, 90_000).unref();

class AssertionError extends Error {}
function assert(cond, msg) {
  if (!cond) throw new AssertionError(msg);
}

async function connect(capabilities, onElicit) {
  const client = new Client({ name: "quarry-interop-pattern", version: "1.0.0" }, { capabilities });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, onElicit);
  const transport = new StdioClientTransport({ command: bin, args: ["serve", "--data", data, "--log-level", "warn"], stderr: "inherit" });
  await client.connect(transport);
  return client;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  return res.structuredContent ?? JSON.parse(res.content.find((c) => c.type === "text").text);
}

async function callError(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert(res.isError, `${name} should fail: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  return JSON.parse(res.content.find((c) => c.type === "text").text);
}

const sqlString = (v) => `'${v.replaceAll("'", "''")}'`;

// withoutElicitation: needs_confirmation, then next_call confirms; the
// token equals the IN list in query_data, aggregate and advanced_query.
async function withoutElicitation() {
  const client = await connect({});
  try {
    const ask = await call(client, "pattern_filter", PATTERN);
    assert(ask.status === "needs_confirmation" && ask.next_call && ask.question, `first answer ${JSON.stringify(ask)}`);
    assert(ask.candidates.exclude.length > 0, "the professions value should be an exclude candidate");
    const ok = await call(client, ask.next_call.tool, ask.next_call.arguments);
    assert(ok.status === "confirmed" && ok.filter_token && ok.filter.op === "in", `confirmed ${JSON.stringify(ok)}`);
    const token = [{ filter_token: ok.filter_token }];
    const inList = [{ col: "program", op: "in", value: ok.filter.value }];
    const same = async (tool, args) => {
      const a = await call(client, tool, { ...args, filters: token });
      const b = await call(client, tool, { ...args, filters: inList });
      assert(JSON.stringify(a.data) === JSON.stringify(b.data) && a.data.length > 0, `${tool}: token and IN differ`);
      return a;
    };
    await same("query_data", { dataset: DATASET, columns: ["program", "amount"], order_by: [{ col: "amount" }, { col: "program" }], limit: 50 });
    const agg = await same("aggregate", { dataset: DATASET, group_by: [], aggs: [{ col: "*", fn: "count" }] });
    assert(agg.data[0].count_all === ok.diagnostics.matched, `count ${JSON.stringify(agg.data)} vs matched ${ok.diagnostics.matched}`);
    const sql = (where) => `SELECT program, count(*) AS n FROM "${DATASET}" WHERE ${where} GROUP BY program ORDER BY program`;
    const a = await call(client, "advanced_query", { sql: sql("filter_token($1)"), params: [ok.filter_token] });
    const b = await call(client, "advanced_query", { sql: sql(`program IN (${ok.filter.value.map(sqlString).join(", ")})`) });
    assert(JSON.stringify(a.data) === JSON.stringify(b.data) && a.data.length === ok.filter.value.length, "advanced_query: token and IN differ");
    const bad = await callError(client, "query_data", { dataset: DATASET, filters: [{ filter_token: ok.filter_token.slice(0, -2) + "AA" }] });
    assert(bad.code === "invalid_filter_token" && bad.hint, `tampered token ${JSON.stringify(bad)}`);
    console.log(`[no elicitation] needs_confirmation -> confirmed (${ok.filter.value.length} values, ${ok.diagnostics.matched} rows); token = IN in 3 tools`);
  } finally {
    await client.close();
  }
}

// withElicitation: the form is shown once per call; accepting (defaults plus
// EXTRA) confirms directly, declining and cancelling are cancelled errors.
async function withElicitation() {
  let action = "accept";
  const forms = [];
  const client = await connect({ elicitation: { form: {} } }, async (req) => {
    forms.push(req.params);
    if (action !== "accept") return { action };
    const values = req.params.requestedSchema.properties.values;
    assert(values && values.type === "array" && Array.isArray(values.default), `form schema ${JSON.stringify(req.params.requestedSchema)}`);
    const titles = JSON.stringify(values.items);
    assert(titles.includes(`${EXTRA} (`), `the form should list ${EXTRA} with its count: ${titles}`);
    return { action: "accept", content: { values: [...values.default, EXTRA] } };
  });
  try {
    const ok = await call(client, "pattern_filter", PATTERN);
    assert(ok.status === "confirmed" && ok.filter_token && ok.filter.value.includes(EXTRA) && forms.length === 1, `accepted ${JSON.stringify(ok)}`);
    for (const a of ["decline", "cancel"]) {
      action = a;
      const err = await callError(client, "pattern_filter", PATTERN);
      assert(err.code === "cancelled", `${a}: ${JSON.stringify(err)}`);
    }
    assert(forms.length === 3, `forms shown: ${forms.length}`);
    console.log(`[elicitation] accepted (${ok.filter.value.length} values incl. the added one), declined, cancelled`);
  } finally {
    await client.close();
  }
}

try {
  await withoutElicitation();
  await withElicitation();
  console.log("pattern: OK");
} catch (e) {
  console.error(`pattern: FAILED: ${e instanceof AssertionError ? e.message : e?.stack ?? e}`);
  process.exitCode = 1;
}
