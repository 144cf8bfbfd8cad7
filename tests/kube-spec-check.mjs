// kube-spec-check.mjs DIR FILE.json...: each object (or each item of a v1
// List) validated against the Kubernetes schemas of npm kubernetes-models
// (installed in DIR/node_modules; @kubernetes-models/validate checks it):
// the model of its apiVersion and kind is looked up, and validate() must
// not throw.  Prints "FILE: problem" lines; exits 1 when there is one.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [dir, ...files] = process.argv.slice(2);
const problems = [];

async function check(where, obj) {
	if (obj.apiVersion === "v1" && obj.kind === "List") {
		for (const [i, it] of (obj.items || []).entries()) await check(`${where} items.${i}`, it);
		return;
	}
	if (typeof obj.apiVersion !== "string" || !/^[a-z0-9.]*\/?v[0-9a-z]+$/.test(obj.apiVersion) ||
	    typeof obj.kind !== "string" || !/^[A-Z][A-Za-z]+$/.test(obj.kind)) {
		problems.push(`${where}: no apiVersion and kind`);
		return;
	}
	const url = pathToFileURL(`${dir}/node_modules/kubernetes-models/${obj.apiVersion}/${obj.kind}.js`);
	let model;
	try {
		model = (await import(url.href))[obj.kind];
	} catch (e) {
		problems.push(`${where}: kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
		return;
	}
	try {
		new model(obj).validate();
	} catch (e) {
		problems.push(`${where}: ${obj.kind}: ${e.message}`);
	}
}

for (const f of files) await check(f.split("/").pop(), JSON.parse(readFileSync(f, "utf8")));
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
