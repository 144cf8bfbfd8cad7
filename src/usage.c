#include "autoconfig.h"
#include "usage.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* An SSE line or a JSON body longer than this is not looked into: usage
 * events are small, and the gateway must not buffer without bound. */
#define LINE_MAX_BYTES (1u << 20)
#define BODY_MAX_BYTES (8u << 20)

struct usage_parser {
	int sse;
	struct buf acc;        /* the current SSE line, or the JSON body */
	int overflow;          /* acc passed its cap: skip to the next line */
	struct usage u;
	char model[128];
	char error[64];
	char error_message[160];
};

struct usage_parser *usage_parser_new(int sse)
{
	struct usage_parser *p = xcalloc(1, sizeof *p);
	p->sse = sse;
	return p;
}

void usage_parser_free(struct usage_parser *p)
{
	if (!p)
		return;
	buf_free(&p->acc);
	free(p);
}

const struct usage *usage_parser_usage(const struct usage_parser *p)
{
	return &p->u;
}

const char *usage_parser_model(const struct usage_parser *p)
{
	return p->model;
}

const char *usage_parser_error(const struct usage_parser *p)
{
	return p->error;
}

const char *usage_parser_error_message(const struct usage_parser *p)
{
	return p->error_message;
}

static uint64_t num(json_t *o, const char *key, int *found)
{
	json_t *v = o ? json_object_get(o, key) : NULL;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		if (found)
			*found = 1;
		return (uint64_t)json_integer_value(v);
	}
	return 0;
}

static void set_model(struct usage_parser *p, json_t *o)
{
	json_t *m = o ? json_object_get(o, "model") : NULL;
	if (json_is_string(m)) {
		snprintf(p->model, sizeof p->model, "%s", json_string_value(m));
	}
}

/* Reads a usage object in either API's naming.  Counts replace earlier
 * ones only when present: Anthropic's message_delta may carry just
 * output_tokens. */
static int take_usage(struct usage_parser *p, json_t *usage)
{
	if (!json_is_object(usage))
		return 0;
	struct usage before = p->u;
	int fin = 0, fout = 0, fcr = 0, fcw = 0, fp = 0, fc = 0;
	uint64_t in = num(usage, "input_tokens", &fin);
	uint64_t out = num(usage, "output_tokens", &fout);
	uint64_t cr = num(usage, "cache_read_input_tokens", &fcr);
	uint64_t cw = num(usage, "cache_creation_input_tokens", &fcw);
	uint64_t pin = num(usage, "prompt_tokens", &fp);
	uint64_t pout = num(usage, "completion_tokens", &fc);
	/* OpenAI: cached tokens are part of the input count. */
	json_t *det = json_object_get(usage, "input_tokens_details");
	if (!json_is_object(det))
		det = json_object_get(usage, "prompt_tokens_details");
	int fcached = 0;
	uint64_t cached = num(det, "cached_tokens", &fcached);
	if (fp) {
		in = pin;
		fin = 1;
	}
	if (fc) {
		out = pout;
		fout = 1;
	}
	if (fcached && !fcr) {
		cr = cached;
		fcr = 1;
		in = in > cached ? in - cached : 0;
	}
	if (fin)
		p->u.input = in;
	if (fout)
		p->u.output = out;
	if (fcr)
		p->u.cache_read = cr;
	if (fcw)
		p->u.cache_write = cw;
	return memcmp(&before, &p->u, sizeof before) != 0;
}

static void take_error(struct usage_parser *p, json_t *o)
{
	json_t *err = json_object_get(o, "error");
	json_t *type = json_is_object(err) ? json_object_get(err, "type") : NULL;
	if (!json_is_string(type) && json_is_object(err))
		type = json_object_get(err, "code");
	if (json_is_string(type))
		snprintf(p->error, sizeof p->error, "%s", json_string_value(type));
	json_t *msg = json_is_object(err) ? json_object_get(err, "message") : NULL;
	if (json_is_string(msg))
		snprintf(p->error_message, sizeof p->error_message, "%s", json_string_value(msg));
}

/* One JSON object: an SSE event's data or a whole body. */
static int take_object(struct usage_parser *p, json_t *o)
{
	int changed = 0;
	if (!json_is_object(o))
		return 0;
	const char *type = json_string_value(json_object_get(o, "type"));
	if (type && strcmp(type, "error") == 0) {
		take_error(p, o);
		return 0;
	}
	json_t *msg = json_object_get(o, "message");     /* Anthropic message_start */
	json_t *resp = json_object_get(o, "response");   /* OpenAI response.* */
	if (json_is_object(msg)) {
		set_model(p, msg);
		changed |= take_usage(p, json_object_get(msg, "usage"));
	}
	if (json_is_object(resp)) {
		set_model(p, resp);
		changed |= take_usage(p, json_object_get(resp, "usage"));
		if (json_is_object(json_object_get(resp, "error")))
			take_error(p, resp);
	}
	set_model(p, o);
	changed |= take_usage(p, json_object_get(o, "usage"));
	if (json_is_object(json_object_get(o, "error")))
		take_error(p, o);
	return changed;
}

static int take_json(struct usage_parser *p, const char *text, size_t n)
{
	json_error_t je;
	json_t *o = json_loadb(text, n, 0, &je);
	if (!o)
		return 0;
	int changed = take_object(p, o);
	json_decref(o);
	return changed;
}

static int sse_line(struct usage_parser *p, char *line, size_t n)
{
	if (n && line[n - 1] == '\r')
		line[--n] = '\0';
	if (n < 5 || strncmp(line, "data:", 5) != 0)
		return 0;
	const char *d = line + 5;
	if (*d == ' ')
		d++;
	if (strcmp(d, "[DONE]") == 0)
		return 0;
	return take_json(p, d, strlen(d));
}

int usage_parser_feed(struct usage_parser *p, const char *data, size_t n)
{
	int changed = 0;
	if (!p->sse) {
		if (p->overflow || p->acc.len + n > BODY_MAX_BYTES) {
			p->overflow = 1;
			return 0;
		}
		buf_add(&p->acc, data, n);
		return 0;
	}
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		if (!p->overflow) {
			if (p->acc.len + take > LINE_MAX_BYTES) {
				p->overflow = 1;
				buf_free(&p->acc);
			} else {
				buf_add(&p->acc, data, take);
			}
		}
		if (!nl)
			break;
		if (!p->overflow && p->acc.len)
			changed |= sse_line(p, p->acc.data, p->acc.len);
		p->acc.len = 0;
		if (p->acc.data)
			p->acc.data[0] = '\0';
		p->overflow = 0;
		data = nl + 1;
		n -= take + 1;
	}
	return changed;
}

int usage_parser_finish(struct usage_parser *p)
{
	int changed = 0;
	if (p->sse) {
		if (!p->overflow && p->acc.len)
			changed = sse_line(p, p->acc.data, p->acc.len);
	} else if (!p->overflow && p->acc.len) {
		changed = take_json(p, p->acc.data, p->acc.len);
	}
	buf_free(&p->acc);
	return changed;
}

double usage_cost(const struct usage *u, const struct price_conf *price)
{
	if (!price)
		return 0;
	return ((double)u->input * price->input + (double)u->output * price->output +
	        (double)u->cache_read * price->cache_read +
	        (double)u->cache_write * price->cache_write) / 1e6;
}

void usage_add(struct usage *total, const struct usage *u)
{
	total->input += u->input;
	total->output += u->output;
	total->cache_read += u->cache_read;
	total->cache_write += u->cache_write;
}

uint64_t usage_tokens(const struct usage *u)
{
	return u->input + u->output + u->cache_read + u->cache_write;
}
