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

#define SYNC_INSERT "&insert_distributed_sync=1"

struct fleet_http {
	CURL *curl;
	char *base;               /* http[s]://HOST:PORT/?query= */
	struct fleet_url url;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int fleet_http_alloc(const struct fleet_url *u, struct fleet_http **out)
{
	pthread_once(&init_once, global_init);
	struct fleet_http *h = calloc(1, sizeof(*h));
	size_t len = strlen(u->host) + 64;
	if (!h || !(h->base = malloc(len)) || !(h->curl = curl_easy_init())) {
		fleet_http_free(h);
		return -ENOMEM;
	}
	h->url = *u;
	snprintf(h->base, len, "%s://%s:%u/?query=", u->https ? "https" : "http", u->host, u->port);
	CURL *c = h->curl;
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	/* a stalled server: give up after 10 s without a byte, not a fixed total
	 * (a big insert may take long) */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 10L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(c, CURLOPT_USERNAME, h->url.user);
	curl_easy_setopt(c, CURLOPT_PASSWORD, h->url.password);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	/* one connection per insert: inserts come seconds or minutes apart, and
	 * an idle connection held open delays a server's graceful restart (it
	 * waits for its clients) */
	curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	*out = h;
	return 0;
}

void fleet_http_free(struct fleet_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
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

/* One statement over the connection: QUERY in the URL (under QUERY_ID when
 * not NULL), BODY as the POST data, gzip-compressed when GZIP. *A (may be
 * NULL) gets whether a byte left and the body's bytes sent. */
static int perform(struct fleet_http *h, const char *query, const char *query_id,
		   const void *body, size_t len, bool gzip, struct fleet_buf *resp,
		   struct fleet_attempt *a, char *err, size_t errlen)
{
	char *q = curl_easy_escape(h->curl, query, 0);
	char *id = query_id ? curl_easy_escape(h->curl, query_id, 0) : NULL;
	size_t ulen = strlen(h->base) + (q ? strlen(q) : 0) +
		      (id ? strlen(id) + 16 + strlen(SYNC_INSERT) : 0) + 1;
	char *url = q && (id || !query_id) ? malloc(ulen) : NULL;
	struct fleet_buf answer = { 0 }, packed = { 0 };
	struct curl_slist *hdr = NULL;
	int ret = 0;
	if (url && gzip && len && fleet_gzip(body, len, &packed) == 0) {
		body = packed.data;
		len = packed.len;
		hdr = curl_slist_append(hdr, "Content-Encoding: gzip");
	}
	/* no "Expect: 100-continue" round trip before a body */
	struct curl_slist *h2 = url ? curl_slist_append(hdr, "Expect:") : NULL;
	if (!url || !h2) {
		curl_free(q);
		curl_free(id);
		free(url);
		curl_slist_free_all(h2 ? h2 : hdr);
		fleet_buf_free(&packed);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	hdr = h2;
	/* an insert into a Distributed table answers only once every shard
	 * wrote its part (insert_distributed_sync): else the answer comes
	 * while the rows wait in the initiator's queue, and a look after a
	 * lost answer would not find them yet (a MergeTree table ignores it) */
	snprintf(url, ulen, "%s%s%s%s%s", h->base, q, id ? "&query_id=" : "", id ? id : "",
		 id ? SYNC_INSERT : "");
	curl_free(q);
	curl_free(id);
	CURL *c = h->curl;
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, len ? body : "");
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	CURLcode rc = curl_easy_perform(c);
	long code = 0;
	curl_off_t up = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdr);
	if (a) {
		/* a byte of the body handed to the socket, or any answer: the
		 * server may have the whole insert; else it cannot have it */
		a->reached = up > 0 || code != 0;
		a->wire_bytes = (uint64_t)len;
	}
	fleet_buf_free(&packed);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && answer.failed)) {
		ret = curl_errno(rc);
		snprintf(err, errlen, "cannot reach %s:%u: %s", h->url.host, h->url.port,
			 cerr[0] ? cerr : curl_easy_strerror(rc));
	} else if (answer.failed) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory reading the answer");
	} else if (code != 200) {
		server_message(&answer, code, err, errlen);
		/* 4xx: the statement or the table is wrong, sending it again
		 * will not help; 5xx (and 3xx from a proxy) may pass: ClickHouse
		 * says 500 to "too many parts" and while shutting down */
		ret = auth_failure(code, &answer) ? -EACCES : code >= 400 && code < 500 ? -EINVAL : -EIO;
	}
	if (ret == 0 && resp)
		fleet_buf_put(resp, answer.data ? answer.data : "", answer.len);
	if (ret == 0 && resp && resp->failed)
		ret = -ENOMEM;
	fleet_buf_free(&answer);
	free(url);
	return ret;
}

int fleet_http_post(struct fleet_http *h, const char *query, const void *body, size_t len,
		    struct fleet_buf *resp, char *err, size_t errlen)
{
	return perform(h, query, NULL, body, len, false, resp, NULL, err, errlen);
}

int fleet_http_insert(struct fleet_http *h, const char *query, const char *query_id,
		      const void *body, size_t len, struct fleet_attempt *a,
		      char *err, size_t errlen)
{
	*a = (struct fleet_attempt){ 0 };
	return perform(h, query, query_id, body, len, true, NULL, a, err, errlen);
}
