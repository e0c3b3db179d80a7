/* ClickHouse's HTTP interface through libcurl: the statement in the URL's
 * query, the data (if any) as the POST body, basic auth. One easy handle per
 * connection, so keep-alive saves a handshake per insert. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"
#include "host/host.h"

#define SYNC_INSERT "&insert_distributed_sync=1"

struct fleet_http {
	CURL *curl;
	char *base;               /* http[s]://HOST:PORT/?query= */
	struct fleet_url url;
};

/* libcurl, loaded by the first connection (host_lib_load says why not at
 * start-up); its types and constants from its header */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	char *(*easy_escape)(CURL *, const char *, int);
	const char *(*easy_strerror)(CURLcode);
	void (*free)(void *);
} lc;
static int lc_state; /* 1 loaded, -errno */
static char lc_err[256];

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void global_init(void)
{
	const struct host_lib_sym syms[] = {
		{ "curl_global_init", (void **)&lc.global_init },
		{ "curl_easy_init", (void **)&lc.easy_init },
		{ "curl_easy_setopt", (void **)&lc.easy_setopt },
		{ "curl_easy_perform", (void **)&lc.easy_perform },
		{ "curl_easy_getinfo", (void **)&lc.easy_getinfo },
		{ "curl_easy_cleanup", (void **)&lc.easy_cleanup },
		{ "curl_slist_append", (void **)&lc.slist_append },
		{ "curl_slist_free_all", (void **)&lc.slist_free_all },
		{ "curl_easy_escape", (void **)&lc.easy_escape },
		{ "curl_easy_strerror", (void **)&lc.easy_strerror },
		{ "curl_free", (void **)&lc.free },
	};
	lc_state = host_lib_load("libcurl.so.4", syms, sizeof(syms) / sizeof(*syms), lc_err,
				 sizeof(lc_err));
	if (lc_state == 0 && lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(lc_err, sizeof(lc_err), "curl_global_init failed");
		lc_state = -EIO;
	}
	if (lc_state == 0)
		lc_state = 1;
}

const char *fleet_http_load_error(void)
{
	return lc_state < 0 ? lc_err : NULL;
}

int fleet_http_alloc(const struct fleet_url *u, struct fleet_http **out)
{
	pthread_once(&init_once, global_init);
	if (lc_state < 0)
		return -ELIBACC;
	struct fleet_http *h = calloc(1, sizeof(*h));
	size_t len = strlen(u->host) + 64;
	if (!h || !(h->base = malloc(len)) || !(h->curl = lc.easy_init())) {
		fleet_http_free(h);
		return -ENOMEM;
	}
	h->url = *u;
	snprintf(h->base, len, "%s://%s:%u/?query=", u->https ? "https" : "http", u->host, u->port);
	CURL *c = h->curl;
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	/* a stalled server: give up after 10 s without a byte, not a fixed total
	 * (a big insert may take long) */
	lc.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	lc.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 10L);
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	lc.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	lc.easy_setopt(c, CURLOPT_USERNAME, h->url.user);
	lc.easy_setopt(c, CURLOPT_PASSWORD, h->url.password);
	lc.easy_setopt(c, CURLOPT_POST, 1L);
	/* one connection per insert: inserts come seconds or minutes apart, and
	 * an idle connection held open delays a server's graceful restart (it
	 * waits for its clients) */
	lc.easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	*out = h;
	return 0;
}

void fleet_http_free(struct fleet_http *h)
{
	if (!h)
		return;
	if (h->curl)
		lc.easy_cleanup(h->curl);
	free(h->base);
	explicit_bzero(h->url.password, sizeof(h->url.password));
	free(h);
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct fleet_buf *b = arg;
	fleet_buf_put(b, p, size * n);
	return b->failed ? 0 : size * n;
}

/* The server's message: its first line, without ClickHouse's ", e.what()"
 * tail. */
static void server_message(const struct fleet_buf *b, long code, char *err, size_t errlen)
{
	const char *s = b->data ? b->data : "";
	size_t n = strcspn(s, "\n");
	const char *tail = strstr(s, ", e.what()");
	if (tail && (size_t)(tail - s) < n)
		n = (size_t)(tail - s);
	if (n > 300)
		n = 300;
	snprintf(err, errlen, "HTTP %ld: %.*s", code, (int)n, s);
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST: return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY: return -ENOMEM;
	default: return -EIO;
	}
}

/* ClickHouse answers a wrong user or password with 401 or 403 (18.16: 500
 * with code 193, "Wrong password", or 192, "Unknown user"). */
static bool auth_failure(long code, const struct fleet_buf *b)
{
	const char *s = b->data ? b->data : "";
	return code == 401 || code == 403 || strncmp(s, "Code: 192,", 10) == 0 ||
	       strncmp(s, "Code: 193,", 10) == 0 || strncmp(s, "Code: 516,", 10) == 0;
}

/* One statement to send: QUERY in the URL (under QUERY_ID when not NULL),
 * BODY as the POST data, gzip-compressed when GZIP. */
struct request {
	const char *query, *query_id;
	const void *body;
	size_t len;
	bool gzip;
};

/* What came back: libcurl's result and message, the HTTP code (0: none),
 * the answer's bytes. */
struct answer {
	CURLcode rc;
	char cerr[CURL_ERROR_SIZE];
	long code;
	struct fleet_buf body;
};

/* What answer AN means: 0, or -errno with ERR saying why (H names the
 * server). */
static int classify(const struct fleet_http *h, const struct answer *an, char *err,
		    size_t errlen)
{
	if (an->rc != CURLE_OK && !(an->rc == CURLE_WRITE_ERROR && an->body.failed)) {
		snprintf(err, errlen, "cannot reach %s:%u: %s", h->url.host, h->url.port,
			 an->cerr[0] ? an->cerr : lc.easy_strerror(an->rc));
		return curl_errno(an->rc);
	}
	if (an->body.failed) {
		snprintf(err, errlen, "out of memory reading the answer");
		return -ENOMEM;
	}
	if (an->code == 200)
		return 0;
	server_message(&an->body, an->code, err, errlen);
	/* 4xx: the statement or the table is wrong, sending it again will not
	 * help; 5xx (and 3xx from a proxy) may pass: ClickHouse says 500 to
	 * "too many parts" and while shutting down */
	return auth_failure(an->code, &an->body) ? -EACCES :
	       an->code >= 400 && an->code < 500 ? -EINVAL : -EIO;
}

/* R's URL: the base, the escaped query and, under a query id, the id and
 * SYNC_INSERT: an insert into a Distributed table answers only once every
 * shard wrote its part (insert_distributed_sync), else the answer comes
 * while the rows wait in the initiator's queue, and a look after a lost
 * answer would not find them yet (a MergeTree table ignores it). Returns
 * it (malloc'd), or NULL without memory. */
static char *request_url(const struct fleet_http *h, const struct request *r)
{
	char *q = lc.easy_escape(h->curl, r->query, 0);
	char *id = r->query_id ? lc.easy_escape(h->curl, r->query_id, 0) : NULL;
	char *url = NULL;
	if (q && (id || !r->query_id) &&
	    asprintf(&url, "%s%s%s%s%s", h->base, q, id ? "&query_id=" : "", id ? id : "",
		     id ? SYNC_INSERT : "") < 0)
		url = NULL;
	lc.free(q);
	lc.free(id);
	return url;
}

/* Sends R over the connection; the answer's bytes go to RESP (may be
 * NULL). *A (may be NULL) gets whether a byte left and the body's bytes
 * sent. Returns 0, or -errno with ERR saying why. */
static int perform(struct fleet_http *h, const struct request *r, struct fleet_buf *resp,
		   struct fleet_attempt *a, char *err, size_t errlen)
{
	struct answer an = { 0 };
	CURL *c = h->curl;
	curl_off_t up = 0;
	struct fleet_buf packed = { 0 };
	struct curl_slist *hdr = NULL, *more;
	const void *body = r->body;
	size_t len = r->len;
	int ret = -ENOMEM;
	bool sent = false;
	char *url = request_url(h, r);
	if (!url)
		goto cleanup;
	if (r->gzip && len && fleet_gzip(body, len, &packed) == 0) {
		if (!(more = lc.slist_append(hdr, "Content-Encoding: gzip")))
			goto cleanup;
		hdr = more;
		body = packed.data;
		len = packed.len;
	}
	/* no "Expect: 100-continue" round trip before a body */
	if (!(more = lc.slist_append(hdr, "Expect:")))
		goto cleanup;
	hdr = more;
	lc.easy_setopt(c, CURLOPT_URL, url);
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	lc.easy_setopt(c, CURLOPT_POSTFIELDS, len ? body : "");
	lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	lc.easy_setopt(c, CURLOPT_WRITEDATA, &an.body);
	lc.easy_setopt(c, CURLOPT_ERRORBUFFER, an.cerr);
	an.rc = lc.easy_perform(c);
	sent = true;
	lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &an.code);
	lc.easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
	lc.easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	if (a) {
		/* a byte of the body handed to the socket, or any answer: the
		 * server may have the whole insert; else it cannot have it */
		a->reached = up > 0 || an.code != 0;
		a->wire_bytes = (uint64_t)len;
	}
	ret = classify(h, &an, err, errlen);
	if (ret == 0 && resp)
		fleet_buf_put(resp, an.body.data ? an.body.data : "", an.body.len);
	if (ret == 0 && resp && resp->failed)
		ret = -ENOMEM;
cleanup:
	if (!sent)
		snprintf(err, errlen, "out of memory");
	lc.slist_free_all(hdr);
	fleet_buf_free(&packed);
	fleet_buf_free(&an.body);
	free(url);
	return ret;
}

int fleet_http_post(struct fleet_http *h, const char *query, const void *body, size_t len,
		    struct fleet_buf *resp, char *err, size_t errlen)
{
	const struct request r = { .query = query, .body = body, .len = len };
	return perform(h, &r, resp, NULL, err, errlen);
}

int fleet_http_insert(struct fleet_http *h, const char *query, const char *query_id,
		      const void *body, size_t len, struct fleet_attempt *a,
		      char *err, size_t errlen)
{
	*a = (struct fleet_attempt){ 0 };
	const struct request r = { .query = query, .query_id = query_id, .body = body, .len = len,
				   .gzip = true };
	return perform(h, &r, NULL, a, err, errlen);
}
