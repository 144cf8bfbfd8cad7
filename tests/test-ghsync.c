/* Unit tests: GitHub as a front door without the network (ghsync.h,
 * store_github.h): the webhook signature (right, wrong, cut, another
 * secret, upper-case hex), mentions of the handle, the store's GitHub
 * tables (one task per issue, each review acted on once, the ETag cache,
 * back-offs kept, the asks and their answers, events and deliveries), a
 * request for changes on a done task's pull request (back to review, only
 * when its last round was pushed), and a round asked on GitHub going to
 * the pull request as approval auto would; agent text quoted for GitHub
 * (github_quote) in a code block it cannot end; the pull request's errors
 * that need no server, and a back-off in the store holding it back. */
#include "autoconfig.h"
#include "ghsync.h"

#include <stdlib.h>
#include <string.h>

#include "autogate.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "github.h"
#include "move.h"
#include "paths.h"
#include "store_github.h"
#include "tap.h"
#include "testlib.h"
#include "webhook.h"

static struct store *st;
static struct config cfg;

#define BASE "1111111111111111111111111111111111111111"
#define HEAD "2222222222222222222222222222222222222222"

static void test_signature(void)
{
	const char *body = "{\"action\":\"opened\"}";
	char sig[WEBHOOK_SIG_LEN];
	webhook_sign("s3cret", 6, body, strlen(body), sig);
	ok(ghsync_signature_ok("s3cret", body, strlen(body), sig), "the body's HMAC-SHA256 "
	   "under the secret verifies");
	char upper[WEBHOOK_SIG_LEN];
	for (size_t i = 0; i < sizeof upper; i++)
		upper[i] = (char)(i > 6 && sig[i] >= 'a' && sig[i] <= 'f' ? sig[i] - 32 : sig[i]);
	ok(ghsync_signature_ok("s3cret", body, strlen(body), upper), "upper-case hex too");
	ok(!ghsync_signature_ok("other", body, strlen(body), sig), "another secret does not");
	ok(!ghsync_signature_ok("s3cret", "{\"action\":\"closed\"}", 19, sig), "another body does "
	   "not");
	char cut[WEBHOOK_SIG_LEN];
	memcpy(cut, sig, sizeof cut);
	cut[WEBHOOK_SIG_LEN - 2] = '\0';
	ok(!ghsync_signature_ok("s3cret", body, strlen(body), cut), "a signature cut short does "
	   "not");
	ok(!ghsync_signature_ok("s3cret", body, strlen(body), sig + 7), "the hex without "
	   "sha256= does not");
	ok(!ghsync_signature_ok("s3cret", body, strlen(body), NULL), "no signature does not");
	ok(!ghsync_signature_ok("", body, strlen(body), sig), "an empty secret verifies nothing");
}

static void test_mentions(void)
{
	ok(ghsync_mentions("@paddock-bot please rename x", "paddock-bot"), "a mention at the "
	   "start");
	ok(ghsync_mentions("please, @Paddock-Bot: rename", "paddock-bot"), "in any case, "
	   "followed by punctuation");
	ok(!ghsync_mentions("@paddock-bots rename", "paddock-bot"), "not a longer login");
	ok(!ghsync_mentions("mail ops@paddock-bot.example", "paddock-bot"), "not an e-mail "
	   "address");
	ok(!ghsync_mentions("paddock-bot, rename", "paddock-bot"), "not without the @");
	ok(!ghsync_mentions("@paddock-bot", NULL), "no handle: nothing mentions it");
}

/* A task of repo r with its round 1 done at HEAD, at review. */
static void at_review(char id[TASK_ID_LEN + 1])
{
	struct err e = {{0}};
	struct mover m = { .cfg = &cfg, .st = st };
	struct task_new n = { .repo = "r", .agent = "good", .text = "Fix the crash",
	                      .budget = -1, .fix_rounds = -1 };
	size_t queued;
	char gate[] = "{\"round\":1,\"branch\":\"paddock/x\",\"from\":\"" BASE "\",\"head\":\"" HEAD
	              "\",\"summary\":\"Fixed.\",\"diffstat\":\"\",\"tests\":{\"before\":{\"ran\":"
	              "false},\"after\":{\"ran\":true,\"passed\":true,\"tail\":\"\",\"log\":\"\","
	              "\"exit\":0,\"verified\":true}},\"agent\":{\"ran\":false},\"mismatch\":false,"
	              "\"findings\":[]}";
	if (store_task_create(st, &n, id, &queued, &e) < 0 || move_start(&m, id, "r", &e) < 0 ||
	    store_task_set_base(st, id, BASE, &e) < 0 ||
	    store_round_begin(st, id, 1, BASE, &e) < 0 || store_task_set_head(st, id, HEAD, &e) < 0 ||
	    store_round_end(st, id, 1, HEAD, gate, &e) < 0 ||
	    move_task(&m, id, TASK_RUNNING, NULL, &e) < 0 ||
	    move_task(&m, id, TASK_REVIEW, NULL, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
}

static enum task_status status_of(const char *id)
{
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(st, id, &t, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
	enum task_status s = t.status;
	task_row_free(&t);
	return s;
}

static void test_links(void)
{
	char a[TASK_ID_LEN + 1], b[TASK_ID_LEN + 1], got[TASK_ID_LEN + 1] = "";
	struct err e = {{0}};
	at_review(a);
	at_review(b);
	struct gh_link l = { .gh_repo = "acme/widgets", .issue = 3 };
	snprintf(l.task_id, sizeof l.task_id, "%s", a);
	is_int(store_github_link_put(st, &l, &e), 0, "task A is issue #3's");
	is_int(store_github_issue_task(st, "acme/widgets", 3, got, &e), 1, "the issue has a task");
	is_str(got, a, "task A");
	snprintf(l.task_id, sizeof l.task_id, "%s", b);
	is_int(store_github_link_put(st, &l, &e), -2, "another task cannot have the same issue");
	ok(strstr(e.msg, "acme/widgets#3") != NULL, "and the message names it: %s", e.msg);
	is_int(store_github_issue_task(st, "acme/other", 3, got, &e), 0, "#3 of another "
	       "repository is another issue");
	struct gh_link r;
	is_int(store_github_link(st, a, &r, &e), 1, "A's link reads back");
	ok(r.issue == 3 && !r.pr && !r.pr_state, "issue 3, no pull request yet");
	r.pr = 7;
	r.pr_state = strdup("open");
	r.checks = strdup("pending");
	is_int(store_github_link_put(st, &r, &e), 0, "its pull request #7 is recorded");
	gh_link_free(&r);
	struct gh_link *live;
	size_t n;
	is_int(store_github_links_live(st, "acme/widgets", &live, &n, &e), 0, "the live links");
	is_int((int)n, 1, "one: an open pull request");
	live[0].pr_state = (free(live[0].pr_state), strdup("merged"));
	live[0].issue_comment_body = strdup("done <!-- paddock:final -->");
	store_github_link_put(st, &live[0], &e);
	gh_links_free(live, n);
	is_int(store_github_links_live(st, "acme/widgets", &live, &n, &e), 0, "again");
	is_int((int)n, 0, "a merged pull request whose comment says the end is not live");
	gh_links_free(live, n);
}

static void test_seen_and_cache(void)
{
	struct err e = {{0}};
	is_int(store_github_seen_add(st, "acme/widgets", "review", 17, NULL, &e), 1, "review 17 "
	       "is new");
	is_int(store_github_seen_add(st, "acme/widgets", "review", 17, NULL, &e), 0, "and seen "
	       "the second time");
	is_int(store_github_seen(st, "acme/widgets", "review_comment", 17, &e), 0, "a review "
	       "comment 17 is another thing");
	char *etag, *body, *link;
	is_int(store_github_etag(st, "https://x/issues", &etag, &body, &link, &e), 0, "no ETag "
	       "yet");
	store_github_etag_put(st, "https://x/issues", "\"v1\"", "[1]", "<https://x/2>; rel=\"next\"",
	                      &e);
	is_int(store_github_etag(st, "https://x/issues", &etag, &body, &link, &e), 1, "an ETag");
	ok(!strcmp(etag, "\"v1\"") && !strcmp(body, "[1]") && strstr(link, "rel=\"next\""),
	   "with its body and Link header");
	free(etag), free(body), free(link);
	double until;
	char *why;
	is_int(store_github_backoff(st, "https://api", &until, &why, &e), 0, "no back-off");
	store_github_backoff_set(st, "https://api", 1234.5, "secondary rate limit", &e);
	is_int(store_github_backoff(st, "https://api", &until, &why, &e), 1, "a back-off kept");
	ok(until == 1234.5 && !strcmp(why, "secondary rate limit"), "until when, and why");
	free(why);
	struct gh_event ev = { .source = "webhook", .event = "issues", .delivery = "d-1",
	                       .verdict = "refused", .detail = "bad signature" };
	store_github_event_add(st, &ev, &e);
	is_int(store_github_delivery_seen(st, "d-1", &e), 0, "a refused delivery may come again");
	ev.verdict = "task";
	store_github_event_add(st, &ev, &e);
	is_int(store_github_delivery_seen(st, "d-1", &e), 1, "one acted on is a duplicate after");
	struct gh_event *list;
	size_t n;
	store_github_events(st, 1, &list, &n, &e);
	ok(n == 1 && !strcmp(list[0].verdict, "task"), "events: newest first, as many as asked");
	gh_events_free(list, n);
}

static void test_reopen(void)
{
	char id[TASK_ID_LEN + 1];
	struct err e = {{0}};
	at_review(id);
	struct mover m = { .cfg = &cfg, .st = st };
	move_task(&m, id, TASK_DONE, NULL, &e);
	is_int(store_task_reopen_changes(st, id, "rename x", "github:alice", &e), -1,
	       "a done task whose round was not pushed takes no request");
	ok(strstr(e.msg, "not pushed") != NULL, "and says why: %s", e.msg);
	store_task_set(st, id, "pushed", HEAD, &e);
	store_task_set(st, id, "pr_url", "https://github.example/acme/widgets/pull/7", &e);
	is_int(store_task_reopen_changes(st, id, "rename x", "github:alice", &e), 0,
	       "pushed: the request goes in (%s)", e.msg);
	is_int(status_of(id), TASK_REVIEW, "the task is back at review");
	struct task_row t;
	store_task_get(st, id, &t, &e);
	is_str(t.pending, "request-changes", "with the changes pending for the scheduler");
	task_row_free(&t);
	is_int(store_task_reopen_changes(st, id, "more", "github:alice", &e), -1, "a second "
	       "request before the round starts is refused");
	/* The round it asked for, at the gate: it goes to the pull request. */
	int round;
	store_task_resume(st, id, &round, &e);
	struct gh_ask ask = { .round = round, .kind = "review", .gh_id = 17, .pr = 7,
	                      .actor = "alice" };
	snprintf(ask.task_id, sizeof ask.task_id, "%s", id);
	is_int(store_github_ask_add(st, &ask, &e), 0, "round %d is asked on GitHub", round);
	is_int(store_github_ask_for(st, id, round, &e), 1, "and known as such");
	move_task(&m, id, TASK_REVIEW, NULL, &e);
	store_task_get(st, id, &t, &e);
	is_int(autogate_due(st, &t, &e), 1, "at the gate, a round asked on GitHub is due for "
	       "the auto gate, though the repo's approval is review");
	task_row_free(&t);
	struct gh_ask *open;
	size_t n;
	store_github_asks_open(st, &open, &n, &e);
	is_int((int)n, 1, "one ask waits for its answer");
	gh_asks_free(open, n);
	store_github_ask_answered(st, id, round, &e);
	store_github_asks_open(st, &open, &n, &e);
	is_int((int)n, 0, "none once answered");
	gh_asks_free(open, n);
}

/* The line of q between its opening and closing fence, which must be the
 * same run of backticks, longer than any run inside. */
static void test_quote(void)
{
	const char *evil = "@octocat ![x](http://127.0.0.1:1/i.png) [c](http://127.0.0.1:1/) "
	                   "<img src=x> `` ``` ```` \033]0;T\007 \xc2\x9b" "2J \xff";
	char *q = github_quote(evil, 1000);
	ok(!strncmp(q, "`````\n", 6), "the fence is one backtick longer than the longest run (4)");
	size_t n = strlen(q);
	ok(n > 12 && !strcmp(q + n - 6, "\n`````"), "... and closes the block on its own line");
	ok(strstr(q, "@octocat ![x](http://127.0.0.1:1/i.png) [c](http://127.0.0.1:1/) <img src=x>") &&
	   strchr(q, '\n') == q + 5 && strchr(q + 6, '\n') == q + n - 6,
	   "the text is inside, on its own line(s), and only there");
	ok(!strchr(q, '\033') && !strchr(q, '\007') && !strstr(q, "\xc2\x9b") && !strstr(q, "\xff"),
	   "no escape, C1 control or invalid UTF-8 is left: %s", q);
	free(q);
	q = github_quote("a\n```\n@octocat\n``````", 1000);
	ok(!strncmp(q, "```````\na\n```\n@octocat\n``````\n```````", 37) && strlen(q) == 37,
	   "a fence line inside does not end the block: %s", q);
	free(q);
	char big[600];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	big[199] = '\xc3';  /* a two-byte character cut by the cap */
	big[200] = '\xa4';
	q = github_quote(big, 200);
	ok(strlen(q) == 4 + 199 + strlen("…") + 4 && strstr(q, "a…\n```"),
	   "the cap cuts at a character and adds an ellipsis");
	free(q);
	q = github_quote(" \n", 100);
	is_str(q, "", "empty text quotes as nothing");
	free(q);
	q = github_quote(NULL, 100);
	is_str(q, "", "... and so does none");
	free(q);
}

/* The pull request's errors that need no server (the HTTP contract is in
 * tests/push.test). */
static void test_pull_request_errors(void)
{
	struct repo_conf r;
	struct err e;
	char *url = (char *)"unset";
	struct github_pull_request pr = { "paddock/t1", "Fix it", "body" };

	memset(&r, 0, sizeof r);
	r.name = "demo";
	r.url = "https://git.example.invalid/acme/widgets.git";
	r.branch = "main";
	r.github_token_env = "FORGE_TEST_GH_TOKEN";
	unsetenv("FORGE_TEST_GH_TOKEN");
	is_int(github_pull_request_open(&r, NULL, &pr, &url, &e), -1, "no github-repo: refused");
	ok(strstr(e.msg, "github-repo") != NULL, "... naming github-repo: %s", e.msg);
	ok(url == NULL, "... and no URL");

	r.github_repo = "acme/widgets";
	is_int(github_pull_request_open(&r, NULL, &pr, &url, &e), -1, "no token: refused");
	ok(strstr(e.msg, "set the environment variable FORGE_TEST_GH_TOKEN") != NULL,
	   "... naming the variable: %s", e.msg);

	setenv("FORGE_TEST_GH_TOKEN", "ghp_sekrit_value_1234", 1);
	r.github_api = "http://example.invalid/api/v3";
	is_int(github_pull_request_open(&r, NULL, &pr, &url, &e), -1,
	       "plain http to another host: refused");
	ok(strstr(e.msg, "plain http") != NULL, "... saying why: %s", e.msg);

	r.github_api = "http://127.0.0.1:1";
	is_int(github_pull_request_open(&r, NULL, &pr, &url, &e), -1,
	       "a closed port: a network error");
	ok(strstr(e.msg, "cannot reach GitHub at http://127.0.0.1:1/repos/acme/widgets/pulls") != NULL,
	   "... naming the URL: %s", e.msg);
	ok(strstr(e.msg, "ghp_sekrit_value_1234") == NULL, "... without the token");

	struct github_pull_request notitle = { "paddock/t1", "", "body" };
	is_int(github_pull_request_open(&r, NULL, &notitle, &url, &e), -1,
	       "an empty title: refused");

	/* A wait GitHub asked the sync for holds the pull request too: nothing
	 * is sent (the closed port is never tried) before it ends. */
	is_int(store_github_backoff_set(st, "http://127.0.0.1:1", clock_wall() + 600,
	                                "rate limit used up", &e), 0, "a back-off is recorded");
	is_int(github_pull_request_open(&r, st, &pr, &url, &e), -1,
	       "a pull request during a back-off: refused");
	ok(strstr(e.msg, "GitHub asked paddock to wait until ") != NULL &&
	   strstr(e.msg, "(rate limit used up); nothing is sent to http://127.0.0.1:1 before then"),
	   "... saying until when, and that nothing is sent before: %s", e.msg);
	ok(url == NULL, "... and no URL");
	unsetenv("FORGE_TEST_GH_TOKEN");
}

int main(void)
{
	char *dir = testlib_tmpdir("ghsync");
	char *db = paths_join(dir, "paddock.db", NULL);
	char *conf = paths_join(dir, "config", NULL);
	testlib_write_file(conf,
		"[repo \"r\"]\n"
		"\turl = https://git.example.invalid/acme/widgets.git\n"
		"\ttest = true\n"
		"\tpull-request = github\n"
		"\tgithub-repo = acme/widgets\n"
		"\tgithub-reviewers = alice, @acme/reviewers\n"
		"[agent \"good\"]\n"
		"\tcommand = true\n");
	struct err e = {{0}};
	if (config_load(&cfg, conf, &e) < 0 || store_open(&st, db, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
	test_signature();
	test_quote();
	test_mentions();
	test_links();
	test_seen_and_cache();
	test_reopen();
	test_pull_request_errors();
	store_close(st);
	config_free(&cfg);
	free(db);
	free(conf);
	testlib_end();
	return tap_done();
}
