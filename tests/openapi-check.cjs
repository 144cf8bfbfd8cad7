// Checks real answers of the API against doc/paddock-api.json with real
// OpenAPI validators from the npm registry (tests/api.test installs them):
// @seriousme/openapi-schema-validator for the document itself, and
// openapi-response-validator for each answer's JSON body.
//
// usage: node openapi-check.cjs NODE_MODULES DOC RECORDS [EXEMPT...|--no-coverage|
//        --only=PREFIX|--skip=PREFIX]
//
// RECORDS is a folder of answers, one per request: N.req ("METHOD PATH
// STATUS"), N.hdr (the headers curl saw) and N.body.  Every answer must be
// of a documented route and status, with a documented content type, and a
// JSON body must match its schema; every documented (route, status) must
// have been seen, but for the EXEMPT ones ("500", "503": faults a test
// cannot cause on demand); --no-coverage checks the answers only;
// --only=PREFIX asks it of the routes whose path starts with PREFIX only,
// --skip=PREFIX of all but those (one test covers some routes, another the
// rest).
"use strict";
const fs = require("fs");
const path = require("path");
const [mods, docPath, recDir, ...exempt] = process.argv.slice(2);
const only = exempt.filter((a) => a.startsWith("--only=")).map((a) => a.slice(7));
const skip = exempt.filter((a) => a.startsWith("--skip=")).map((a) => a.slice(7));
const covered = (tpl) => (!only.length || only.some((p) => tpl.startsWith(p))) &&
  !skip.some((p) => tpl.startsWith(p));
const need = (name) => require(path.join(mods, "node_modules", name));
const ResponseValidator = need("openapi-response-validator").default;

const doc = JSON.parse(fs.readFileSync(docPath, "utf8"));
const problems = [];

function resolve(r) {
  while (r && r.$ref) {
    const name = r.$ref.replace("#/components/responses/", "");
    r = doc.components.responses[name];
  }
  return r;
}

const routes = [];
for (const [tpl, item] of Object.entries(doc.paths)) {
  const re = new RegExp("^" + tpl.replace(/\{[^}]+\}/g, "[^/]+") + "$");
  for (const [m, op] of Object.entries(item)) {
    if (op && op.responses) routes.push({ tpl, re, method: m.toUpperCase(), op });
  }
}

const seen = new Set();
const files = fs.readdirSync(recDir).filter((f) => f.endsWith(".req"));
for (const f of files) {
  const base = path.join(recDir, f.slice(0, -4));
  const [method, url, status] = fs.readFileSync(base + ".req", "utf8").trim().split(" ");
  const p = url.split("?")[0];
  const m = method === "HEAD" ? "GET" : method;
  const cands = routes.filter((r) => r.re.test(p));
  const route = cands.find((r) => r.method === m);
  if (!cands.length) {
    // Paths outside the document: only 404 no_route may answer them.
    if (status !== "404" && status !== "401") problems.push(`${method} ${p}: ${status} on an undocumented path`);
    continue;
  }
  if (!route) {
    // A method the path does not take: 405 (or 401 before it) is right.
    if (status !== "405" && status !== "401") problems.push(`${method} ${p}: ${status}, not 405`);
    continue;
  }
  const key = `${route.method} ${route.tpl} ${status}`;
  seen.add(key);
  const resp = resolve(route.op.responses[status] || route.op.responses[status[0] + "XX"] ||
                       route.op.responses.default);
  if (!resp) {
    problems.push(`${key}: the status is not documented for the route`);
    continue;
  }
  const hdr = fs.existsSync(base + ".hdr") ? fs.readFileSync(base + ".hdr", "utf8") : "";
  const ct = ((hdr.match(/^content-type:\s*([^;\r\n]+)/im) || [])[1] || "").trim().toLowerCase();
  const body = fs.existsSync(base + ".body") ? fs.readFileSync(base + ".body", "utf8") : "";
  const types = Object.keys(resp.content || {});
  if (body.length && !types.length) {
    problems.push(`${key}: a body, where the document says none`);
    continue;
  }
  if (body.length && !types.includes(ct)) {
    problems.push(`${key}: Content-Type ${ct || "(none)"}, documented ${types.join(", ")}`);
    continue;
  }
  if (ct !== "application/json") continue;
  let json;
  try {
    json = JSON.parse(body);
  } catch (e) {
    problems.push(`${key}: the body is not JSON: ${e.message}`);
    continue;
  }
  const only = { [status]: { ...resp, content: { "application/json": resp.content["application/json"] } } };
  const v = new ResponseValidator({ responses: only, components: doc.components });
  const err = v.validateResponse(status, json);
  if (err) {
    const what = err.errors.slice(0, 4).map((e) => `${e.path || "(body)"}: ${e.message}`).join("; ");
    problems.push(`${key}: ${what} in ${body.slice(0, 200).replace(/\s+/g, " ")}`);
  }
}

const missing = [];
for (const r of exempt.includes("--no-coverage") ? [] : routes.filter((x) => covered(x.tpl))) {
  for (const st of Object.keys(r.op.responses)) {
    if (exempt.includes(st)) continue;
    const key = `${r.method} ${r.tpl} ${st}`;
    if (!seen.has(key)) missing.push(key);
  }
}
for (const k of missing) problems.push(`${k}: documented, never answered in the test`);
console.log(`${files.length} answers checked, ${seen.size} (route, status) pairs seen`);
for (const p of problems) console.log("#   " + p);
process.exit(problems.length ? 1 : 0);
