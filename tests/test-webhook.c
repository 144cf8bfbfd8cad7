/* test-webhook: the webhook's signature (RFC 4231 vectors), delivery ids,
 * payload, the [webhook] section of the configuration, and the queue in
 * the store (due, retry, give up, delivered). */
#include "autoconfig.h"
#include "webhook.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "store.h"
#include "tap.h"
#include "testlib.h"

static const char *dir;
static int nfiles;

/* Loads config text into c; returns the error with the path replaced by
 * "F", or "" when the load succeeds. */
static const char *load(struct config *c, const char *text)
{
	static char msg[ERR_MAX + 16];
	char path[512];
	struct err e = { { 0 } };
	snprintf(path, sizeof path, "%s/config-%d", dir, ++nfiles);
	testlib_write(path, text, strlen(text));
	if (config_load(c, path, &e) == 0)
		return "";
	size_t plen = strlen(path);
	if (strncmp(e.msg, path, plen) == 0)
		snprintf(msg, sizeof msg, "F%s", e.msg + plen);
	else
		snprintf(msg, sizeof msg, "%s", e.msg);
	return msg;
}

static void test_sign(void)
{
	char sig[WEBHOOK_SIG_LEN];
	/* RFC 4231, test case 2. */
	const char *data = "what do ya want for nothing?";
	webhook_sign("Jefe", 4, data, strlen(data), sig);
	is_str(sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
	       "HMAC-SHA256 of RFC 4231 case 2");
	/* RFC 4231, test case 1: a binary key. */
	unsigned char key[20];
	memset(key, 0x0b, sizeof key);
	webhook_sign(key, sizeof key, "Hi There", 8, sig);
	is_str(sig, "sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
	       "HMAC-SHA256 of RFC 4231 case 1");
	/* RFC 4231, test case 6: a key longer than the block. */
	unsigned char big[131];
	memset(big, 0xaa, sizeof big);
	data = "Test Using Larger Than Block-Size Key - Hash Key First";
	webhook_sign(big, sizeof big, data, strlen(data), sig);
	is_str(sig, "sha256=60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
	       "HMAC-SHA256 of RFC 4231 case 6 (key longer than a block)");
	char other[WEBHOOK_SIG_LEN];
	webhook_sign("Jefe", 4, "what do ya want for nothing!", 28, other);
	ok(strcmp(other, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
	   "one byte of the body changes the signature");
}

static void test_delivery_id(void)
{
	char a[WEBHOOK_DELIVERY_LEN], b[WEBHOOK_DELIVERY_LEN];
	webhook_delivery_id(a);
	webhook_delivery_id(b);
	is_int((long long)strlen(a), 36, "a delivery id has 36 characters");
	ok(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-' && a[14] == '4' &&
	   strspn(a, "0123456789abcdef-") == 36, "it is a version-4 UUID (%s)", a);
	ok(strcmp(a, b) != 0, "two delivery ids differ");
}

static void test_payload(void)
{
	struct task_row t;
	memset(&t, 0, sizeof t);
	strcpy(t.id, "abcd123456");
	t.repo = "calc";
	t.agent = "claude";
	t.branch = "paddock/abcd123456";
	t.head = "0123456789abcdef0123456789abcdef01234567";
	t.status = TASK_FAILED;
	t.error = "tests: 2 failed\nFAIL test_add";
	t.reason = "tests";
	t.round = 2;
	t.summary = "Fixed \"add\" \xc3\xa9";
	t.metadata = "{\"thread\": \"C123/1700000000.1\", \"n\": 3}";
	char *body = webhook_payload(&t, WEBHOOK_FAILED, 1700000000.7, "d-1");
	json_error_t je;
	json_t *j = json_loads(body, 0, &je);
	ok(j != NULL, "the payload is JSON");
	ok(!strchr(body, '\n') && !strncmp(body, "{\"event\":\"failed\",\"round\":2,\"task\":{\"id\":", 37),
	   "compact, on one line, event first");
	is_str(json_string_value(json_object_get(j, "event")), "failed", "event");
	ok(json_is_integer(json_object_get(j, "time")) &&
	   json_integer_value(json_object_get(j, "time")) == 1700000000, "time in whole unix seconds");
	is_str(json_string_value(json_object_get(j, "delivery")), "d-1", "delivery");
	json_t *task = json_object_get(j, "task");
	is_str(json_string_value(json_object_get(task, "id")), "abcd123456", "task.id");
	is_str(json_string_value(json_object_get(task, "repo")), "calc", "task.repo");
	is_str(json_string_value(json_object_get(task, "agent")), "claude", "task.agent");
	is_str(json_string_value(json_object_get(task, "status")), "failed", "task.status");
	is_str(json_string_value(json_object_get(task, "branch")), "paddock/abcd123456", "task.branch");
	is_str(json_string_value(json_object_get(task, "head")), t.head, "task.head");
	is_str(json_string_value(json_object_get(task, "error")), t.error,
	       "task.error, all its lines");
	is_str(json_string_value(json_object_get(task, "reason")), "tests", "task.reason");
	is_int(json_integer_value(json_object_get(task, "round")), 2, "task.round");
	is_str(json_string_value(json_object_get(task, "summary")), t.summary,
	       "task.summary, quotes and UTF-8 intact");
	is_str(json_string_value(json_object_get(task, "url")), "/tasks/abcd123456", "task.url");
	ok(json_is_null(json_object_get(task, "pr_url")), "a missing pr_url is null");
	ok(json_is_null(json_object_get(task, "pr_error")) &&
	   json_integer_value(json_object_get(task, "pr_attempts")) == 0 &&
	   json_is_integer(json_object_get(task, "pr_attempts")) &&
	   json_is_null(json_object_get(task, "pr_retry_at")),
	   "no pull request failure: pr_error null, pr_attempts 0, pr_retry_at null");
	is_int((long long)json_object_size(task), 18, "task has exactly the 18 documented fields");
	is_int((long long)json_object_size(j), 6,
	       "the body has exactly event, round, task, metadata, time, delivery");
	is_int(json_integer_value(json_object_get(j, "round")), 2, "round, at the top");
	json_t *md = json_object_get(j, "metadata");
	ok(json_is_object(md) && !strcmp(json_string_value(json_object_get(md, "thread")),
	   "C123/1700000000.1") && json_integer_value(json_object_get(md, "n")) == 3,
	   "the task's metadata comes back as the object it was");
	json_decref(j);
	free(body);

	is_int(webhook_event_of(TASK_REVIEW), WEBHOOK_REVIEW, "review sends review");
	is_int(webhook_event_of(TASK_FAILED), WEBHOOK_FAILED, "failed sends failed");
	is_int(webhook_event_of(TASK_DONE), WEBHOOK_DONE, "done sends done");
	is_int(webhook_event_of(TASK_RUNNING), -1, "running sends nothing");
	is_int(webhook_event_of(TASK_REJECTED), WEBHOOK_REJECTED, "rejected sends rejected");
	is_int(webhook_event_of(TASK_CANCELLED), WEBHOOK_CANCELLED, "cancelled sends cancelled");
	is_int(webhook_event_of(TASK_LOST), WEBHOOK_LOST, "lost sends lost");
	is_int(webhook_event_of(TASK_TESTING), WEBHOOK_AGENT_FINISHED,
	       "testing (the agent finished) sends agent-finished");
	is_str(webhook_event_name(WEBHOOK_AGENT_FINISHED), "agent-finished", "its name");

	/* A done task whose pull request failed to open (issue 36). */
	t.status = TASK_DONE;
	t.pr_error = "GitHub failed (500 Server Error)";
	t.pr_attempts = 2;
	t.pr_retry_at = 1700000120.5;
	body = webhook_payload(&t, WEBHOOK_PR_FAILED, 1700000000, "d-2");
	j = json_loads(body, 0, &je);
	task = json_object_get(j, "task");
	is_str(json_string_value(json_object_get(j, "event")), "pull-request-failed",
	       "the event pull-request-failed");
	is_str(json_string_value(json_object_get(task, "pr_error")), t.pr_error, "task.pr_error");
	is_int(json_integer_value(json_object_get(task, "pr_attempts")), 2, "task.pr_attempts");
	is_int(json_integer_value(json_object_get(task, "pr_retry_at")), 1700000120,
	       "task.pr_retry_at, in whole unix seconds");
	json_decref(j);
	free(body);
}

static void test_config(void)
{
	struct config c;
	is_str(load(&c, ""), "", "no [webhook]");
	ok(c.wh_url == NULL, "webhooks are off by default");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = https://chat.example.com/hooks/x\n"), "", "a url alone");
	is_str(c.wh_url, "https://chat.example.com/hooks/x", "url");
	is_int(c.wh_events, CONFIG_WEBHOOK_ALL, "events default to all nine");
	ok(c.wh_timeout == 10, "timeout defaults to 10s");
	is_int(c.wh_attempts, 8, "attempts default to 8");
	ok(!c.wh_secret_env && !c.wh_secret_file, "no secret named");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://127.0.0.1:9/h\n\tevents = review\n\tevents = done\n"
	            "\ttimeout = 3s\n\tattempts = 2\n\tsecret-env = MY_SECRET\n"), "",
	       "every key");
	is_int(c.wh_events, CONFIG_WEBHOOK_REVIEW | CONFIG_WEBHOOK_DONE,
	       "two events lines select two events");
	ok(c.wh_timeout == 3, "timeout");
	is_int(c.wh_attempts, 2, "attempts");
	is_str(c.wh_secret_env, "MY_SECRET", "secret-env");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tevents = failed, done\n"), "",
	       "a comma-separated events value");
	is_int(c.wh_events, CONFIG_WEBHOOK_FAILED | CONFIG_WEBHOOK_DONE, "selects both");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tevents = pull-request-failed\n"), "",
	       "events = pull-request-failed");
	is_int(c.wh_events, CONFIG_WEBHOOK_PR_FAILED, "selects it");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tevents = gate-reminder\n"), "",
	       "events = gate-reminder");
	is_int(c.wh_events, CONFIG_WEBHOOK_GATE_REMINDER, "selects it");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tevents = review, merged\n"),
	       "F:3: webhook.events: 'merged' is not an event; use review, failed, done, cancelled, rejected, lost, agent-finished, pull-request-failed, gate-reminder or all (several separated by commas)",
	       "an unknown event");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\tevents = review\n"),
	       "F:1: [webhook] has no url; add url = URL under [webhook] (the chat or service that receives the POSTs)",
	       "a [webhook] without url");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = ftp://h/x\n"),
	       "F:2: webhook.url: 'ftp://h/x' is not an http(s) URL such as https://chat.example.com/hooks/paddock",
	       "an ftp url");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tattempts = 21\n"),
	       "F:3: webhook.attempts: '21' is not a number from 1 to 20", "attempts over 20");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\ttimeout = 0\n"),
	       "F:3: webhook.timeout: '0' is not a duration from 1s to 10m (for example 10s)",
	       "timeout 0");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tsecret-file = secret.txt\n"),
	       "F:3: webhook.secret-file: 'secret.txt' is not an absolute path", "relative secret-file");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tsecret-env = S\n\tsecret-file = /s\n"),
	       "F:4: webhook: secret-env and secret-file are both set; keep one", "two secrets");
	config_free(&c);
	is_str(load(&c, "[webhook]\n\turl = http://h/\n\tsecert-env = S\n"),
	       "F:3: unknown key 'webhook.secert-env'; did you mean 'webhook.secret-env'?",
	       "a misspelt key");
	config_free(&c);
	is_str(load(&c, "[webhook \"chat\"]\n\turl = http://h/\n"),
	       "F:1: [webhook \"chat\"]: section webhook takes no name; write [webhook]",
	       "[webhook] takes no name");
	config_free(&c);
}

static void test_queue(void)
{
	char db[512];
	snprintf(db, sizeof db, "%s/paddock.db", dir);
	struct err e = { { 0 } };
	struct store *s;
	if (store_open(&s, db, &e) < 0) {
		ok(0, "open the store: %s", e.msg);
		return;
	}
	char id[TASK_ID_LEN + 1];
	store_task_add(s, "calc", "fixer", "Fix it", NULL, id, &e);
	store_task_transition(s, id, TASK_PREPARING, NULL, &e);
	store_task_transition(s, id, TASK_FAILED, "preparing: no repo", &e);
	store_task_set(s, id, "reason", "setup", &e);

	struct config c;
	config_init_defaults(&c);
	struct webhook_row *r;
	size_t n;
	is_int(webhook_enqueue(&c, s, id, TASK_FAILED, &e), 0, "enqueue without a url");
	store_webhook_list(s, id, &r, &n, &e);
	is_int((long long)n, 0, "queues nothing");
	store_webhooks_free(r, n);

	c.wh_url = xstrdup("http://127.0.0.1:9/hook");
	c.wh_events = CONFIG_WEBHOOK_REVIEW;
	is_int(webhook_enqueue(&c, s, id, TASK_FAILED, &e), 0, "enqueue an event not selected");
	store_webhook_list(s, id, &r, &n, &e);
	is_int((long long)n, 0, "queues nothing");
	store_webhooks_free(r, n);
	is_int(webhook_enqueue(&c, s, id, TASK_CANCELLED, &e), 0, "cancelled is no event");

	c.wh_events = CONFIG_WEBHOOK_ALL;
	double t0 = (double)time(NULL);
	is_int(webhook_enqueue(&c, s, id, TASK_FAILED, &e), 0, "enqueue failed");
	store_webhook_list(s, id, &r, &n, &e);
	is_int((long long)n, 1, "one delivery queued");
	if (n == 1) {
		is_str(r[0].event, "failed", "its event");
		is_int(r[0].attempts, 0, "no attempt yet");
		ok(r[0].next_at >= t0 - 1 && r[0].next_at <= t0 + 5, "due at once");
		json_t *j = json_loads(r[0].body, 0, NULL);
		json_t *task = json_object_get(j, "task");
		is_str(json_string_value(json_object_get(task, "error")), "preparing: no repo",
		       "the body has the task's error");
		is_str(json_string_value(json_object_get(task, "reason")), "setup",
		       "and its reason");
		is_str(json_string_value(json_object_get(j, "delivery")), r[0].delivery,
		       "the body's delivery is the row's");
		json_decref(j);
	}
	long long wid = n == 1 ? r[0].id : 0;
	store_webhooks_free(r, n);

	/* t0 is whole seconds and the row's time is not: a second can turn
	 * between them, so "at once" is within the same 5 s as above. */
	store_webhook_due(s, t0 + 5, &r, &n, &e);
	is_int((long long)n, 1, "it is due");
	store_webhooks_free(r, n);
	is_int(store_webhook_retry(s, wid, t0 + 100, "HTTP 500", 500, &e), 0, "a failed try");
	store_webhook_due(s, t0 + 50, &r, &n, &e);
	is_int((long long)n, 0, "not due before its next try");
	store_webhooks_free(r, n);
	double next;
	store_webhook_next(s, &next, &e);
	ok(next == t0 + 100, "the next try is known");
	store_webhook_due(s, t0 + 100, &r, &n, &e);
	is_int((long long)n, 1, "due again at its next try");
	if (n == 1) {
		is_int(r[0].attempts, 1, "one attempt counted");
		is_str(r[0].last_error, "HTTP 500", "its error kept");
	}
	store_webhooks_free(r, n);
	is_int(store_webhook_done(s, wid, 204, &e), 0, "delivered");
	struct webhook_attempt *at;
	size_t nat = 0;
	is_int(store_webhook_attempts(s, wid, &at, &nat, &e), 0, "the delivery's log reads");
	ok(nat == 2 && at[0].status == 500 && at[0].error && !strcmp(at[0].error, "HTTP 500") &&
	   at[1].status == 204 && !at[1].error && at[0].at > 0 && at[1].at >= at[0].at,
	   "its log has both tries in order: HTTP 500 with its error, then 204");
	store_webhook_attempts_free(at, nat);
	store_webhook_due(s, t0 + 1e6, &r, &n, &e);
	is_int((long long)n, 0, "a delivered one is never due");
	store_webhooks_free(r, n);
	store_webhook_list(s, id, &r, &n, &e);
	ok(n == 1 && r[0].attempts == 2 && r[0].delivered_at > 0 && r[0].next_at == 0,
	   "it shows two attempts and when it was delivered");
	store_webhooks_free(r, n);

	webhook_enqueue(&c, s, id, TASK_FAILED, &e);
	store_webhook_list(s, id, &r, &n, &e);
	wid = n == 2 ? r[1].id : 0;
	ok(n == 2 && strcmp(r[0].delivery, r[1].delivery), "each delivery has its own id");
	store_webhooks_free(r, n);
	store_webhook_retry(s, wid, 0, "connection refused", 0, &e);
	store_webhook_due(s, t0 + 1e6, &r, &n, &e);
	is_int((long long)n, 0, "one given up is never due");
	store_webhooks_free(r, n);
	store_webhook_list(s, NULL, &r, &n, &e);
	ok(n == 2 && r[1].delivered_at == 0 && r[1].next_at == 0 &&
	   r[1].last_error && !strcmp(r[1].last_error, "connection refused"),
	   "it keeps its last error, undelivered");
	store_webhooks_free(r, n);
	config_free(&c);
	store_close(s);
}

int main(void)
{
	dir = testlib_tmpdir("webhook");
	test_sign();
	test_delivery_id();
	test_payload();
	test_config();
	test_queue();
	testlib_end();
	return tap_done();
}
