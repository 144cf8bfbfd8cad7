/* metrics: GET /metrics, the Prometheus text exposition format (version
 * 0.0.4) of what paddock is doing (paddock-api(7), METRICS).
 *
 * Its numbers come from the store (store_metrics_read: counters kept by
 * the store's triggers, whichever process did the work) and from this
 * process (the GitHub poller's sync errors); the configuration gives the
 * budgets.  Names and units follow Prometheus' conventions: seconds and
 * bytes, _total on counters, the money's currency in its name.  Every
 * label value is escaped as the format says (backslash, double quote,
 * newline), and a byte that is not UTF-8 becomes U+FFFD. */
#ifndef PADDOCK_METRICS_H
#define PADDOCK_METRICS_H

#include <stddef.h>
#include "buf.h"
#include "config.h"
#include "err.h"
#include "store.h"

/* The Content-Type of the exposition. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The histograms' bucket bounds in seconds, for agents' steps (a second
 * to a day); the store's trigger (schema 16) counts in the same. */
#define METRICS_NBUCKETS 14
extern const char *const metrics_buckets[METRICS_NBUCKETS];

/* The exposition of st's numbers now (malloc'd), or NULL with e set. */
char *metrics_text(struct store *st, const struct config *cfg, struct err *e);
/* The exposition of the store's numbers m (store_metrics_read's) at unix
 * time now, appended to out: metrics_text's, apart for tests. */
void metrics_render(struct buf *out, const struct store_metric *m, size_t n,
                    const struct config *cfg, double now);
/* v as a label value inside its double quotes, appended to out. */
void metrics_escape(struct buf *out, const char *v);

#endif
