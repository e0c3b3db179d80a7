/* fleet: ftstack's stacks in ClickHouse. The sink inserts each interval's
 * (or the run's) symbolized aggregate over HTTP from a sender thread with a
 * bounded queue and retries; the clickhouse:// report source has ClickHouse
 * group the fleet's rows and hands back one row per distinct stack.
 *
 * Rows travel as RowBinary both ways, so names are bytes that need no
 * escaping; the values that do go into SQL text (database and table names,
 * filters) are quoted by fleet_sql_*. Never prints: errors come back as
 * -errno with a message in a caller buffer, and no message ever holds the
 * password.
 */
#ifndef FTSTACK_FLEET_H
#define FTSTACK_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "aggregate/aggregate.h"

#define FLEET_DEFAULT_PORT 8123
#define FLEET_DEFAULT_TABLE "ftstack_stacks"
#define FLEET_PASSWORD_ENV "FTSTACK_CLICKHOUSE_PASSWORD"

/* ---- URLs (url.c) ---- */

/* clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DB[.TABLE][?since=&until=&host=&event=&mode=]
 * (clickhouses:// for https, port 8443). USER, PASSWORD and the query's
 * values may be percent-encoded. The query's filters are for report: they
 * let the two sides of --diff differ. */
struct fleet_url {
	bool https;
	char user[128];
	char password[256];
	char host[256];
	unsigned port;
	char db[128];
	char table[128];
	bool has_table;      /* the URL named the table */
	char since[64], until[64]; /* report filters from the URL's query, "" = none */
	char host_pattern[256], event[256], mode[32];
};

/* Returns true when S starts with a scheme ("word://"). */
bool fleet_is_url(const char *s);
/* Parses S into *u. ENV_PASSWORD (FTSTACK_CLICKHOUSE_PASSWORD, may be NULL)
 * is taken when the URL has none. Returns 0, or -EINVAL with the reason in
 * err (unknown scheme, no host, bad port, no database...). */
int fleet_url_parse(const char *s, const char *env_password, struct fleet_url *u,
		    char *err, size_t errlen);
/* Writes "[https://]USER@HOST:PORT/DB.TABLE" into buf, never the password.
 * Returns buf. */
char *fleet_url_show(const struct fleet_url *u, char *buf, size_t len);

/* ---- SQL (sql.c) ---- */

/* A growing byte buffer. */
struct fleet_buf {
	char *data;
	size_t len, cap;
	bool failed;         /* an allocation failed: the content is incomplete */
};
void fleet_buf_free(struct fleet_buf *b);
void fleet_buf_put(struct fleet_buf *b, const void *p, size_t n);
void fleet_buf_str(struct fleet_buf *b, const char *s);

/* Appends S as a ClickHouse string literal: quotes, backslashes and every
 * byte outside printable ASCII escaped (\xHH), so any bytes round-trip. */
void fleet_sql_string(struct fleet_buf *b, const char *s);
/* Appends NAME as a back-quoted identifier. */
void fleet_sql_ident(struct fleet_buf *b, const char *name);
/* Appends S as a LIKE pattern literal: '*' and '?' of the glob become '%'
 * and '_', and S's own '%', '_' and '\' match themselves. */
void fleet_sql_like(struct fleet_buf *b, const char *glob);
/* The table's columns, in the order a row carries them (rows.c writes them
 * in this order): fleet_columns[i] for i < fleet_ncolumns. A column added
 * after the first release is added to an older table by fleet_sql_add_column
 * (fleet_open looks which are missing): append new ones at the end. */
struct fleet_column {
	const char *name;           /* as written in SQL (quoted where a keyword) */
	const char *bare;           /* the name as system.columns lists it */
	const char *type;
	bool hourly;                /* a key of TABLE_hourly too (the hour and the
	                             * summed weight are its own) */
};
extern const struct fleet_column fleet_columns[];
extern const size_t fleet_ncolumns;

/* The tables of DB.TABLE: the minute rows (TABLE), each stack's frames once
 * by hash (TABLE_stacks, a ReplacingMergeTree), the hourly rollup
 * (TABLE_hourly, a SummingMergeTree) and the materialized view that fills
 * it from the minute rows (TABLE_hourly_mv). Statement I (< FLEET_NCREATE)
 * of those CREATE ... IF NOT EXISTS, in the order to run them. Returns 0,
 * -EINVAL past the last, or -ENOMEM. */
#define FLEET_NCREATE 4
int fleet_sql_create(const struct fleet_url *u, unsigned i, struct fleet_buf *b);
/* SELECT name, engine FROM system.tables for TABLE, TABLE_stacks and
 * TABLE_hourly, as TabSeparated lines. */
int fleet_sql_tables(const struct fleet_url *u, struct fleet_buf *b);
/* The INSERT ... FORMAT RowBinary statement of DB.TABLE (the minute rows). */
int fleet_sql_insert(const struct fleet_url *u, struct fleet_buf *b);
/* The INSERT ... FORMAT RowBinary statement of DB.TABLE_stacks. */
int fleet_sql_insert_stacks(const struct fleet_url *u, struct fleet_buf *b);
/* SELECT name FROM system.columns of DB.TABLE, as TabSeparated lines. */
int fleet_sql_columns(const struct fleet_url *u, struct fleet_buf *b);
/* ALTER TABLE DB.TABLE ADD COLUMN for fleet_columns[i] (18.16 has no ADD
 * COLUMN IF NOT EXISTS: fleet_open asks system.columns first). */
int fleet_sql_add_column(const struct fleet_url *u, size_t i, struct fleet_buf *b);

struct fleet_batch;
/* SELECT row FROM DB.TABLE holding batch B's identity, as RowBinary UInt32s:
 * the rows of B the table holds (one day's partition looked at). */
int fleet_sql_landed(const struct fleet_url *u, const struct fleet_batch *b, struct fleet_buf *out);
/* SELECT count() FROM system.processes for QUERY_ID, as TabSeparated. */
int fleet_sql_running(const char *query_id, struct fleet_buf *out);

/* Parses a report time: seconds since the epoch, "YYYY-MM-DD", "YYYY-MM-DD
 * HH:MM[:SS]" (or with a T; local time, or UTC with a trailing Z), "now",
 * or "-N[smhd]" before NOW. Returns 0 or -EINVAL. */
int fleet_time_parse(const char *s, time_t now, int64_t *out);

/* What report asks of the table. Strings may be NULL (no filter). */
struct fleet_query {
	int64_t since, until;       /* [since, until), seconds; until 0 = none */
	bool has_since;
	const char *host_pattern;   /* glob; without * or ?, the name itself */
	const char *event;          /* glob; likewise */
	const char *mode;           /* count, profile, offcpu */
	bool by_comm;               /* group by comm (folded, -P) */
	bool by_pid;                /* group by pid (-P) */
};
/* The SELECT that sums DB.TABLE_hourly's rows by stack when [since, until)
 * is whole hours (or open), else DB.TABLE's minute rows, joined with
 * DB.TABLE_stacks for the frames and grouped by them. Returns 0 or -ENOMEM. */
int fleet_sql_select(const struct fleet_url *u, const struct fleet_query *q,
		     struct fleet_buf *b);

/* ---- rows (rows.c): RowBinary ---- */

/* What every row of one insert shares. */
struct fleet_rows_meta {
	uint32_t ts;                /* interval end, seconds since the epoch */
	uint32_t duration_ms;
	const char *host;
	const char *mode;           /* "count", "profile", "offcpu" */
	const char *const *events;  /* names indexed by agg_named_stack.event */
	uint32_t nevents;
	bool by_weight;             /* weight column = stack weight (offcpu us), else count */
	uint64_t run;               /* the batch's identity: (host, run, seq), and */
	uint32_t seq;               /* each row's index in it (the row column) */
	const char *cgroup;         /* the cgroup column of stacks without their own
	                             * (--cgroup's path); NULL = "" */
};
/* Appends one row per stack to B (the stack as its fleet_stack_hash; a
 * NULL comm is ""; the cgroup is the stack's, else m->cgroup); row i gets row index i. ENDS (may be NULL)
 * gets where each row ends in B. Returns the weight added, and leaves
 * b->failed set on -ENOMEM. */
uint64_t fleet_rows_encode(struct fleet_buf *b, const struct fleet_rows_meta *m,
			   const struct agg_named_stack *s, size_t n, size_t *ends);
/* RowBinary's pieces: a LEB128 number, a little-endian number of BYTES, a
 * string (length and bytes; NULL is ""). */
void fleet_put_varint(struct fleet_buf *b, uint64_t v);
void fleet_put_le(struct fleet_buf *b, uint64_t v, size_t bytes);
void fleet_put_str(struct fleet_buf *b, const char *s);
/* The weight column of stack S under M. */
uint64_t fleet_rows_weight(const struct fleet_rows_meta *m, const struct agg_named_stack *s);

/* ---- stacks stored once (stacks.c) ---- */

/* A 64-bit hash of S's frames (kernel and user apart), never 0. */
uint64_t fleet_stack_hash(const struct agg_named_stack *s);
/* Appends S's row of TABLE_stacks: HASH, then kernel and user frames as
 * arrays, root first. */
void fleet_stacks_encode(struct fleet_buf *b, uint64_t hash, const struct agg_named_stack *s);
/* The hashes whose frames a run has written to TABLE_stacks. */
struct fleet_seen;
/* Returns 0 and an empty set, or -ENOMEM. */
int fleet_seen_alloc(struct fleet_seen **out);
void fleet_seen_free(struct fleet_seen *s);
/* Returns true when H was added. */
bool fleet_seen_has(const struct fleet_seen *s, uint64_t h);
/* Adds H (once). Returns 0 or -ENOMEM. */
int fleet_seen_add(struct fleet_seen *s, uint64_t h);

/* One grouped row of report's SELECT. Frames root first, as stored. */
struct fleet_row {
	const char *event;
	const char *comm;
	uint32_t pid;
	const char **kernel;
	uint32_t nk;
	const char **user;
	uint32_t nu;
	uint64_t weight;
};
typedef int (*fleet_row_fn)(void *ctx, const struct fleet_row *r);
/* Decodes the SELECT's RowBinary answer, calling FN per row. Returns the
 * number of rows, -EPROTO for a truncated or malformed answer, -ENOMEM, or
 * what FN returned when it was not 0. */
long fleet_rows_decode(const char *data, size_t len, fleet_row_fn fn, void *ctx);

/* ---- HTTP (http.c): libcurl ---- */

struct fleet_http;
/* Returns 0 and a connection to U's server, -ENOMEM, or -ELIBACC when
 * libcurl.so.4 cannot be loaded (at the first call; fleet_http_load_error
 * says why). */
int fleet_http_alloc(const struct fleet_url *u, struct fleet_http **out);
/* Why libcurl.so.4 could not be loaded, or NULL. */
const char *fleet_http_load_error(void);
void fleet_http_free(struct fleet_http *h);
/* Runs QUERY (sent in the URL) with BODY (data for an INSERT, may be empty),
 * the answer appended to RESP (may be NULL). Returns 0; -ECONNREFUSED,
 * -EHOSTUNREACH, -ETIMEDOUT or -EIO when the server could not be reached
 * or the transfer broke (worth retrying); -EACCES for refused credentials;
 * -EINVAL when the server rejected the statement; -ENOMEM. err gets a
 * one-line reason (the server's own message where it gave one). */
int fleet_http_post(struct fleet_http *h, const char *query, const void *body, size_t len,
		    struct fleet_buf *resp, char *err, size_t errlen);

/* Appends LEN bytes of IN gzip-compressed to OUT (gzip.c). Returns 0 or
 * -ENOMEM. */
int fleet_gzip(const void *in, size_t len, struct fleet_buf *out);

/* What one insert attempt did on the wire. */
struct fleet_attempt {
	bool reached;               /* a byte of the request left: the server may have it */
	uint64_t wire_bytes;        /* the body's bytes as sent (gzip) */
};
/* fleet_http_post for an INSERT: the body gzip-compressed (Content-Encoding,
 * which 18.16 reads too), the statement run under QUERY_ID (so that a later
 * look can tell whether it still runs; NULL: none) with
 * insert_distributed_sync=1 (answered once every shard wrote). Same
 * returns; *a says whether the request may have reached the server. */
int fleet_http_insert(struct fleet_http *h, const char *query, const char *query_id,
		      const void *body, size_t len, struct fleet_attempt *a,
		      char *err, size_t errlen);

/* ---- batches (batch.c): rows with an identity ---- */

/* One insert's rows: (host, run, seq) names the batch, and each row carries
 * it and its index, so the table can say which rows of it landed. */
struct fleet_batch {
	char *host;
	uint64_t run;               /* random per ftstack run */
	uint32_t seq;               /* the interval's number in the run, from 1 */
	uint32_t ts;                /* its rows' ts: the partition to look in */
	struct fleet_buf data;      /* the rows, RowBinary */
	size_t rows;
	size_t *end;                /* row i is data[end[i-1] (or 0), end[i]) */
	uint64_t *weight;           /* row i's weight */
	uint64_t *hash;             /* row i's stack (NULL: no TABLE_stacks rows) */
	struct fleet_buf frames;    /* row i's TABLE_stacks row is */
	size_t *fend;               /*   frames[fend[i-1] (or 0), fend[i]) */
};
/* Encodes stacks S[0..n) under M (whose run and seq name the batch) into B.
 * Returns 0 or -ENOMEM (B freed). */
int fleet_batch_encode(struct fleet_batch *b, const struct fleet_rows_meta *m,
		       const struct agg_named_stack *s, size_t n);
void fleet_batch_free(struct fleet_batch *b);
/* The id of attempt ATTEMPT at sending B: "ftstack-RUN-SEQ-ATTEMPT", hex run. */
void fleet_batch_query_id(const struct fleet_batch *b, unsigned attempt, char *buf, size_t len);
/* A random run id (never 0). */
uint64_t fleet_run_id(void);

/* What the sender does after an insert attempt that returned RET (0 or a
 * fleet_http_insert error) having REACHED the server or not. */
enum fleet_next {
	FLEET_DONE,                 /* written */
	FLEET_REJECTED,             /* 4xx: the statement or table is wrong, drop */
	FLEET_RESEND,               /* nothing reached the server: send it again */
	FLEET_VERIFY,               /* it may have been written: ask the table first */
};
enum fleet_next fleet_next_step(int ret, bool reached);

/* ---- the sink (sink.c): a sender thread behind a bounded queue ---- */

/* How the sender delivers batches; the real one is fleet.c's (HTTP), tests
 * pass a fake. */
struct fleet_transport {
	/* Sends BODY (rows of a batch) under QUERY_ID. Returns as
	 * fleet_http_insert. */
	int (*insert)(void *ctx, const char *query_id, const void *body, size_t len,
		      struct fleet_attempt *a, char *err, size_t errlen);
	/* Once the attempt QUERY_ID no longer runs on the server, sets
	 * present[i] for each row i of B the table holds. Returns 0, -EAGAIN
	 * while the attempt still runs, or fleet_http_post's errors. */
	int (*landed)(void *ctx, const struct fleet_batch *b, const char *query_id,
		      bool *present, char *err, size_t errlen);
	/* Writes BODY (TABLE_stacks rows: writing one twice is harmless).
	 * Returns as fleet_http_insert. */
	int (*insert_stacks)(void *ctx, const void *body, size_t len, struct fleet_attempt *a,
			     char *err, size_t errlen);
	void *ctx;
};

struct fleet_sink_config {
	struct fleet_transport tr;
	size_t buffer_bytes;        /* unsent batches kept at most (--sink-buffer) */
	unsigned backoff_min_ms;    /* first retry delay, doubled up to ... */
	unsigned backoff_max_ms;
	unsigned flush_ms;          /* at close: how long unsent batches still get */
};

struct fleet_sink_stats {
	uint64_t rows_sent, weight_sent, inserts;
	uint64_t rows_pending, weight_pending;        /* unsent when close gave up */
	uint64_t rows_unsure;                         /* of those, in a batch that may have landed */
	uint64_t rows_dropped_full, weight_dropped_full; /* --sink-buffer full */
	uint64_t rows_rejected, weight_rejected;      /* the server refused the insert */
	uint64_t retries;                             /* failed attempts retried */
	uint64_t verified;                            /* unanswered inserts looked up */
	uint64_t rows_found;                          /* rows those looks found written */
	uint64_t bytes_raw, bytes_wire;               /* bodies sent: RowBinary, and compressed */
	uint64_t stacks_sent;                         /* TABLE_stacks rows written */
	char last_error[256];                         /* the last failure's reason */
};

struct fleet_sink;
/* Opens the sink: starts its sender thread (fleet_sink_close stops it).
 * Returns 0, -ENOMEM or -errno of pthread_create. */
int fleet_sink_open(const struct fleet_sink_config *c, struct fleet_sink **out);
/* Queues batch B (taken: *b is emptied). When the queue would exceed
 * buffer_bytes, the oldest unsent batches are dropped (or this one, if it
 * cannot fit) and counted; never one being sent or one that may have
 * partly landed. Never blocks on the network. Returns 0 or -ENOMEM. */
int fleet_sink_push(struct fleet_sink *s, struct fleet_batch *b);
/* A snapshot of the counts. */
void fleet_sink_stats(struct fleet_sink *s, struct fleet_sink_stats *out);
/* Gives unsent batches flush_ms more, stops the thread, fills *out and
 * frees the sink. NULL is fine. */
void fleet_sink_close(struct fleet_sink *s, struct fleet_sink_stats *out);

/* ---- the pieces put together (fleet.c) ---- */

struct fleet;
/* Connects to URL's server and creates its table if absent (which proves
 * address, credentials and database), then starts the sink. Returns 0,
 * -EINVAL (bad URL), or the fleet_http_post errors; err says why. */
int fleet_open(const char *url, const char *env_password, size_t buffer_bytes,
	       struct fleet **out, char *err, size_t errlen);
/* Queues one interval's stacks (all of them: -m/-t/-x are for display) as
 * the run's next batch: M's run and seq are set here. Returns 0 or -ENOMEM. */
int fleet_send(struct fleet *f, const struct fleet_rows_meta *m,
	       const struct agg_named_stack *s, size_t n);
/* Flushes, stops and frees; *out gets the counts. NULL is fine. */
void fleet_close(struct fleet *f, struct fleet_sink_stats *out);

/* Runs report's grouped SELECT on URL's table, FN once per distinct stack.
 * The URL's own ?since=&until=&host=&event=&mode= override Q's. Returns the
 * number of rows or -errno with err set. */
long fleet_report(const char *url, const char *env_password, const struct fleet_query *q,
		  fleet_row_fn fn, void *ctx, char *err, size_t errlen);

#endif
