// Interop check: Quarry's plot tool called by the official MCP TypeScript
// SDK client over stdio. The PNG image content item is decoded here (PNG
// signature, chunk CRCs, IHDR size, zlib-inflated and unfiltered pixels)
// and must have the size asked for and not be blank; the SVG image content
// must be an <svg> document. Exits non-zero on the first failed assertion.
//
//   npm ci --prefix interop/mcp-sdk
//   node interop/mcp-sdk/plot.mjs --bin bin/quarry    (or QUARRY_BIN=...)

import path from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const argBin = process.argv.indexOf("--bin");
const bin = path.resolve(
  argBin > 0 ? process.argv[argBin + 1] : process.env.QUARRY_BIN || path.join(here, "..", "..", "bin", "quarry"),
);

setTimeout(() => {
  console.error("interop: timed out after 120 s");
  process.exit(2);
}, 120_000).unref();

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// decodePNG returns {width, height, rgb: luminance per pixel} for 8-bit
// RGB/RGBA non-interlaced PNGs (what Quarry writes).
function decodePNG(buf) {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  assert(sig.every((b, i) => buf[i] === b), "PNG signature");
  let off = 8;
  let ihdr;
  const idat = [];
  for (;;) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    assert(crc32(buf.subarray(off + 4, off + 8 + len)) === buf.readUInt32BE(off + 8 + len), `CRC of ${type}`);
    if (type === "IHDR") ihdr = data;
    if (type === "IDAT") idat.push(data);
    off += 12 + len;
    if (type === "IEND") break;
  }
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const depth = ihdr[8];
  const colour = ihdr[9];
  assert(depth === 8 && (colour === 2 || colour === 6) && ihdr[12] === 0, `PNG format depth ${depth} colour ${colour}`);
  const bpp = colour === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  assert(raw.length === height * (stride + 1), "inflated size");
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      let p = 0;
      if (f === 1) p = a;
      else if (f === 2) p = b;
      else if (f === 3) p = (a + b) >> 1;
      else if (f === 4) {
        const e = a + b - c;
        const pa = Math.abs(e - a), pb = Math.abs(e - b), pc = Math.abs(e - c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else assert(f === 0, `filter ${f}`);
      px[y * stride + x] = (v + p) & 0xff;
    }
  }
  let sum = 0, sq = 0;
  for (let i = 0; i < width * height; i++) {
    const l = 0.299 * px[i * bpp] + 0.587 * px[i * bpp + 1] + 0.114 * px[i * bpp + 2];
    sum += l;
    sq += l * l;
  }
  const n = width * height;
  return { width, height, spread: Math.sqrt(sq / n - (sum / n) ** 2) };
}

async function plot(client, args) {
  const res = await client.callTool({ name: "plot", arguments: args });
  assert(!res.isError, `plot failed: ${JSON.stringify(res.content)}`);
  const images = res.content.filter((c) => c.type === "image");
  assert(images.length === 1, `one image content item, got ${JSON.stringify(res.content.map((c) => c.type))}`);
  return { image: images[0], summary: res.structuredContent };
}

const transport = new StdioClientTransport({ command: bin, args: ["serve", "--log-level", "warn"], env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "quarry-interop-plot", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  assert(tools.some((t) => t.name === "plot"), "plot in tools/list");

  const { image, summary } = await plot(client, {
    dataset: "sales/orders",
    chart: { kind: "bar", x: "category", y: "qty", color: "region" },
    width: 640,
    height: 400,
  });
  assert(image.mimeType === "image/png", `mimeType ${image.mimeType}`);
  const png = decodePNG(Buffer.from(image.data, "base64"));
  assert(png.width === 640 && png.height === 400, `PNG is ${png.width}x${png.height}`);
  assert(png.spread > 5, `PNG looks blank (luminance spread ${png.spread})`);
  assert(summary.rows_used === 1500 && summary.kind === "bar", `summary ${JSON.stringify(summary)}`);
  console.log(`[stdio] png ${png.width}x${png.height}, ${Buffer.from(image.data, "base64").length} bytes, spread ${png.spread.toFixed(1)}`);

  const svg = await plot(client, { dataset: "weather/daily", chart: { kind: "histogram", x: "tmax_c" }, format: "svg" });
  assert(svg.image.mimeType === "image/svg+xml", `svg mimeType ${svg.image.mimeType}`);
  assert(Buffer.from(svg.image.data, "base64").toString("utf8").includes("<svg"), "SVG document");
  console.log(`[stdio] svg, ${svg.summary.bins} bins`);
} finally {
  await client.close();
}
console.log("interop: OK");
