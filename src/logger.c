#include "autoconfig.h"
#include "logger.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "i18n.h"
#include "sanitize.h"

/* The repos of the tasks last named by logger_task, for the JSON lines
 * that name only the task (an error, a webhook's delivery). */
#define LOGGER_REPOS 128

struct logger_hidden {
	char *secret;
	char *shown;
};

struct logger {
	enum logger_format format;
	FILE *out, *err;
	pthread_mutex_t mu;
	struct logger_hidden *hide;
	size_t nhide;
	struct {
		char task[32];
		char *repo;
	} repos[LOGGER_REPOS];
	size_t next_repo;
	/* logger_stderr_take: the pipe fd 2 writes to, fd 2 as it was, and
	 * the thread that reads it (stopped by a byte on stop[1]). */
	int rfd, saved_fd2, stop[2];
	pthread_t reader;
	int reading;
};

int logger_format_parse(const char *word, const char *what, enum logger_format *out,
                        struct err *e)
{
	if (word && !strcmp(word, "text")) {
		*out = LOGGER_TEXT;
		return 0;
	}
	if (word && !strcmp(word, "json")) {
		*out = LOGGER_JSON;
		return 0;
	}
	char *shown = sanitize_quote_str(word);
	err_set(e, _("%s: '%s' is not a log format; write text or json"), what, shown);
	free(shown);
	return -1;
}

struct logger *logger_new(enum logger_format f, FILE *out, FILE *err)
{
	struct logger *lg = xcalloc(1, sizeof *lg);
	lg->format = f;
	lg->out = out;
	lg->err = err;
	lg->rfd = lg->saved_fd2 = lg->stop[0] = lg->stop[1] = -1;
	pthread_mutex_init(&lg->mu, NULL);
	return lg;
}

static void stderr_give_back(struct logger *lg);

void logger_free(struct logger *lg)
{
	if (!lg)
		return;
	stderr_give_back(lg);
	for (size_t i = 0; i < lg->nhide; i++) {
		explicit_bzero(lg->hide[i].secret, strlen(lg->hide[i].secret));
		free(lg->hide[i].secret);
		free(lg->hide[i].shown);
	}
	free(lg->hide);
	for (size_t i = 0; i < LOGGER_REPOS; i++)
		free(lg->repos[i].repo);
	pthread_mutex_destroy(&lg->mu);
	free(lg);
}

enum logger_format logger_format(const struct logger *lg)
{
	return lg ? lg->format : LOGGER_TEXT;
}

void logger_hide(struct logger *lg, const char *secret, const char *shown)
{
	/* A shorter one would hide ordinary words. */
	if (!lg || !secret || strlen(secret) < 4)
		return;
	pthread_mutex_lock(&lg->mu);
	lg->hide = xrealloc(lg->hide, (lg->nhide + 1) * sizeof *lg->hide);
	lg->hide[lg->nhide].secret = xstrdup(secret);
	lg->hide[lg->nhide].shown = xstrdup(shown ? shown : "***");
	lg->nhide++;
	pthread_mutex_unlock(&lg->mu);
}

/* Hides a secret that a function returned (malloc'd), and frees it. */
static void hide_owned(struct logger *lg, char *secret)
{
	if (!secret)
		return;
	logger_hide(lg, secret, NULL);
	explicit_bzero(secret, strlen(secret));
	free(secret);
}

void logger_hide_config(struct logger *lg, const struct config *cfg, const char *data_dir)
{
	if (!lg || !cfg)
		return;
	struct err e = {{0}};
	for (size_t i = 0; i < cfg->nendpoints; i++)
		hide_owned(lg, config_endpoint_key(&cfg->endpoints[i]));
	for (size_t i = 0; i < cfg->ntokens; i++)
		hide_owned(lg, config_token_value(&cfg->tokens[i]));
	for (size_t i = 0; i < cfg->nrepos; i++) {
		const struct repo_conf *r = &cfg->repos[i];
		/* With the default variables (PADDOCK_GIT_TOKEN, GITHUB_TOKEN). */
		logger_hide(lg, config_repo_token(r), NULL);
		logger_hide(lg, config_repo_github_token(r), NULL);
		const char *u = r->url;
		if (u && !strncmp(u, "file://", 7))
			u += 7;
		if (u && *u == '/') {
			char *with = xasprintf("<the remote of repo %s>", r->name);
			logger_hide(lg, u, with);
			free(with);
		}
	}
	if (cfg->github_secret_env || cfg->github_secret_file)
		hide_owned(lg, config_secret(cfg->github_secret_env, cfg->github_secret_file, &e));
	hide_owned(lg, config_secret(cfg->wh_secret_env ? cfg->wh_secret_env
	                             : "PADDOCK_WEBHOOK_SECRET", cfg->wh_secret_file, &e));
	if (data_dir && *data_dir)
		logger_hide(lg, data_dir, "<data directory>");
}

/* Writes a whole line: one write() where out has a descriptor (stdio's
 * own buffer flushed first), so that threads and processes sharing it
 * never cut into each other's lines. */
static void put_line(FILE *f, const char *line, size_t n)
{
	int fd = fileno(f);
	if (fd < 0) {
		fwrite(line, 1, n, f);
		fflush(f);
		return;
	}
	fflush(f);
	while (n) {
		ssize_t w = write(fd, line, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;  /* nowhere left to say it */
		line += w;
		n -= (size_t)w;
	}
}

/* text with every hidden string replaced (malloc'd). */
static char *hide_all(const struct logger *lg, const char *text)
{
	char *s = xstrdup(text);
	for (size_t i = 0; i < lg->nhide; i++) {
		const char *sec = lg->hide[i].secret;
		if (!strstr(s, sec))
			continue;
		struct buf b = {0};
		size_t n = strlen(sec);
		const char *p = s;
		for (const char *hit; (hit = strstr(p, sec)); p = hit + n) {
			buf_add(&b, p, (size_t)(hit - p));
			buf_adds(&b, lg->hide[i].shown);
		}
		buf_adds(&b, p);
		free(s);
		s = buf_detach(&b);
	}
	return s;
}

/* A JSON field's string: hidden, sanitized (no control byte, valid
 * UTF-8), hidden again (a secret the sanitizer's marks split stays
 * apart, one it joined is caught). */
static json_t *field(const struct logger *lg, const char *text)
{
	char *h = hide_all(lg, text);
	char *q = sanitize_quote_str(h);
	free(h);
	h = hide_all(lg, q);
	free(q);
	json_t *j = json_string(h);
	free(h);
	return j;
}

static const char *level_name(int lv)
{
	switch ((enum logger_level)(lv & ~LOGGER_ON_OUT)) {
	case LOGGER_DEBUG: return "debug";
	case LOGGER_INFO: return "info";
	case LOGGER_WARNING: return "warning";
	case LOGGER_ERROR: return "error";
	}
	return "info";
}

/* The repo logger_task last gave task, or NULL; under the lock. */
static const char *repo_known(const struct logger *lg, const char *task)
{
	for (size_t i = 0; task && i < LOGGER_REPOS; i++)
		if (lg->repos[i].repo && !strcmp(lg->repos[i].task, task))
			return lg->repos[i].repo;
	return NULL;
}

static void repo_remember(struct logger *lg, const char *task, const char *repo)
{
	const char *had = repo_known(lg, task);
	if (!task || !repo || strlen(task) >= sizeof lg->repos[0].task || (had && !strcmp(had, repo)))
		return;
	size_t i = lg->next_repo++ % LOGGER_REPOS;
	for (size_t k = 0; k < LOGGER_REPOS; k++)
		if (lg->repos[k].repo && !strcmp(lg->repos[k].task, task))
			i = k;
	free(lg->repos[i].repo);
	snprintf(lg->repos[i].task, sizeof lg->repos[i].task, "%s", task);
	lg->repos[i].repo = xstrdup(repo);
}

/* "2026-01-31T12:34:56.789Z" */
static void rfc3339_now(char *out, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%s.%03ldZ", day, ts.tv_nsec / 1000000);
}

/* message less what a JSON line has in fields of its own: the
 * "paddock: " that starts a notice, then "TASK: ". */
static const char *message_of(const char *line, const char *task)
{
	if (!strncmp(line, "paddock: ", 9))
		line += 9;
	size_t n = task ? strlen(task) : 0;
	if (n && !strncmp(line, task, n) && !strncmp(line + n, ": ", 2))
		line += n + 2;
	return line;
}

/* One JSON line on out; under the lock. */
static void put_json(struct logger *lg, int lv, const char *task,
                     const char *repo, const char *event, const char *message)
{
	char when[48];
	rfc3339_now(when, sizeof when);
	if (!repo)
		repo = repo_known(lg, task);
	json_t *j = json_object();
	json_object_set_new(j, "time", json_string(when));
	json_object_set_new(j, "level", json_string(level_name(lv)));
	if (task)
		json_object_set_new(j, "task", field(lg, task));
	if (repo)
		json_object_set_new(j, "repo", field(lg, repo));
	json_object_set_new(j, "event", field(lg, event ? event : "message"));
	json_object_set_new(j, "message", field(lg, message));
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s)
		return;
	size_t n = strlen(s);
	s = xrealloc(s, n + 2);
	s[n] = '\n';
	put_line(lg->out, s, n + 1);
	free(s);
}

/* The text line (newline added) on out or err; a NULL logger says only
 * warnings and errors, on standard error. */
static void put_text(struct logger *lg, int lv, const char *line)
{
	FILE *f = !(lv & LOGGER_ON_OUT) && lv >= LOGGER_WARNING ? (lg ? lg->err : stderr)
	          : (lg ? lg->out : NULL);
	if (!f)
		return;
	size_t n = strlen(line);
	char *s = xmalloc(n + 2);
	memcpy(s, line, n);
	s[n] = '\n';
	s[n + 1] = '\0';
	put_line(f, s, n + 1);
	free(s);
}

static void emit(struct logger *lg, int lv, const char *task, const char *repo,
                 const char *event, const char *line)
{
	if (!lg || lg->format == LOGGER_TEXT) {
		if (lg)
			pthread_mutex_lock(&lg->mu);
		put_text(lg, lv, line);
		if (lg)
			pthread_mutex_unlock(&lg->mu);
		return;
	}
	pthread_mutex_lock(&lg->mu);
	put_json(lg, lv, task, repo, event, message_of(line, task));
	pthread_mutex_unlock(&lg->mu);
}

void logger_event(struct logger *lg, int lv, const char *task, const char *repo,
                  const char *event, const char *fmt, ...)
{
	if (!lg && ((lv & LOGGER_ON_OUT) || lv < LOGGER_WARNING))
		return;
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *line = b.data ? b.data : xstrdup("");
	size_t n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	emit(lg, lv, task, repo, event, line);
	free(line);
}

void logger_lines(struct logger *lg, int lv, const char *task, const char *repo,
                  const char *event, const char *text)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n)
			logger_event(lg, lv, task, repo, event, "%.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

void logger_task(struct logger *lg, int lv, const char *task, const char *repo,
                 const char *event, const char *word, const char *detail)
{
	if (!lg)
		return;
	if (lg->format == LOGGER_TEXT) {
		char *line = detail ? xasprintf("%s  %-9s  %s", task, word, detail)
		                    : xasprintf("%s  %s", task, word);
		emit(lg, lv | LOGGER_ON_OUT, task, repo, event, line);
		free(line);
		return;
	}
	pthread_mutex_lock(&lg->mu);
	repo_remember(lg, task, repo);
	put_json(lg, lv, task, repo, event ? event : word, detail ? detail : word);
	pthread_mutex_unlock(&lg->mu);
}

/* ---- standard error as JSON lines ---- */

/* Says each whole line of b (and, with all, the rest) as an event
 * "stderr"; keeps a partial line.  A line over 4 KiB is said in parts. */
static void stderr_lines(struct logger *lg, struct buf *b, int all)
{
	size_t at = 0;
	while (at < b->len) {
		char *nl = memchr(b->data + at, '\n', b->len - at);
		size_t n = nl ? (size_t)(nl - (b->data + at)) : b->len - at;
		if (!nl && !all && n < 4096)
			break;
		if (n > 4096)
			n = 4096;
		if (n)
			logger_event(lg, LOGGER_ERROR, NULL, NULL, "stderr", "%.*s", (int)n, b->data + at);
		at += n + (nl && b->data + at + n == nl);
	}
	if (!at)
		return;
	memmove(b->data, b->data + at, b->len - at);
	b->len -= at;
	b->data[b->len] = '\0';
}

/* Reads until told to stop, then what the pipe still holds. */
static void *stderr_read(void *arg)
{
	struct logger *lg = arg;
	struct buf b = {0};
	char chunk[4096];
	int stopping = 0;
	for (;;) {
		struct pollfd p[2] = { { lg->rfd, POLLIN, 0 }, { lg->stop[0], POLLIN, 0 } };
		if (poll(p, stopping ? 1 : 2, stopping ? 0 : -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!stopping && p[1].revents)
			stopping = 1;
		if (!(p[0].revents & (POLLIN | POLLHUP))) {
			if (stopping)
				break;
			continue;
		}
		ssize_t n = read(lg->rfd, chunk, sizeof chunk);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		buf_add(&b, chunk, (size_t)n);
		stderr_lines(lg, &b, 0);
	}
	stderr_lines(lg, &b, 1);
	buf_free(&b);
	return NULL;
}

int logger_stderr_take(struct logger *lg, struct err *e)
{
	if (!lg || lg->format != LOGGER_JSON || lg->rfd >= 0)
		return 0;
	int p[2], s[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot make a pipe for standard error"));
	if (pipe2(s, O_CLOEXEC) < 0) {
		close(p[0]);
		close(p[1]);
		return err_errno(e, _("cannot make a pipe for standard error"));
	}
	fflush(stderr);
	int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
	/* fd 2 itself is inherited: the children write into the pipe. */
	if (saved < 0 || dup2(p[1], 2) < 0) {
		int en = errno;
		if (saved >= 0)
			close(saved);
		close(p[0]);
		close(p[1]);
		close(s[0]);
		close(s[1]);
		errno = en;
		return err_errno(e, _("cannot make a pipe for standard error"));
	}
	close(p[1]);
	/* The reader may be told to stop while a child still holds the
	 * pipe: it reads what is there and no more. */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	lg->rfd = p[0];
	lg->saved_fd2 = saved;
	lg->stop[0] = s[0];
	lg->stop[1] = s[1];
	return 0;
}

void logger_stderr_start(struct logger *lg)
{
	if (!lg || lg->rfd < 0 || lg->reading)
		return;
	if (pthread_create(&lg->reader, NULL, stderr_read, lg) == 0)
		lg->reading = 1;
}

static void stderr_give_back(struct logger *lg)
{
	if (lg->rfd < 0)
		return;
	fflush(stderr);
	dup2(lg->saved_fd2, 2);
	if (!lg->reading)
		logger_stderr_start(lg);
	if (lg->reading) {
		if (write(lg->stop[1], "", 1) < 0)
			(void)0;
		pthread_join(lg->reader, NULL);
	}
	close(lg->saved_fd2);
	close(lg->rfd);
	close(lg->stop[0]);
	close(lg->stop[1]);
	lg->rfd = -1;
}
