#include "autoconfig.h"
#include "task.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "i18n.h"

static const char *const names[TASK_NSTATUS] = {
	"queued", "preparing", "running", "testing", "review", "pushing",
	"done", "failed", "rejected", "cancelled", "lost",
};

const char *task_status_name(enum task_status s)
{
	return (unsigned)s < TASK_NSTATUS ? names[s] : "unknown";
}

const char *task_status_label(enum task_status s)
{
	static const char *const labels[TASK_NSTATUS] = {
		/* TRANSLATORS: task statuses, as the dashboard shows them;
		   keep them short (the list's column is 9 wide). */
		N_("queued"), N_("preparing"), N_("running"), N_("testing"), N_("review"),
		N_("pushing"), N_("done"), N_("failed"), N_("rejected"), N_("cancelled"),
		N_("lost"),
	};
	return (unsigned)s < TASK_NSTATUS ? _(labels[s]) : "unknown";
}

int task_status_parse(const char *name)
{
	for (int i = 0; i < TASK_NSTATUS; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

const char *task_reason_label(const char *reason)
{
	static const char *const words[] = {
		/* TRANSLATORS: why a task failed, one word each, as the
		   dashboard marks a failed task ("[tool]") and show prints
		   it; keep them short. */
		N_("budget"), N_("model-auth"), N_("rate-limit"), N_("overloaded"),
		N_("context"), N_("model"), N_("tool"), N_("timeout"), N_("tests"),
		N_("contract"), N_("setup"), N_("crashed"), N_("runner"),
		N_("unschedulable"), N_("image"), N_("evicted"), N_("memory"),
	};
	if (!reason)
		return NULL;
	int s = task_status_parse(reason);
	if (s >= 0) /* a step's name: where it failed */
		return task_status_label((enum task_status)s);
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(words[i], reason))
			return _(words[i]);
	return reason;
}

int task_status_is_terminal(enum task_status s)
{
	return s == TASK_DONE || s == TASK_FAILED || s == TASK_REJECTED ||
	       s == TASK_CANCELLED || s == TASK_LOST;
}

int task_status_is_active(enum task_status s)
{
	return s == TASK_PREPARING || s == TASK_RUNNING || s == TASK_TESTING ||
	       s == TASK_PUSHING;
}

#define B(s) (1u << (s))

/* A task's life (paddock(1), "One task's life"): forward through the
 * steps, failed/cancelled/lost from any active step, and the gate's
 * ways out (review -> running is a request for changes).  Recovery: an
 * interrupted first round is queued again, an interrupted or failed later
 * round goes back to review. */
static const unsigned next[TASK_NSTATUS] = {
	[TASK_QUEUED] = B(TASK_PREPARING) | B(TASK_CANCELLED) | B(TASK_LOST),
	[TASK_PREPARING] = B(TASK_RUNNING) | B(TASK_FAILED) | B(TASK_CANCELLED) | B(TASK_LOST) |
	                   B(TASK_QUEUED) | B(TASK_REVIEW),
	[TASK_RUNNING] = B(TASK_TESTING) | B(TASK_REVIEW) | B(TASK_DONE) | B(TASK_FAILED) |
	                 B(TASK_CANCELLED) | B(TASK_LOST) | B(TASK_QUEUED),
	[TASK_TESTING] = B(TASK_RUNNING) | B(TASK_REVIEW) | B(TASK_DONE) | B(TASK_FAILED) |
	                 B(TASK_CANCELLED) | B(TASK_LOST) | B(TASK_QUEUED),
	[TASK_REVIEW] = B(TASK_RUNNING) | B(TASK_PUSHING) | B(TASK_REJECTED) |
	                B(TASK_CANCELLED) | B(TASK_DONE),
	[TASK_PUSHING] = B(TASK_DONE) | B(TASK_REVIEW) | B(TASK_FAILED) | B(TASK_LOST),
	/* A task stopped with paddock can be queued again. */
	[TASK_LOST] = B(TASK_QUEUED),
};

int task_transition_allowed(enum task_status from, enum task_status to)
{
	if ((unsigned)from >= TASK_NSTATUS || (unsigned)to >= TASK_NSTATUS)
		return 0;
	return (next[from] & B(to)) != 0;
}

/* Crockford's base32 without i, l, o, u: ids are read aloud and typed. */
static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

void task_id_new(char out[TASK_ID_LEN + 1])
{
	unsigned char r[TASK_ID_LEN];
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = getrandom(r + got, sizeof r - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	/* The first two characters follow the clock so ids sort roughly by
	 * creation; the rest are random. */
	unsigned long t = (unsigned long)time(NULL) / 86400;
	out[0] = alphabet[(t / 32) % 32];
	out[1] = alphabet[t % 32];
	for (int i = 2; i < TASK_ID_LEN; i++)
		out[i] = alphabet[r[i] % 32];
	out[TASK_ID_LEN] = '\0';
}

int task_id_valid(const char *s, int prefix_ok)
{
	size_t n = strlen(s);
	if (n > TASK_ID_LEN || n < (prefix_ok ? 4u : (size_t)TASK_ID_LEN))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr(alphabet, s[i]) || !s[i])
			return 0;
	return 1;
}
