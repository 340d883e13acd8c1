import { buildSync } from "esbuild";
const fn = process.argv[2], filt = process.argv[3];
const r = buildSync({ bundle: true, splitting: true, platform: "node", format: "esm", target: "node22", minify: true, outdir: "/tmp/metaout/" + fn, entryPoints: { index: `functions/${fn}/handler.ts` }, metafile: true, write: true, mainFields: ["module","main"], logLevel: "silent", alias: { "#agent-runner/plugins": "/work/main/shared/plugins/none.ts" }, outExtension: {".js": ".mjs"} });
const out = r.metafile.outputs;
const main = Object.entries(out).find(([k]) => k.endsWith("index.mjs"));
const seen = new Set(); const stack = [main[0]];
while (stack.length) { const k = stack.pop(); if (seen.has(k)) continue; seen.add(k); for (const i of out[k].imports) if (i.kind === "import-statement" && out[i.path]) stack.push(i.path); }
const rows = [];
for (const k of seen) for (const [inp, v] of Object.entries(out[k].inputs)) if (inp.includes(filt)) rows.push([v.bytesInOutput, inp]);
rows.sort((a,b)=>b[0]-a[0]); let t=0; for (const [b] of rows) t+=b; console.log("total", (t/1024).toFixed(1));
for (const [b, i] of rows.slice(0, 30)) console.log((b/1024).toFixed(1).padStart(7), i.replace(/.*node_modules\//, ""));
