/* usage: token counts read from model API responses as they stream by, and
 * what they cost.
 *
 * The gateway feeds every response body of a model endpoint to a parser:
 * server-sent events (Anthropic's message_start / message_delta, OpenAI's
 * response.completed and chat completion chunks with usage) or one JSON
 * document.  Input tokens are counted without the cached ones, which are
 * counted apart (OpenAI reports them inside input_tokens; they are taken
 * out), so that one formula prices both. */
#ifndef PADDOCK_USAGE_H
#define PADDOCK_USAGE_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

struct usage {
	uint64_t input, output, cache_read, cache_write;
};

struct usage_parser;

/* sse: the body is text/event-stream, else one JSON document. */
struct usage_parser *usage_parser_new(int sse);
/* Feeds n bytes; returns 1 when the counts changed (mid-stream too). */
int usage_parser_feed(struct usage_parser *p, const char *data, size_t n);
/* End of body (parses a JSON body); returns 1 when the counts changed. */
int usage_parser_finish(struct usage_parser *p);
/* The counts so far for this response, and the model it names ("" when
 * none yet). */
const struct usage *usage_parser_usage(const struct usage_parser *p);
const char *usage_parser_model(const struct usage_parser *p);
/* The error type an error response or event names ("rate_limit_error",
 * "overloaded_error", "invalid_request_error", ...) or "". */
const char *usage_parser_error(const struct usage_parser *p);
/* Its message (cut to 159 bytes), or "". */
const char *usage_parser_error_message(const struct usage_parser *p);
void usage_parser_free(struct usage_parser *p);

/* USD for u at price (per million tokens); 0 when price is NULL. */
double usage_cost(const struct usage *u, const struct price_conf *price);
void usage_add(struct usage *total, const struct usage *u);
uint64_t usage_tokens(const struct usage *u);

#endif
