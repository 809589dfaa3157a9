// Quarry console: a small single-page app that speaks MCP (JSON-RPC over
// Streamable HTTP) to the server's own /mcp endpoint, like any client.
// Every value is rendered as text (el() below sets textContent, never
// innerHTML), the bearer token stays in memory, and no script is inline.

const PROTOCOL = "2025-11-25";

// ---------- DOM helpers ----------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const main = () => document.getElementById("main");

function setStatus(text, ok = false) {
  const s = document.getElementById("status");
  s.replaceChildren(ok ? el("span", { class: "ok", text }) : text);
}

function showError(err) {
  const box = document.getElementById("error");
  if (!err) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const q = err.quarry || { error: String(err.message || err) };
  box.replaceChildren(
    q.code ? el("span", { class: "code", text: q.code + ": " }) : "",
    el("span", { class: "message", text: q.error || q.message || "error" }),
    q.hint ? el("div", { class: "hint", text: "Hint: " + q.hint }) : "",
    q.diagnostics ? el("pre", { class: "diagnostics", text: JSON.stringify(q.diagnostics, null, 2) }) : "",
  );
  box.hidden = false;
}

function cell(v) {
  if (v === null || v === undefined) return el("td", { class: "null", text: "null" });
  if (typeof v === "number") return el("td", { class: "num", text: String(v) });
  if (typeof v === "object") return el("td", { text: JSON.stringify(v) });
  return el("td", { text: String(v) });
}

// table renders rows (objects) with the given column order.
function table(rows, columns, caption) {
  columns = columns || (rows.length ? Object.keys(rows[0]) : []);
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      {},
      caption ? el("caption", { class: "muted", text: caption }) : "",
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { scope: "col", text: c })))),
      el("tbody", {}, rows.map((r) => el("tr", {}, columns.map((c) => cell(r[c]))))),
    ),
  );
}

function formatBytes(n) {
  if (typeof n !== "number") return "";
  const u = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) {
    n /= 1024;
    i++;
  }
  return (i ? n.toFixed(1) : String(n)) + " " + u[i];
}

const fmtInt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "");

// ---------- MCP client ----------

class QuarryError extends Error {
  constructor(q) {
    super(q.error || q.message || "error");
    this.quarry = q;
  }
}

class MCP {
  constructor() {
    this.token = "";
    this.session = null;
    this.protocol = null;
    this.nextId = 1;
    this.ready = null;
    this.tools = null;
  }

  async post(body) {
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    if (this.token) headers.Authorization = "Bearer " + this.token;
    if (this.session) headers["Mcp-Session-Id"] = this.session;
    if (this.protocol) headers["MCP-Protocol-Version"] = this.protocol;
    const r = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(body), credentials: "omit", cache: "no-store" });
    const sid = r.headers.get("Mcp-Session-Id");
    if (sid) this.session = sid;
    return r;
  }

  async rpc(method, params) {
    const id = this.nextId++;
    const r = await this.post({ jsonrpc: "2.0", id, method, params: params || {} });
    if (r.status === 401) {
      throw new QuarryError({ code: "unauthorized", error: "the server requires a bearer token", hint: "type the token in the Token field and press Connect" });
    }
    if (r.status === 404 && this.session && method !== "initialize") {
      // The session expired: start a new one and retry once.
      this.session = null;
      this.ready = null;
      await this.connect();
      return this.rpc(method, params);
    }
    const text = await r.text();
    let msg = null;
    if ((r.headers.get("Content-Type") || "").includes("text/event-stream")) {
      for (const block of text.split(/\r?\n\r?\n/)) {
        const data = block
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n");
        if (!data) continue;
        const m = JSON.parse(data);
        if (m.id === id) msg = m;
      }
    } else if (text) {
      msg = JSON.parse(text);
    }
    if (!r.ok && !msg) throw new QuarryError({ code: "http_" + r.status, error: text.trim() || r.statusText });
    if (!msg) throw new QuarryError({ code: "no_response", error: "no response to " + method });
    if (msg.error) {
      const d = msg.error.data && typeof msg.error.data === "object" ? msg.error.data : {};
      throw new QuarryError({ code: d.code || "rpc_" + msg.error.code, error: msg.error.message, hint: d.hint, diagnostics: d.diagnostics });
    }
    return msg.result;
  }

  connect() {
    if (!this.ready) {
      this.ready = (async () => {
        const res = await this.rpc("initialize", {
          protocolVersion: PROTOCOL,
          capabilities: {},
          clientInfo: { name: "quarry-console", version: "1.0.0" },
        });
        this.protocol = res.protocolVersion;
        this.server = res;
        await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
        return res;
      })();
      this.ready.catch(() => {
        this.ready = null;
      });
    }
    return this.ready;
  }

  async request(method, params) {
    await this.connect();
    return this.rpc(method, params);
  }

  async listTools() {
    if (!this.tools) this.tools = (await this.request("tools/list")).tools;
    return this.tools;
  }

  async hasTool(name) {
    return (await this.listTools()).some((t) => t.name === name);
  }

  // callRaw returns the whole tool result; call returns its structured
  // content and throws the tool's error as a QuarryError.
  async callRaw(name, args) {
    return this.request("tools/call", { name, arguments: args || {} });
  }

  async call(name, args) {
    const res = await this.callRaw(name, args);
    const text = (res.content || []).find((c) => c.type === "text");
    if (res.isError) {
      let q;
      try {
        q = JSON.parse(text ? text.text : "{}");
      } catch {
        q = { error: text ? text.text : "tool error" };
      }
      throw new QuarryError(q);
    }
    if (res.structuredContent) return res.structuredContent;
    return text ? JSON.parse(text.text) : {};
  }
}

const mcp = new MCP();

// guard runs an async action, showing its error (and clearing the last one).
async function guard(label, fn) {
  showError(null);
  setStatus(label + "…");
  try {
    const out = await fn();
    setStatus(label + ": done", true);
    return out;
  } catch (e) {
    setStatus(label + ": failed");
    showError(e);
    return undefined;
  }
}

// ---------- downloads ----------

async function download(uri, name) {
  const res = await mcp.request("resources/read", { uri });
  const c = res.contents[0];
  const bytes = c.blob ? Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0)) : new TextEncoder().encode(c.text || "");
  const blob = new Blob([bytes], { type: c.mimeType || "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: name || uri.split("/").pop() });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---------- pages ----------

// consoleConfig is /console/config.json (client configurations, output
// schemas), fetched once per page load and shared by the pages that use it;
// a failed fetch is tried again next time.
let configOnce = null;
function consoleConfig() {
  configOnce ||= fetch("/console/config.json")
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error("/console/config.json: HTTP " + r.status))))
    .catch((e) => {
      configOnce = null;
      throw e;
    });
  return configOnce;
}

async function home() {
  const root = main();
  root.replaceChildren(
    el("h1", { text: "Quarry" }),
    el("p", {
      text:
        "Quarry answers questions about a folder of data files (CSV, Parquet, JSON, Excel, Arrow, HDF5) for LLM clients through the Model Context Protocol: it lists datasets, explains schemas and runs filtered, grouped and joined queries with honest counts.",
    }),
  );
  const endpoint = location.origin + "/mcp";
  const health = el("p", { id: "health", class: "muted", text: "checking health…" });
  root.append(
    el("h2", { text: "Endpoint" }),
    el("p", {}, "MCP (Streamable HTTP): ", el("code", { id: "endpoint", text: endpoint })),
    health,
  );
  const [h, r] = await Promise.all([fetch("/healthz").catch(() => null), fetch("/readyz").catch(() => null)]);
  let line = (h && h.ok ? "healthy" : "not healthy") + " · " + (r && r.ok ? "ready" : "not ready");
  try {
    const cat = await mcp.call("get_catalog", {});
    line += " · " + fmtInt(cat.total) + " datasets";
    if (mcp.server) line += " · " + mcp.server.serverInfo.name + " " + mcp.server.serverInfo.version;
  } catch (e) {
    if (e.quarry && e.quarry.code === "unauthorized") line += " · token required";
  }
  health.textContent = line;

  const cfg = await consoleConfig();
  root.append(el("h2", { text: "Connect a client" }));
  for (const c of cfg.clients) {
    const pre = el("pre", { text: c.text });
    const btn = el("button", {
      type: "button",
      class: "copy",
      text: "Copy",
      "aria-label": "Copy the " + c.client + " configuration",
      onclick: async () => {
        let ok = false;
        try {
          await navigator.clipboard.writeText(c.text);
          ok = true;
        } catch {
          const sel = window.getSelection();
          const range = document.createRange();
          range.selectNodeContents(pre);
          sel.removeAllRanges();
          sel.addRange(range);
          ok = document.execCommand && document.execCommand("copy");
        }
        btn.textContent = ok ? "Copied" : "Selected: press Ctrl+C";
        setStatus(c.client + " configuration " + (ok ? "copied" : "selected"), ok);
      },
    });
    root.append(el("section", { class: "card client" }, el("div", { class: "row" }, el("h3", { class: "grow", text: c.client }), btn), el("p", { class: "muted", text: c.where }), pre));
  }
}

async function catalog(params) {
  const root = main();
  const filter = el("input", { id: "catalog-filter", type: "search", placeholder: "filter by id, format or tag", "aria-label": "Filter datasets", value: params.get("q") || "" });
  const list = el("div", { id: "catalog-list" });
  root.replaceChildren(el("h1", { text: "Catalog" }), el("div", { class: "row" }, filter), list);
  const cat = await guard("Loading the catalog", () => mcp.call("get_catalog", {}));
  if (!cat) return;
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    const rows = cat.datasets.filter((d) => !q || JSON.stringify([d.id, d.format, d.tags]).toLowerCase().includes(q));
    list.replaceChildren(
      el("p", { class: "muted", text: `${rows.length} of ${cat.total} datasets` }),
      el(
        "div",
        { class: "table-wrap" },
        el(
          "table",
          {},
          el("thead", {}, el("tr", {}, ["dataset", "format", "rows", "size", "tags"].map((c) => el("th", { scope: "col", text: c })))),
          el(
            "tbody",
            {},
            rows.map((d) =>
              el(
                "tr",
                {},
                el("td", {}, el("a", { href: "#/dataset/" + encodeURIComponent(d.id), text: d.id })),
                el("td", { text: d.format || "" }),
                el("td", { class: "num", text: fmtInt(d.row_count) + (d.row_count_exact === false ? " (est.)" : "") }),
                el("td", { class: "num", text: formatBytes(d.size_bytes) }),
                el("td", { text: d.tags ? Object.entries(d.tags).map(([k, v]) => k + ": " + v).join(", ") : "" }),
              ),
            ),
          ),
        ),
      ),
    );
    if (cat.diagnostics && cat.diagnostics.length) {
      list.append(el("h2", { text: "Diagnostics" }), el("pre", { text: JSON.stringify(cat.diagnostics, null, 2) }));
    }
  };
  filter.addEventListener("input", render);
  render();
}

async function dataset(id) {
  const root = main();
  root.replaceChildren(el("h1", { text: id }));
  const s = await guard("Loading the schema", () => mcp.call("get_schema", { dataset: id }));
  if (!s) return;
  root.append(
    el("p", { class: "muted", text: [s.format, s.shape ? fmtInt(s.shape[0]) + " rows × " + s.shape[1] + " columns" : "", s.description].filter(Boolean).join(" · ") }),
    el("div", { class: "row" }, el("a", { href: "#/query?dataset=" + encodeURIComponent(id), id: "query-this", text: "Query this dataset" })),
    el("h2", { text: "Columns" }),
    table(
      s.columns.map((c) => ({
        name: c.name,
        type: c.type,
        nullable: c.nullable,
        description: c.description || "",
        stats: c.stats ? JSON.stringify(c.stats) : "",
        notes: c.notes || c.hint || "",
      })),
      ["name", "type", "nullable", "description", "stats", "notes"],
    ),
  );
  if (s.sample_rows && s.sample_rows.length) root.append(el("h2", { text: "Sample" }), table(s.sample_rows));
  if (s.schema_uri) root.append(el("p", { class: "muted" }, "Schema card resource: ", el("code", { text: s.schema_uri })));
}

// ---------- query page ----------

const CHART_KINDS = ["bar", "line", "area", "scatter", "histogram", "box", "heatmap"];

async function query(params) {
  const root = main();
  const cat = await guard("Loading the catalog", () => mcp.call("get_catalog", {}));
  if (!cat) return;
  const hasSQL = await mcp.hasTool("advanced_query");
  const hasPlot = await mcp.hasTool("plot");
  let mode = params.get("sql") && hasSQL ? "sql" : "knobs";

  const dsSelect = el("select", { id: "dataset", "aria-label": "Dataset" }, cat.datasets.map((d) => el("option", { value: d.id, text: d.id })));
  if (params.get("dataset")) dsSelect.value = params.get("dataset");
  const spec = el("textarea", { id: "spec", "aria-label": "Query spec (JSON knobs of query_data)", spellcheck: "false" });
  spec.value = params.get("spec") || '{\n  "limit": 50\n}';
  const sql = el("textarea", { id: "sql", "aria-label": "SQL (advanced_query)", spellcheck: "false", hidden: true });
  sql.value = params.get("sql") || "";
  const chips = el("div", { class: "chips", id: "columns", "aria-label": "Columns: click to insert" });
  const out = el("section", { id: "result" });
  const tabKnobs = el("button", { type: "button", role: "tab", id: "tab-knobs", text: "Knobs" });
  const tabSQL = el("button", { type: "button", role: "tab", id: "tab-sql", text: "SQL", hidden: !hasSQL });

  const setMode = (m) => {
    mode = m;
    tabKnobs.setAttribute("aria-selected", String(m === "knobs"));
    tabSQL.setAttribute("aria-selected", String(m === "sql"));
    spec.hidden = m !== "knobs";
    dsSelect.disabled = m !== "knobs";
    sql.hidden = m !== "sql";
    if (m === "sql" && !sql.value.trim()) sql.value = `SELECT *\nFROM "${dsSelect.value}"\nLIMIT 50`;
  };
  tabKnobs.addEventListener("click", () => setMode("knobs"));
  tabSQL.addEventListener("click", () => setMode("sql"));

  const insert = (text) => {
    const t = mode === "sql" ? sql : spec;
    const [a, b] = [t.selectionStart, t.selectionEnd];
    t.value = t.value.slice(0, a) + text + t.value.slice(b);
    t.focus();
    t.selectionStart = t.selectionEnd = a + text.length;
  };
  const loadColumns = async () => {
    chips.replaceChildren();
    try {
      const s = await mcp.call("get_schema", { dataset: dsSelect.value });
      chips.replaceChildren(
        el("span", { class: "muted", text: "Columns: " }),
        ...s.columns.map((c) => el("button", { type: "button", title: c.type, text: c.name, onclick: () => insert(mode === "sql" ? c.name : JSON.stringify(c.name)) })),
      );
    } catch (e) {
      showError(e);
    }
  };
  dsSelect.addEventListener("change", loadColumns);

  const args = (extra) => {
    if (mode === "sql") return { tool: "advanced_query", args: { sql: sql.value, ...extra } };
    let knobs;
    try {
      knobs = JSON.parse(spec.value || "{}");
    } catch (e) {
      throw new QuarryError({ code: "invalid_json", error: "the spec is not valid JSON: " + e.message, hint: 'write knobs as a JSON object, e.g. {"columns": ["a"], "limit": 10}' });
    }
    return { tool: "query_data", args: { ...knobs, dataset: dsSelect.value, ...extra } };
  };

  const estimate = () =>
    guard("Estimating", async () => {
      const a = args({});
      const est = await mcp.call("estimate_query", mode === "sql" ? { sql: a.args.sql } : a.args);
      out.replaceChildren(el("h2", { text: "Estimate" }), el("pre", { id: "estimate", text: JSON.stringify(est, null, 2) }));
    });

  const showResult = (res, a) => {
    out.replaceChildren(el("h2", { text: "Result" }));
    const info = [`${fmtInt(res.row_count)} rows shown`, res.total_rows !== undefined ? `${fmtInt(res.total_rows)} in all` : "", res.method, res.truncated ? "truncated" : ""];
    out.append(el("p", { id: "result-info", class: "muted", text: info.filter(Boolean).join(" · ") }));
    if (res.warnings && res.warnings.length) out.append(el("p", { class: "muted", text: "Warnings: " + res.warnings.join("; ") }));
    const rows = res.data || res.preview || [];
    const body = el("div", { id: "rows" }, table(rows));
    out.append(body);
    const bar = el("div", { class: "row" });
    out.append(bar);
    if (res.method === "handle" && res.page_info) {
      let page = res;
      const next = el("button", {
        type: "button",
        id: "next-page",
        text: "Next page",
        disabled: !page.page_info.has_more,
        onclick: () =>
          guard("Next page", async () => {
            page = await mcp.call("query_next_page", { result_handle: res.result_handle, page_token: page.page_info.page_token });
            body.replaceChildren(table(page.data));
            document.getElementById("result-info").textContent = `rows ${fmtInt(page.page_info.offset + 1)}–${fmtInt(page.page_info.offset + page.row_count)} of ${fmtInt(page.total_rows ?? res.total_rows)}`;
            next.disabled = !page.page_info.has_more;
          }),
      });
      bar.append(next);
    }
    if (res.resource_uri) {
      bar.append(el("button", { type: "button", id: "download-result", text: "Download file", onclick: () => guard("Downloading", () => download(res.resource_uri)) }));
    }
    for (const fmt of ["csv", "parquet"]) {
      bar.append(
        el("button", {
          type: "button",
          id: "download-" + fmt,
          text: "Download " + fmt.toUpperCase(),
          onclick: () =>
            guard("Writing " + fmt.toUpperCase(), async () => {
              const b = args({ output_format: fmt });
              const r = await mcp.call(b.tool, b.args);
              if (!r.resource_uri) throw new QuarryError({ code: "inline_result", error: "the server returned the rows inline instead of a file", hint: "small results may come back inline" });
              await download(r.resource_uri);
            }),
        }),
      );
    }
    if (hasPlot && rows.length) out.append(chartForm(a, Object.keys(rows[0]), rows[0]));
  };

  const run = () =>
    guard("Running", async () => {
      const a = args({});
      const res = await mcp.call(a.tool, a.args);
      if (res.status === "needs_confirmation") {
        out.replaceChildren(
          el("h2", { text: "Needs confirmation" }),
          el("pre", { text: JSON.stringify(res, null, 2) }),
          el("button", { type: "button", id: "confirm", text: "Run anyway", onclick: () => guard("Running", async () => showResult(await mcp.call(a.tool, { ...a.args, confirm: true }), a)) }),
        );
        return;
      }
      showResult(res, a);
    });

  root.replaceChildren(
    el("h1", { text: "Query" }),
    el("div", { class: "row" }, el("label", { for: "dataset", text: "Dataset" }), dsSelect, el("div", { class: "tabs", role: "tablist" }, tabKnobs, tabSQL)),
    chips,
    spec,
    sql,
    el(
      "div",
      { class: "row" },
      el("button", { type: "button", id: "estimate-btn", text: "Estimate", onclick: estimate }),
      el("button", { type: "button", id: "run", class: "primary", text: "Run", onclick: run }),
      el("span", { class: "muted", text: mode === "sql" ? "" : "Knobs as in query_data: columns, filters, group_by, aggs, order_by, limit …" }),
    ),
    out,
  );
  setMode(mode);
  await loadColumns();
}

function chartForm(a, columns, sample) {
  const kind = el("select", { id: "chart-kind", "aria-label": "Chart kind" }, CHART_KINDS.map((k) => el("option", { value: k, text: k })));
  const x = el("select", { id: "chart-x", "aria-label": "x" }, columns.map((c) => el("option", { value: c, text: c })));
  const y = el("select", { id: "chart-y", "aria-label": "y" }, el("option", { value: "", text: "(none)" }), columns.map((c) => el("option", { value: c, text: c })));
  // Defaults: x the first text column (else the first), y the last numeric one.
  const isNum = (c) => typeof sample[c] === "number";
  x.value = columns.find((c) => !isNum(c)) || columns[0];
  const ys = columns.filter((c) => c !== x.value && isNum(c));
  if (ys.length) y.value = ys[ys.length - 1];
  const img = el("div", { id: "chart" });
  const draw = () =>
    guard("Drawing", async () => {
      const chart = { kind: kind.value, x: x.value };
      if (y.value) chart.y = y.value;
      const base = a.tool === "advanced_query" ? { sql: a.args.sql } : { dataset: a.args.dataset, spec: Object.fromEntries(Object.entries(a.args).filter(([k]) => k !== "dataset")) };
      const res = await mcp.callRaw("plot", { ...base, chart });
      if (res.isError) {
        const t = (res.content || []).find((c) => c.type === "text");
        throw new QuarryError(JSON.parse(t ? t.text : "{}"));
      }
      const image = (res.content || []).find((c) => c.type === "image");
      if (!image) throw new QuarryError({ code: "no_image", error: "the plot tool returned no image" });
      img.replaceChildren(el("img", { class: "chart", alt: `${chart.kind} chart of ${chart.x}${chart.y ? " and " + chart.y : ""}`, src: `data:${image.mimeType};base64,${image.data}` }));
    });
  return el(
    "section",
    { class: "card" },
    el("h3", { text: "Chart" }),
    el("div", { class: "row" }, el("label", { text: "Kind " }, kind), el("label", { text: "x " }, x), el("label", { text: "y " }, y), el("button", { type: "button", id: "draw", text: "Draw", onclick: draw })),
    img,
  );
}

// ---------- tools, resources, prompts ----------

function tryForm(id, initial, onCall) {
  const area = el("textarea", { id: id + "-args", "aria-label": "Arguments (JSON)", spellcheck: "false" });
  area.value = initial;
  const out = el("div", { id: id + "-out" });
  const btn = el("button", {
    type: "button",
    id: id + "-call",
    class: "primary",
    text: "Call",
    onclick: () =>
      guard("Calling " + id, async () => {
        let parsed;
        try {
          parsed = JSON.parse(area.value || "{}");
        } catch (e) {
          throw new QuarryError({ code: "invalid_json", error: "the arguments are not valid JSON: " + e.message, hint: "write a JSON object" });
        }
        out.replaceChildren(el("pre", { text: JSON.stringify(await onCall(parsed), null, 2) }));
      }),
  });
  return el("details", { class: "try" }, el("summary", { text: "Try it" }), area, el("div", { class: "row" }, btn), out);
}

function exampleArgs(schema) {
  const out = {};
  for (const r of (schema && schema.required) || []) {
    const p = schema.properties[r] || {};
    out[r] = p.type === "array" ? [] : p.type === "integer" || p.type === "number" ? 0 : p.type === "object" ? {} : p.type === "boolean" ? false : "";
  }
  return JSON.stringify(out, null, 2);
}

async function tools() {
  const root = main();
  root.replaceChildren(el("h1", { text: "Tools" }));
  const list = await guard("Listing tools", () => mcp.listTools());
  if (!list) return;
  // tools/list leaves output schemas out (to stay small); the server hands
  // them to the console with its configuration.
  const outputs = (await consoleConfig()).output_schemas || {};
  for (const t of list) {
    const output = t.outputSchema || outputs[t.name];
    root.append(
      el(
        "section",
        { class: "card tool", id: "tool-" + t.name },
        el("h2", { text: t.name }),
        el("p", { text: t.description || "" }),
        el("details", {}, el("summary", { text: "Input schema" }), el("pre", { text: JSON.stringify(t.inputSchema, null, 2) })),
        output ? el("details", { class: "output-schema" }, el("summary", { text: "Output schema" }), el("pre", { text: JSON.stringify(output, null, 2) })) : "",
        tryForm(t.name, exampleArgs(t.inputSchema), (args) => mcp.call(t.name, args)),
      ),
    );
  }
}

async function resources() {
  const root = main();
  root.replaceChildren(el("h1", { text: "Resources" }));
  const res = await guard("Listing resources", async () => ({
    list: (await mcp.request("resources/list")).resources,
    templates: (await mcp.request("resources/templates/list")).resourceTemplates,
  }));
  if (!res) return;
  const read = (uri, out) =>
    guard("Reading " + uri, async () => {
      const r = await mcp.request("resources/read", { uri });
      out.replaceChildren(
        ...r.contents.map((c) => el("pre", { text: c.text !== undefined ? c.text.slice(0, 20000) : `${c.mimeType || "binary"}: ${Math.round((c.blob.length * 3) / 4)} bytes` })),
      );
    });
  root.append(el("h2", { text: "Resources" }));
  for (const r of res.list) {
    const out = el("div");
    root.append(el("section", { class: "card" }, el("h3", { text: r.name || r.uri }), el("p", { class: "muted" }, el("code", { text: r.uri }), " ", r.description || ""), el("button", { type: "button", text: "Read", onclick: () => read(r.uri, out) }), out));
  }
  root.append(el("h2", { text: "Templates" }));
  for (const t of res.templates) {
    const uri = el("input", { class: "grow", value: t.uriTemplate, "aria-label": "URI for " + t.name });
    const out = el("div");
    root.append(el("section", { class: "card" }, el("h3", { text: t.name }), el("p", { class: "muted", text: t.description || "" }), el("div", { class: "row" }, uri, el("button", { type: "button", text: "Read", onclick: () => read(uri.value, out) })), out));
  }
}

async function prompts() {
  const root = main();
  root.replaceChildren(el("h1", { text: "Prompts" }));
  const list = await guard("Listing prompts", async () => (await mcp.request("prompts/list")).prompts);
  if (!list) return;
  for (const p of list) {
    const initial = JSON.stringify(Object.fromEntries((p.arguments || []).map((a) => [a.name, ""])), null, 2);
    root.append(
      el(
        "section",
        { class: "card", id: "prompt-" + p.name },
        el("h2", { text: p.name }),
        el("p", { text: p.description || "" }),
        (p.arguments || []).length ? table(p.arguments.map((a) => ({ argument: a.name, required: !!a.required, description: a.description || "" }))) : "",
        tryForm("prompt-" + p.name, initial, async (args) => {
          const clean = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== ""));
          return mcp.request("prompts/get", { name: p.name, arguments: clean });
        }),
      ),
    );
  }
}

// ---------- router, token, theme ----------

async function route() {
  delete document.body.dataset.ready;
  showError(null);
  const hash = location.hash.replace(/^#/, "") || "/";
  const [pathPart, qs = ""] = hash.split("?");
  const params = new URLSearchParams(qs);
  const parts = pathPart.split("/").filter(Boolean);
  const page = parts[0] || "home";
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.nav === (page === "dataset" ? "catalog" : page)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  document.title = "Quarry · " + page;
  try {
    switch (page) {
      case "home":
        await home();
        break;
      case "catalog":
        await catalog(params);
        break;
      case "dataset":
        await dataset(decodeURIComponent(parts.slice(1).join("/")));
        break;
      case "query":
        await query(params);
        break;
      case "tools":
        await tools();
        break;
      case "resources":
        await resources();
        break;
      case "prompts":
        await prompts();
        break;
      default:
        main().replaceChildren(el("h1", { text: "Not found" }), el("p", {}, el("a", { href: "#/", text: "Home" })));
    }
  } catch (e) {
    showError(e);
  }
  document.body.dataset.page = page;
  document.body.dataset.ready = String(Date.now());
}

function initTheme() {
  const btn = document.getElementById("theme");
  btn.addEventListener("click", () => {
    const dark = document.documentElement.dataset.theme ? document.documentElement.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    document.documentElement.dataset.theme = dark ? "light" : "dark";
  });
}

function initAuth() {
  const form = document.getElementById("auth");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    mcp.token = document.getElementById("token").value.trim();
    mcp.session = null;
    mcp.ready = null;
    mcp.tools = null;
    route();
  });
}

initTheme();
initAuth();
window.addEventListener("hashchange", route);
route();
