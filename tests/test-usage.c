/* test-usage: token counts read from model responses as they stream by
 * (src/usage.h): Anthropic and OpenAI event streams cut at every byte,
 * plain JSON bodies, error bodies, oversized lines, and what it all costs. */
#include "autoconfig.h"
#include "usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "tap.h"

static const char anthropic_sse[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
	"\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
	"\"usage\":{\"input_tokens\":1200,\"cache_creation_input_tokens\":300,"
	"\"cache_read_input_tokens\":4000,\"output_tokens\":1}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
	"\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
	"\"text\":\"usage: {\\\"output_tokens\\\": 999} is only text\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
	"\"usage\":{\"output_tokens\":345}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

static const char responses_sse[] =
	"event: response.created\n"
	"data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\","
	"\"model\":\"gpt-5.1-codex\",\"status\":\"in_progress\",\"usage\":null}}\n"
	"\n"
	"event: response.output_text.delta\n"
	"data: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"hi\"}\n"
	"\n"
	"event: response.completed\n"
	"data: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\","
	"\"model\":\"gpt-5.1-codex\",\"status\":\"completed\",\"usage\":{\"input_tokens\":5000,"
	"\"input_tokens_details\":{\"cached_tokens\":3500},\"output_tokens\":200,"
	"\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":5200}}}\n"
	"\n";

static const char chat_sse[] =
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\","
	"\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],"
	"\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\","
	"\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\","
	"\"choices\":[],\"usage\":{\"prompt_tokens\":800,\"completion_tokens\":40,"
	"\"total_tokens\":840,\"prompt_tokens_details\":{\"cached_tokens\":300}}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

struct result {
	struct usage u;
	char model[128];
	char error[64];
	int changed;
};

/* Feeds text to a new parser in pieces cut at the given offsets (sorted,
 * ncut of them), then finishes. */
static struct result run_cuts(int sse, const char *text, size_t len, const size_t *cuts,
                              size_t ncut)
{
	struct result r;
	memset(&r, 0, sizeof r);
	struct usage_parser *p = usage_parser_new(sse);
	size_t at = 0;
	for (size_t i = 0; i <= ncut; i++) {
		size_t end = i < ncut ? cuts[i] : len;
		r.changed |= usage_parser_feed(p, text + at, end - at);
		at = end;
	}
	r.changed |= usage_parser_finish(p);
	r.u = *usage_parser_usage(p);
	snprintf(r.model, sizeof r.model, "%s", usage_parser_model(p));
	snprintf(r.error, sizeof r.error, "%s", usage_parser_error(p));
	usage_parser_free(p);
	return r;
}

static struct result run(int sse, const char *text)
{
	return run_cuts(sse, text, strlen(text), NULL, 0);
}

static int same(const struct result *a, const struct result *b)
{
	return memcmp(&a->u, &b->u, sizeof a->u) == 0 && strcmp(a->model, b->model) == 0 &&
	       strcmp(a->error, b->error) == 0;
}

/* The whole text in one piece must give want; then every cut into two
 * pieces, every cut into three (a sample), and one byte at a time. */
static void every_chunking(int sse, const char *text, const char *what)
{
	size_t len = strlen(text);
	struct result whole = run(sse, text);
	int bad2 = 0, bad3 = 0;
	for (size_t i = 0; i <= len; i++) {
		struct result r = run_cuts(sse, text, len, &i, 1);
		if (!same(&r, &whole) && bad2++ == 0)
			printf("# %s: a cut at byte %zu gives another result\n", what, i);
	}
	ok(bad2 == 0, "%s: the same counts whatever the cut into two pieces (%zu cuts)", what,
	   len + 1);
	for (size_t i = 0; i <= len; i += 7) {
		for (size_t j = i; j <= len; j += 13) {
			size_t cuts[2] = { i, j };
			struct result r = run_cuts(sse, text, len, cuts, 2);
			if (!same(&r, &whole) && bad3++ == 0)
				printf("# %s: cuts at %zu and %zu give another result\n", what, i, j);
		}
	}
	ok(bad3 == 0, "%s: the same counts when cut into three pieces", what);
	size_t *cuts = malloc(len * sizeof *cuts);
	for (size_t i = 0; i < len; i++)
		cuts[i] = i;
	struct result r = run_cuts(sse, text, len, cuts, len);
	free(cuts);
	ok(same(&r, &whole), "%s: the same counts fed one byte at a time", what);
}

static char *crlf(const char *text)
{
	size_t n = strlen(text);
	char *out = malloc(2 * n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '\n')
			*o++ = '\r';
		*o++ = text[i];
	}
	*o = '\0';
	return out;
}

static void test_anthropic(void)
{
	struct result r = run(1, anthropic_sse);
	is_int(r.u.input, 1200, "anthropic stream: input tokens from message_start");
	is_int(r.u.cache_read, 4000, "anthropic stream: cache reads from message_start");
	is_int(r.u.cache_write, 300, "anthropic stream: cache writes from message_start");
	is_int(r.u.output, 345, "anthropic stream: output tokens from message_delta (not 999 "
	       "from the text, not 1 from message_start)");
	is_str(r.model, "claude-sonnet-4-5", "anthropic stream: the model");
	is_str(r.error, "", "anthropic stream: no error");
	ok(r.changed, "anthropic stream: feed reported a change");
	every_chunking(1, anthropic_sse, "anthropic stream");

	/* The feed that completes message_start reports a change, mid-stream. */
	struct usage_parser *p = usage_parser_new(1);
	const char *delta = strstr(anthropic_sse, "event: content_block_start");
	const char *msgdelta = strstr(anthropic_sse, "event: message_delta");
	ok(usage_parser_feed(p, anthropic_sse, (size_t)(delta - anthropic_sse)) == 1,
	   "feed returns 1 once message_start is complete");
	is_int(usage_parser_usage(p)->input, 1200, "... and the input count is there mid-stream");
	is_int(usage_parser_usage(p)->output, 1, "... with message_start's output count");
	ok(usage_parser_feed(p, delta, (size_t)(msgdelta - delta)) == 0,
	   "feed returns 0 for events without usage");
	ok(usage_parser_feed(p, msgdelta, strlen(msgdelta)) == 1,
	   "feed returns 1 for message_delta's usage");
	ok(usage_parser_finish(p) == 0, "finish after a complete stream changes nothing");
	is_int(usage_parser_usage(p)->output, 345, "... and the counts stay");
	usage_parser_free(p);

	char *c = crlf(anthropic_sse);
	r = run(1, c);
	ok(r.u.input == 1200 && r.u.output == 345 && r.u.cache_read == 4000 &&
	   r.u.cache_write == 300, "anthropic stream with CRLF lines: the same counts");
	is_str(r.model, "claude-sonnet-4-5", "... and the model (no CR in it)");
	every_chunking(1, c, "anthropic stream with CRLF");
	free(c);

	/* A stream cut before its last newline: finish reads the last line. */
	const char *tail = "event: message_delta\n"
	                   "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":77}}";
	p = usage_parser_new(1);
	ok(usage_parser_feed(p, tail, strlen(tail)) == 0, "an unterminated line is not read yet");
	ok(usage_parser_finish(p) == 1, "finish reads it");
	is_int(usage_parser_usage(p)->output, 77, "... and counts it");
	usage_parser_free(p);

	/* Newer message_delta events repeat every count: they replace. */
	r = run(1, "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":"
	           "{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"
	           "data: {\"type\":\"message_delta\",\"usage\":{\"input_tokens\":12,"
	           "\"cache_read_input_tokens\":5,\"output_tokens\":20}}\n\n");
	ok(r.u.input == 12 && r.u.cache_read == 5 && r.u.output == 20,
	   "message_delta with full usage replaces the counts (not added)");

	/* "data:" without the space, and lines that are not data. */
	r = run(1, ": a comment with \"usage\"\nid: 7\nretry: 100\n"
	           "data:{\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\n");
	is_int(r.u.output, 9, "data: without a space is read; comments, id and retry are skipped");
	r = run(1, "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-5}}\n"
	           "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":\"50\"}}\n"
	           "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":1.5}}\n"
	           "data: {not json\n");
	is_int(usage_tokens(&r.u), 0, "negative, string, real counts and broken JSON count nothing");
}

static void test_anthropic_json(void)
{
	const char *body = "{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\","
	                   "\"model\":\"claude-haiku-4-5\",\"content\":[{\"type\":\"text\","
	                   "\"text\":\"hi\"}],\"stop_reason\":\"end_turn\",\"usage\":"
	                   "{\"input_tokens\":50,\"cache_creation_input_tokens\":7,"
	                   "\"cache_read_input_tokens\":11,\"output_tokens\":13}}";
	struct usage_parser *p = usage_parser_new(0);
	ok(usage_parser_feed(p, body, 20) == 0 && usage_parser_feed(p, body + 20, strlen(body) - 20)
	   == 0, "a JSON body is not read before its end");
	ok(usage_parser_finish(p) == 1, "finish reads it and reports a change");
	const struct usage *u = usage_parser_usage(p);
	ok(u->input == 50 && u->output == 13 && u->cache_read == 11 && u->cache_write == 7,
	   "anthropic JSON: all four counts");
	is_str(usage_parser_model(p), "claude-haiku-4-5", "anthropic JSON: the model");
	usage_parser_free(p);
	every_chunking(0, body, "anthropic JSON");

	/* An SSE parser given JSON, and a JSON parser given SSE, count nothing
	 * rather than something wrong. */
	struct result r = run(0, anthropic_sse);
	is_int(usage_tokens(&r.u), 0, "a JSON parser fed an event stream counts nothing");
	r = run(0, "");
	ok(usage_tokens(&r.u) == 0 && !r.changed && r.model[0] == '\0', "an empty body: nothing");
	r = run(1, "");
	ok(usage_tokens(&r.u) == 0 && !r.changed, "an empty stream: nothing");
	usage_parser_free(NULL);
}

static void test_openai(void)
{
	struct result r = run(1, responses_sse);
	is_int(r.u.input, 1500, "responses stream: cached tokens are taken out of the input");
	is_int(r.u.cache_read, 3500, "responses stream: cached tokens are cache reads");
	is_int(r.u.output, 200, "responses stream: output tokens");
	is_int(r.u.cache_write, 0, "responses stream: no cache writes");
	is_str(r.model, "gpt-5.1-codex", "responses stream: the model");
	every_chunking(1, responses_sse, "responses stream");

	r = run(0, "{\"id\":\"resp_2\",\"object\":\"response\",\"model\":\"gpt-5\",\"usage\":"
	           "{\"input_tokens\":100,\"input_tokens_details\":{\"cached_tokens\":0},"
	           "\"output_tokens\":5}}");
	ok(r.u.input == 100 && r.u.cache_read == 0 && r.u.output == 5 && strcmp(r.model, "gpt-5") == 0,
	   "responses JSON: counts and model");
	r = run(0, "{\"usage\":{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":40},"
	           "\"output_tokens\":1}}");
	ok(r.u.input == 0 && r.u.cache_read == 40, "more cached than input tokens: input 0, not a wrap");

	r = run(1, chat_sse);
	is_int(r.u.input, 500, "chat stream: prompt tokens less the cached ones");
	is_int(r.u.cache_read, 300, "chat stream: cached prompt tokens");
	is_int(r.u.output, 40, "chat stream: completion tokens");
	is_str(r.model, "gpt-4o", "chat stream: the model");
	is_str(r.error, "", "chat stream: [DONE] is no error");
	every_chunking(1, chat_sse, "chat stream");

	r = run(1, "data: [DONE]\n\ndata:[DONE]\n\n");
	ok(usage_tokens(&r.u) == 0 && !r.changed && r.error[0] == '\0', "[DONE] alone: nothing");

	r = run(0, "{\"id\":\"c2\",\"object\":\"chat.completion\",\"model\":\"gpt-4o-mini\","
	           "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"x\"}}],"
	           "\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":4,\"total_tokens\":34}}");
	ok(r.u.input == 30 && r.u.output == 4 && strcmp(r.model, "gpt-4o-mini") == 0,
	   "chat JSON: counts and model");
}

static void test_errors(void)
{
	struct result r = run(0, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
	                         "\"message\":\"Number of request tokens has exceeded your "
	                         "per-minute rate limit\"}}");
	is_str(r.error, "rate_limit_error", "an anthropic error body gives its type");
	is_int(usage_tokens(&r.u), 0, "... and no tokens");
	r = run(0, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"O\"}}");
	is_str(r.error, "overloaded_error", "an anthropic 529 body: overloaded_error");
	r = run(0, "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_exceeded\","
	           "\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
	is_str(r.error, "rate_limit_exceeded", "an openai error body gives its type");
	r = run(0, "{\"error\":{\"message\":\"Incorrect API key\",\"type\":null,"
	           "\"code\":\"invalid_api_key\"}}");
	is_str(r.error, "invalid_api_key", "an openai error without a type gives its code");
	r = run(1, "event: error\n"
	           "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
	           "\"message\":\"Overloaded\"}}\n\n");
	is_str(r.error, "overloaded_error", "an error event mid-stream gives its type");
	r = run(1, "event: response.failed\n"
	           "data: {\"type\":\"response.failed\",\"response\":{\"model\":\"gpt-5\",\"error\":"
	           "{\"code\":\"server_error\",\"message\":\"boom\"},\"usage\":null}}\n\n");
	is_str(r.error, "server_error", "a failed response event gives the error's code");
	r = run(0, "{\"error\":\"a plain string\"}");
	is_str(r.error, "", "an error that is a string is no error type (no crash)");
	r = run(0, "<html>502 Bad Gateway</html>");
	ok(r.error[0] == '\0' && usage_tokens(&r.u) == 0, "an HTML body: no error type, no tokens");
	r = run(0, "[1, 2, 3]");
	ok(r.error[0] == '\0' && usage_tokens(&r.u) == 0, "a JSON array: nothing");
}

static void test_long_lines(void)
{
	/* A data line over 1 MiB is skipped; the events after it count. */
	size_t big = (1u << 20) + 4096;
	const char *head = "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"";
	const char *rest = "\"},\"usage\":{\"output_tokens\":100000}}\n\n";
	size_t total = strlen(anthropic_sse) + strlen(head) + big + strlen(rest) + 200;
	char *text = malloc(total);
	size_t n = 0;
	const char *split = strstr(anthropic_sse, "event: message_delta");
	memcpy(text, anthropic_sse, (size_t)(split - anthropic_sse));
	n = (size_t)(split - anthropic_sse);
	memcpy(text + n, head, strlen(head));
	n += strlen(head);
	memset(text + n, 'x', big);
	n += big;
	memcpy(text + n, rest, strlen(rest));
	n += strlen(rest);
	strcpy(text + n, split);
	n += strlen(split);

	struct result r = run_cuts(1, text, n, NULL, 0);
	is_int(r.u.output, 345, "a data line over 1 MiB is ignored; the message_delta after it counts");
	is_int(r.u.input, 1200, "... and message_start before it");
	/* Fed in 4 KiB pieces, as a socket would. */
	size_t ncut = n / 4096;
	size_t *cuts = malloc((ncut + 1) * sizeof *cuts);
	for (size_t i = 0; i < ncut; i++)
		cuts[i] = (i + 1) * 4096;
	r = run_cuts(1, text, n, cuts, ncut);
	ok(r.u.output == 345 && r.u.input == 1200, "... the same when fed in 4 KiB pieces");
	free(cuts);
	/* A usage line just under the limit still counts. */
	size_t under = (1u << 20) - 200;
	char *line = malloc(under + 200);
	int k = snprintf(line, under + 200, "data: {\"type\":\"message_delta\",\"pad\":\"");
	memset(line + k, 'y', under - (size_t)k - 60);
	snprintf(line + under - 60, 200, "\",\"usage\":{\"output_tokens\":31}}\n\n");
	r = run(1, line);
	is_int(r.u.output, 31, "a usage line just under 1 MiB counts");
	free(line);
	free(text);

	/* A JSON body over the cap is not buffered without bound. */
	size_t huge = (9u << 20);
	char *body = malloc(huge + 100);
	int h = snprintf(body, 100, "{\"usage\":{\"output_tokens\":5},\"pad\":\"");
	memset(body + h, 'z', huge - (size_t)h - 2);
	memcpy(body + huge - 2, "\"}", 3);
	r = run(0, body);
	is_int(usage_tokens(&r.u), 0, "a JSON body over 8 MiB is not read (and does not crash)");
	free(body);
}

static void test_cost(void)
{
	struct price_conf price = { .model = "m", .input = 3, .output = 15, .cache_read = 0.3,
	                            .cache_write = 3.75 };
	struct usage u = { .input = 1000, .output = 500, .cache_read = 2000, .cache_write = 400 };
	/* (1000*3 + 500*15 + 2000*0.3 + 400*3.75) / 1e6 = 0.0126 */
	ok(fabs(usage_cost(&u, &price) - 0.0126) < 1e-12, "cost: per million tokens, all four kinds");
	ok(usage_cost(&u, NULL) == 0, "cost without a price is 0");
	struct usage million = { .input = 1000000 };
	ok(fabs(usage_cost(&million, &price) - 3.0) < 1e-12, "a million input tokens cost the price");
	is_int(usage_tokens(&u), 3900, "tokens: the four counts summed");
	struct usage total = { 1, 2, 3, 4 };
	usage_add(&total, &u);
	ok(total.input == 1001 && total.output == 502 && total.cache_read == 2003 &&
	   total.cache_write == 404, "usage_add adds each count");

	/* With the built-in prices: the stream above, priced as claude-sonnet-4*. */
	struct config cfg;
	config_init_defaults(&cfg);
	struct result r = run(1, anthropic_sse);
	const struct price_conf *pr = config_find_price(&cfg, r.model);
	ok(pr != NULL, "the streamed model has a built-in price");
	if (pr) {
		double want = (1200 * pr->input + 345 * pr->output + 4000 * pr->cache_read +
		               300 * pr->cache_write) / 1e6;
		ok(fabs(usage_cost(&r.u, pr) - want) < 1e-12 && want > 0,
		   "the stream's cost is its counts at that price (%.6f USD)", want);
	}
	r = run(1, responses_sse);
	pr = config_find_price(&cfg, r.model);
	ok(pr && fabs(usage_cost(&r.u, pr) - (1500 * pr->input + 200 * pr->output +
	                                      3500 * pr->cache_read) / 1e6) < 1e-12,
	   "an OpenAI stream prices cached tokens at the cache rate, the rest at the input rate");
	config_free(&cfg);
}

int main(void)
{
	test_anthropic();
	test_anthropic_json();
	test_openai();
	test_errors();
	test_long_lines();
	test_cost();
	return tap_done();
}
