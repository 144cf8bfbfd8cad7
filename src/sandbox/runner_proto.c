/* runner_proto: the frames of runner_proto.h.  libc only: the runner
 * links it (runner/paddock-runner.c). */
#include "autoconfig.h"
#include "runner_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[RP_TYPE_END] = {
	[RP_HELLO] = "HELLO", [RP_RUN] = "RUN", [RP_OUTPUT] = "OUTPUT", [RP_END] = "END",
	[RP_KILL] = "KILL", [RP_WATCH] = "WATCH", [RP_FILE_PUT] = "FILE_PUT",
	[RP_FILE_DATA] = "FILE_DATA", [RP_FILE_GET] = "FILE_GET", [RP_FILE_DONE] = "FILE_DONE",
	[RP_FAIL] = "FAIL", [RP_RESIZE] = "RESIZE", [RP_STDIN] = "STDIN", [RP_PING] = "PING",
	[RP_PONG] = "PONG", [RP_STDERR] = "STDERR",
	[RP_TAKEN] = "TAKEN",
	[RP_OPEN] = "OPEN", [RP_DATA] = "DATA", [RP_ACK] = "ACK", [RP_SHUT] = "SHUT",
	[RP_RECEIVED] = "RECEIVED", [RP_RESUME] = "RESUME", [RP_BYE] = "BYE",
};

const char *rp_type_name(unsigned type)
{
	return type > 0 && type < RP_TYPE_END ? type_names[type] : NULL;
}

int rp_buf_add(struct rp_buf *b, const void *p, size_t n)
{
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				errno = ENOMEM;
				return -1;
			}
			cap *= 2;
		}
		unsigned char *d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void rp_buf_consume(struct rp_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void rp_buf_free(struct rp_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Encoding: the field writers note the first failure in *rc. */
struct enc {
	struct rp_buf *b;
	int rc;
};

static void put_be(struct enc *e, uint64_t v, int bytes)
{
	unsigned char p[8];
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	if (e->rc == 0 && rp_buf_add(e->b, p, (size_t)bytes) < 0)
		e->rc = -1;
}

static void put_bytes(struct enc *e, const void *p, size_t n)
{
	if (n > RP_BODY_MAX) {
		errno = EMSGSIZE;
		e->rc = -1;
		return;
	}
	put_be(e, n, 4);
	if (e->rc == 0 && rp_buf_add(e->b, p, n) < 0)
		e->rc = -1;
}

static void put_str(struct enc *e, const char *s)
{
	put_bytes(e, s ? s : "", s ? strlen(s) : 0);
}

static void put_strs(struct enc *e, char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	if (n > RP_STRS_MAX) {
		errno = EMSGSIZE;
		e->rc = -1;
		return;
	}
	put_be(e, n, 4);
	for (size_t i = 0; i < n; i++)
		put_str(e, v[i]);
}

static void encode_body(struct enc *e, const struct rp_msg *m)
{
	switch (m->type) {
	case RP_HELLO:
		put_be(e, m->version, 4);
		put_be(e, m->flags, 4);
		break;
	case RP_RUN:
		put_be(e, m->id, 4);
		put_be(e, m->flags, 4);
		put_be(e, m->limits.time_ms, 8);
		put_be(e, m->limits.memory, 8);
		put_be(e, m->limits.pids, 8);
		put_be(e, m->limits.output, 8);
		put_be(e, m->limits.file_size, 8);
		put_be(e, m->rows, 2);
		put_be(e, m->cols, 2);
		put_str(e, m->text);
		put_strs(e, m->argv);
		put_strs(e, m->env);
		break;
	case RP_OUTPUT:
	case RP_STDERR:
	case RP_FILE_DATA:
		put_be(e, m->id, 4);
		put_be(e, m->offset, 8);
		put_bytes(e, m->data, m->len);
		break;
	case RP_END:
		put_be(e, m->id, 4);
		put_be(e, m->how, 4);
		put_be(e, m->code, 4);
		put_be(e, m->hit, 4);
		put_be(e, m->size, 8);
		put_str(e, m->text);
		break;
	case RP_KILL:
		put_be(e, m->id, 4);
		put_be(e, m->sig, 4);
		break;
	case RP_WATCH:
	case RP_TAKEN:
		put_be(e, m->id, 4);
		put_be(e, m->offset, 8);
		break;
	case RP_FILE_PUT:
		put_be(e, m->id, 4);
		put_be(e, m->mode, 4);
		put_be(e, m->size, 8);
		put_str(e, m->text);
		break;
	case RP_FILE_GET:
		put_be(e, m->id, 4);
		put_be(e, m->size, 8);
		put_str(e, m->text);
		break;
	case RP_FILE_DONE:
		put_be(e, m->id, 4);
		put_be(e, m->size, 8);
		break;
	case RP_FAIL:
		put_be(e, m->id, 4);
		put_be(e, m->err, 4);
		put_str(e, m->text);
		break;
	case RP_RESIZE:
		put_be(e, m->id, 4);
		put_be(e, m->rows, 2);
		put_be(e, m->cols, 2);
		break;
	case RP_STDIN:
		put_be(e, m->id, 4);
		put_bytes(e, m->data, m->len);
		break;
	case RP_PING:
	case RP_PONG:
		put_be(e, m->token, 8);
		break;
	case RP_OPEN:
		put_be(e, m->id, 4);
		put_be(e, m->port, 4);
		break;
	case RP_DATA:
		if (m->len > RP_CHUNK) {
			errno = EMSGSIZE;
			e->rc = -1;
			break;
		}
		put_be(e, m->id, 4);
		put_bytes(e, m->data, m->len);
		break;
	case RP_ACK:
		put_be(e, m->id, 4);
		put_be(e, m->offset, 8);
		break;
	case RP_SHUT:
		put_be(e, m->id, 4);
		put_be(e, m->err, 4);
		break;
	case RP_RECEIVED:
	case RP_RESUME:
		put_be(e, m->offset, 8);
		break;
	case RP_BYE:
		break;
	default:
		errno = EINVAL;
		e->rc = -1;
	}
}

int rp_encode(struct rp_buf *out, const struct rp_msg *m)
{
	size_t start = out->len;
	unsigned char hdr[RP_HEADER] = { 0 };
	if (rp_buf_add(out, hdr, sizeof hdr) < 0)
		return -1;
	struct enc e = { out, 0 };
	encode_body(&e, m);
	size_t body = out->len - start - RP_HEADER;
	if (e.rc == 0 && body > RP_BODY_MAX) {
		errno = EMSGSIZE;
		e.rc = -1;
	}
	if (e.rc < 0) {
		out->len = start;
		return -1;
	}
	unsigned char *h = out->data + start;
	h[0] = (unsigned char)(body >> 24);
	h[1] = (unsigned char)(body >> 16);
	h[2] = (unsigned char)(body >> 8);
	h[3] = (unsigned char)body;
	h[4] = (unsigned char)(m->type >> 8);
	h[5] = (unsigned char)m->type;
	return 0;
}

long rp_frame(const unsigned char *in, size_t len, uint16_t *type,
              const unsigned char **body, size_t *body_len)
{
	if (len < RP_HEADER) {
		/* A length already past the maximum is refused as soon as its
		 * four bytes are in, not after waiting for more. */
		if (len >= 4 && ((uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 |
		                 (uint32_t)in[2] << 8 | in[3]) > RP_BODY_MAX)
			return -1;
		return 0;
	}
	uint32_t n = (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
	if (n > RP_BODY_MAX || in[6] || in[7])
		return -1;
	if (len - RP_HEADER < n)
		return 0;
	*type = (uint16_t)(in[4] << 8 | in[5]);
	*body = in + RP_HEADER;
	*body_len = n;
	return (long)(RP_HEADER + n);
}

/* Decoding: each reader marks the body bad when it runs past the end. */
struct dec {
	const unsigned char *p;
	size_t left;
	int bad;
};

static uint64_t get_be(struct dec *d, int bytes)
{
	if (d->bad || d->left < (size_t)bytes) {
		d->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | d->p[i];
	d->p += bytes;
	d->left -= (size_t)bytes;
	return v;
}

static const unsigned char *get_bytes(struct dec *d, size_t *n)
{
	uint64_t len = get_be(d, 4);
	if (d->bad || len > d->left) {
		d->bad = 1;
		*n = 0;
		return NULL;
	}
	const unsigned char *p = d->p;
	d->p += len;
	d->left -= len;
	*n = (size_t)len;
	return p;
}

static char *get_str(struct dec *d)
{
	size_t n;
	const unsigned char *p = get_bytes(d, &n);
	if (d->bad || memchr(p, 0, n)) {
		d->bad = 1;
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		d->bad = 1;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static void strs_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static char **get_strs(struct dec *d)
{
	uint64_t n = get_be(d, 4);
	/* Each entry takes at least its four length bytes: a count the body
	 * cannot hold is refused before anything is allocated for it. */
	if (d->bad || n > RP_STRS_MAX || n > d->left / 4) {
		d->bad = 1;
		return NULL;
	}
	char **v = calloc((size_t)n + 1, sizeof *v);
	if (!v) {
		d->bad = 1;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = get_str(d);
		if (d->bad) {
			strs_free(v);
			return NULL;
		}
	}
	return v;
}

static void decode_body(struct dec *d, struct rp_msg *m)
{
	switch (m->type) {
	case RP_HELLO:
		m->version = (uint32_t)get_be(d, 4);
		m->flags = (uint32_t)get_be(d, 4);
		break;
	case RP_RUN:
		m->id = (uint32_t)get_be(d, 4);
		m->flags = (uint32_t)get_be(d, 4);
		m->limits.time_ms = get_be(d, 8);
		m->limits.memory = get_be(d, 8);
		m->limits.pids = get_be(d, 8);
		m->limits.output = get_be(d, 8);
		m->limits.file_size = get_be(d, 8);
		m->rows = (uint16_t)get_be(d, 2);
		m->cols = (uint16_t)get_be(d, 2);
		m->text = get_str(d);
		m->argv = get_strs(d);
		m->env = get_strs(d);
		if (!d->bad && (!m->argv[0] || (m->flags & ~RP_RUN_FLAGS)))
			d->bad = 1;
		break;
	case RP_OUTPUT:
	case RP_STDERR:
	case RP_FILE_DATA:
		m->id = (uint32_t)get_be(d, 4);
		m->offset = get_be(d, 8);
		m->data = get_bytes(d, &m->len);
		break;
	case RP_END:
		m->id = (uint32_t)get_be(d, 4);
		m->how = (uint32_t)get_be(d, 4);
		m->code = (uint32_t)get_be(d, 4);
		m->hit = (uint32_t)get_be(d, 4);
		m->size = get_be(d, 8);
		m->text = get_str(d);
		if (m->how > RP_END_NOT_STARTED)
			d->bad = 1;
		break;
	case RP_KILL:
		m->id = (uint32_t)get_be(d, 4);
		m->sig = (uint32_t)get_be(d, 4);
		break;
	case RP_WATCH:
	case RP_TAKEN:
		m->id = (uint32_t)get_be(d, 4);
		m->offset = get_be(d, 8);
		break;
	case RP_FILE_PUT:
		m->id = (uint32_t)get_be(d, 4);
		m->mode = (uint32_t)get_be(d, 4);
		m->size = get_be(d, 8);
		m->text = get_str(d);
		break;
	case RP_FILE_GET:
		m->id = (uint32_t)get_be(d, 4);
		m->size = get_be(d, 8);
		m->text = get_str(d);
		break;
	case RP_FILE_DONE:
		m->id = (uint32_t)get_be(d, 4);
		m->size = get_be(d, 8);
		break;
	case RP_FAIL:
		m->id = (uint32_t)get_be(d, 4);
		m->err = (uint32_t)get_be(d, 4);
		m->text = get_str(d);
		break;
	case RP_RESIZE:
		m->id = (uint32_t)get_be(d, 4);
		m->rows = (uint16_t)get_be(d, 2);
		m->cols = (uint16_t)get_be(d, 2);
		break;
	case RP_STDIN:
		m->id = (uint32_t)get_be(d, 4);
		m->data = get_bytes(d, &m->len);
		break;
	case RP_PING:
	case RP_PONG:
		m->token = get_be(d, 8);
		break;
	case RP_OPEN:
		m->id = (uint32_t)get_be(d, 4);
		m->port = (uint32_t)get_be(d, 4);
		if (m->port < 1 || m->port > 65535)
			d->bad = 1;
		break;
	case RP_DATA:
		m->id = (uint32_t)get_be(d, 4);
		m->data = get_bytes(d, &m->len);
		if (m->len > RP_CHUNK)
			d->bad = 1;
		break;
	case RP_ACK:
		m->id = (uint32_t)get_be(d, 4);
		m->offset = get_be(d, 8);
		break;
	case RP_SHUT:
		m->id = (uint32_t)get_be(d, 4);
		m->err = (uint32_t)get_be(d, 4);
		break;
	case RP_RECEIVED:
	case RP_RESUME:
		m->offset = get_be(d, 8);
		break;
	case RP_BYE:
		break;
	default:
		d->bad = 1;
	}
}

int rp_decode(uint16_t type, const unsigned char *body, size_t len, struct rp_msg *m)
{
	memset(m, 0, sizeof *m);
	if (!rp_type_name(type) || len > RP_BODY_MAX) {
		errno = EPROTO;
		return -1;
	}
	m->type = (enum rp_type)type;
	struct dec d = { body, len, 0 };
	errno = 0;
	decode_body(&d, m);
	if (d.bad || d.left) {
		int saved = errno == ENOMEM ? ENOMEM : EPROTO;
		rp_msg_clear(m);
		errno = saved;
		return -1;
	}
	return 0;
}

void rp_msg_clear(struct rp_msg *m)
{
	free(m->text);
	strs_free(m->argv);
	strs_free(m->env);
	memset(m, 0, sizeof *m);
}
