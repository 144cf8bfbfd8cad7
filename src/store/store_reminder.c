/* store_reminder: the reminders sent for a person's gate (store_reminder.h). */
#include "autoconfig.h"
#include "store_reminder.h"

#include <sqlite3.h>
#include "store_int.h"

int store_reminder_claim(struct store *s, const char *id, double since, int n, double now,
                         struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	sqlite3_stmt *st;
	int rc = 0;
	/* The upsert's WHERE is the check: a row of this gate with n or more
	 * changes nothing. */
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO reminders (task_seq, since, sent, at) "
	        "SELECT seq, ?1, ?2, ?3 FROM tasks WHERE id = ?4 AND status = 'review' "
	        "ON CONFLICT(task_seq) DO UPDATE SET since = excluded.since, sent = excluded.sent, "
	        "at = excluded.at WHERE reminders.since <> excluded.since OR "
	        "reminders.sent < excluded.sent", -1, &st, NULL) != SQLITE_OK)
		return store_tx_end(s, store_db_err(s, e, "reminder"), e);
	sqlite3_bind_double(st, 1, since);
	sqlite3_bind_int(st, 2, n);
	sqlite3_bind_double(st, 3, now);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_db_err(s, e, "reminder");
	else
		rc = sqlite3_changes(s->db) > 0;
	sqlite3_finalize(st);
	if (rc == 1) {
		if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET updated = ? WHERE id = ?", -1, &st,
		                       NULL) != SQLITE_OK)
			return store_tx_end(s, store_db_err(s, e, "reminder"), e);
		sqlite3_bind_double(st, 1, now);
		sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = store_db_err(s, e, "reminder");
		sqlite3_finalize(st);
	}
	return store_tx_end(s, rc, e);
}
