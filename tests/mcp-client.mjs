// Drives `paddock mcp` with the official TypeScript SDK's client
// (npm @modelcontextprotocol/sdk, installed by tests/mcp.test), as an agent
// or an IDE would: StdioClientTransport, tools and resources listed, a
// task queued, followed to review, its diff, log and gate summary read,
// changes requested, round 2 seen, approved.  The SDK checks every
// structured result against the tool's outputSchema.
//
// usage: node mcp-client.mjs SDK_DIR local PADDOCK REPO
//        node mcp-client.mjs SDK_DIR remote PADDOCK REPO URL READ_TOKEN REVIEW_TOKEN
//
// Prints "PASS what" or "FAIL what: why" lines (tests/mcp.test makes them
// TAP) and "TASK id" for each task it queued.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, mode, paddock, repo, url, readToken, reviewToken] = process.argv.slice(2);
const sdk = (p) => pathToFileURL(path.join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href;
const { Client } = await import(sdk("client/index.js"));
const { StdioClientTransport } = await import(sdk("client/stdio.js"));

let failed = 0;
function check(what, cond, why) {
	if (cond) {
		console.log(`PASS ${what}`);
	} else {
		failed++;
		console.log(`FAIL ${what}: ${why === undefined ? "" : typeof why === "string" ? why : JSON.stringify(why).slice(0, 600)}`);
	}
	return cond;
}

async function connect(args, env) {
	const transport = new StdioClientTransport({
		command: paddock, args, env: { ...process.env, ...env }, stderr: "inherit",
	});
	const client = new Client({ name: "paddock-mcp-test", version: "1.0.0" });
	await client.connect(transport);
	return client;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const names = (list) => list.tools.map((t) => t.name).sort();
// A tool's structured result (the SDK validated it against outputSchema).
async function call(client, name, args) {
	const r = await client.callTool({ name, arguments: args });
	return r;
}
// Waits until show_task says what until() wants (60 s at most).
async function until(client, id, want) {
	let t;
	for (let i = 0; i < 300; i++) {
		t = (await call(client, "show_task", { id })).structuredContent;
		if (want(t))
			return t;
		await sleep(200);
	}
	return t;
}
const noEscapes = (s) => !/[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/.test(s);

async function local() {
	// The default role: submit, so no decisions.
	let c = await connect(["mcp"], {});
	let tools = await c.listTools();
	check("default role submit: queue_task listed, approve and request_changes not",
	      names(tools).join(" ") === "gate_summary list_tasks queue_task show_task task_diff task_log",
	      names(tools));
	check("each tool has an inputSchema with additionalProperties false",
	      tools.tools.every((t) => t.inputSchema.type === "object" && t.inputSchema.additionalProperties === false));
	let r = await call(c, "approve", { id: "abcd" });
	check("approve above the role: isError, naming the role it needs",
	      r.isError === true && /needs the role review/.test(r.content[0].text), r);
	await c.close();

	c = await connect(["mcp", "--role", "review"], {});
	tools = await c.listTools();
	check("--role review lists all eight tools", names(tools).length === 8, names(tools));
	const tmpl = await c.listResourceTemplates();
	check("resources/templates/list: the diff and log templates",
	      tmpl.resourceTemplates.map((t) => t.uriTemplate).sort().join(" ") ===
	      "paddock://tasks/{id}/diff paddock://tasks/{id}/log", tmpl);

	r = await call(c, "queue_task", { repo: "nope", text: "x" });
	check("queue_task of an unknown repo: isError", r.isError === true, r);
	r = await call(c, "queue_task", { repo, text: "write notes\nsecond line" });
	const id = r.structuredContent && r.structuredContent.id;
	check("queue_task: an id, status queued", id && r.structuredContent.status === "queued", r);
	console.log(`TASK ${id}`);
	const text = JSON.parse(r.content[0].text);
	// A second task, left at review for an approve without a scheduler.
	const r2 = await call(c, "queue_task", { repo, text: "write more notes" });
	const id2 = r2.structuredContent && r2.structuredContent.id;
	console.log(`TASK2 ${id2}`);
	check("queue_task: the text content is the structured result as JSON", text.id === id, r.content);

	const l = await call(c, "list_tasks", { repo, limit: 5 });
	check("list_tasks lists it", l.structuredContent.tasks.some((t) => t.id === id), l);
	r = await call(c, "list_tasks", { status: "bogus" });
	check("list_tasks with a bad status: isError", r.isError === true, r);

	let t = await until(c, id, (t) => t.status === "review" || t.status === "failed");
	check("the task reaches review", t.status === "review", t.status);

	r = await call(c, "task_diff", { id });
	check("task_diff: the agent's change", /^\+a line/m.test(r.structuredContent.diff) &&
	      /notes\.txt/.test(r.content[0].text) && r.structuredContent.cut === false, r);
	r = await call(c, "task_log", { id, lines: 30 });
	const log = r.structuredContent.log;
	check("task_log: the tail, with the agent's words", /colour RED/.test(log) && r.structuredContent.lines > 0, log);
	check("task_log: no escape sequence or control left", noEscapes(log) && noEscapes(r.content[0].text), log);
	r = await call(c, "gate_summary", { id });
	check("gate_summary: at review, round 1, a gate", r.structuredContent.status === "review" &&
	      r.structuredContent.round === 1 && r.structuredContent.gate !== null, r.structuredContent);

	const res = await c.listResources();
	check("resources/list: the task's diff and log",
	      res.resources.some((x) => x.uri === `paddock://tasks/${id}/diff`) &&
	      res.resources.some((x) => x.uri === `paddock://tasks/${id}/log`), res);
	const rd = await c.readResource({ uri: `paddock://tasks/${id}/diff` });
	check("resources/read of the diff", /notes\.txt/.test(rd.contents[0].text), rd);
	try {
		await c.readResource({ uri: "paddock://tasks/ffffffff/log" });
		check("resources/read of an unknown task: -32002", false, "no error");
	} catch (e) {
		check("resources/read of an unknown task: -32002", e.code === -32002, String(e));
	}

	r = await call(c, "request_changes", { id, notes: "   " });
	check("request_changes with blank notes: isError", r.isError === true, r);
	r = await call(c, "request_changes", { id, notes: "add a second line" });
	check("request_changes: round 2 asked", !r.isError && r.structuredContent.round === 2, r);
	t = await until(c, id, (t) => (t.round === 2 && t.status === "review" && !t.pending) || t.status === "failed");
	check("round 2 reaches review", t.round === 2 && t.status === "review", [t.status, t.round]);

	r = await call(c, "approve", { id, notes: "fine" });
	check("approve: done", !r.isError && r.structuredContent.status === "done", r);
	t = (await call(c, "show_task", { id })).structuredContent;
	check("the approval is a decision of mcp:USER",
	      t.decisions.some((d) => d.action === "approve" && /^mcp:/.test(d.actor)), t.decisions);
	t = await until(c, id2, (t) => t.status === "review" || t.status === "failed");
	check("the second task reaches review", t.status === "review", t.status);
	await c.close();
}

async function remote() {
	const args = ["--server", url, "mcp"];
	let c = await connect(args, { PADDOCK_TOKEN: readToken });
	let tools = await c.listTools();
	check("remote, a read token: no queue_task, approve or request_changes",
	      names(tools).join(" ") === "gate_summary list_tasks show_task task_diff task_log", names(tools));
	let r = await call(c, "queue_task", { repo, text: "not allowed" });
	check("remote, a read token: queue_task refused (isError, the role it needs)",
	      r.isError === true && /submit/.test(r.content[0].text), r);
	r = await call(c, "list_tasks", {});
	check("remote, a read token: list_tasks", !r.isError && r.structuredContent.tasks.length > 0, r);
	await c.close();

	c = await connect(args, { PADDOCK_TOKEN: reviewToken });
	tools = await c.listTools();
	check("remote, a review token: all eight tools", names(tools).length === 8, names(tools));
	// A repo whose reviewers the token is not: the API's 403 comes back.
	r = await call(c, "queue_task", { repo: "guarded", text: "write notes where rev may not decide" });
	const guarded = r.structuredContent && r.structuredContent.id;
	r = await call(c, "queue_task", { repo, text: "write notes remotely" });
	const id = r.structuredContent && r.structuredContent.id;
	check("remote queue_task: an id", !r.isError && id, r);
	console.log(`TASK ${id}`);
	let t = await until(c, id, (t) => t.status === "review" || t.status === "failed");
	check("remote: the task reaches review", t.status === "review", t.status);
	r = await call(c, "task_diff", { id });
	check("remote task_diff", /notes\.txt/.test(r.structuredContent.diff), r);
	r = await call(c, "task_log", { id, lines: 10 });
	check("remote task_log: no escape sequences", !r.isError && noEscapes(r.structuredContent.log), r);
	r = await call(c, "gate_summary", { id });
	check("remote gate_summary: at review", r.structuredContent.status === "review", r);
	r = await call(c, "approve", { id });
	check("remote approve: done", !r.isError && r.structuredContent.status === "done", r);
	r = await call(c, "approve", { id });
	check("remote approve again: the API's refusal as isError", r.isError === true, r);
	t = await until(c, guarded, (t) => t.status === "review" || t.status === "failed");
	r = await call(c, "approve", { id: guarded });
	check("remote approve where the token is not among the repo's reviewers: the API's 403 as isError",
	      r.isError === true && /may not decide the gates of repo guarded/.test(r.content[0].text), r);
	await c.close();
}

try {
	await (mode === "remote" ? remote() : local());
} catch (e) {
	check("no exception", false, String(e && e.stack || e));
}
process.exit(failed ? 1 : 0);
