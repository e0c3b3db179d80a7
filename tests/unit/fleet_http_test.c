/* fleet_http_insert against a loopback server played by a thread: whether
 * an attempt "reached" the server (it may have written the batch) and the
 * sender's next step, for each way an insert can end. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fleet/fleet.h"
#include "check.h"

enum play { ANSWER_200, ANSWER_400, ANSWER_500, CLOSE_AFTER_REQUEST };

struct server {
	int fd;
	unsigned port;
	enum play play;
	size_t got;               /* request bytes read */
	char head[4096];          /* its start */
};

/* Reads the request (head and the Content-Length body). Returns its size. */
static size_t read_request(int c, char *head, size_t headlen)
{
	char buf[65536];
	size_t n = 0, want = 0;
	for (;;) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return n;
		n += (size_t)r;
		buf[n] = '\0';
		char *end = strstr(buf, "\r\n\r\n");
		if (end && !want) {
			char *cl = strcasestr(buf, "Content-Length:");
			want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (want && n >= want) {
			snprintf(head, headlen, "%s", buf);
			return n;
		}
	}
}

static void *serve(void *arg)
{
	struct server *s = arg;
	int c = accept(s->fd, NULL, NULL);
	if (c < 0)
		return NULL;
	s->got = read_request(c, s->head, sizeof(s->head));
	static const char *answers[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 10\r\nConnection: close\r\n\r\nCode: 62, ",
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 11\r\nConnection: close\r\n\r\nCode: 252, ",
	};
	if (s->play != CLOSE_AFTER_REQUEST && write(c, answers[s->play], strlen(answers[s->play])) < 0)
		s->got = 0;
	close(c);
	return NULL;
}

/* One insert of a small body against a server playing PLAY (or, with
 * LISTEN false, a port nothing listens on). */
static void attempt(const char *what, bool listening, enum play play, int want_ret,
		    bool want_reached, enum fleet_next want_next)
{
	struct server s = { .play = play };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	s.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s.fd < 0 || bind(s.fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(s.fd, (struct sockaddr *)&a, &len) < 0) {
		CHECK(0, "%s: a loopback socket", what);
		return;
	}
	s.port = ntohs(a.sin_port);
	pthread_t t;
	if (listening) {
		listen(s.fd, 1);
		pthread_create(&t, NULL, serve, &s);
	} else {
		close(s.fd);   /* the port is free: connecting is refused */
	}
	char url[128], err[512] = "";
	struct fleet_url u;
	struct fleet_http *h = NULL;
	snprintf(url, sizeof(url), "clickhouse://127.0.0.1:%u/db.t", s.port);
	fleet_url_parse(url, NULL, &u, err, sizeof(err));
	fleet_http_alloc(&u, &h);
	struct fleet_attempt at;
	const char body[] = "rows of a batch";
	int ret = fleet_http_insert(h, "INSERT INTO t FORMAT RowBinary", "ftstack-1-1-1", body,
				    sizeof(body), &at, err, sizeof(err));
	fleet_http_free(h);
	if (listening) {
		pthread_join(t, NULL);
		close(s.fd);
	}
	CHECK(ret == want_ret && at.reached == want_reached, "%s: %d, %s (%s)", what, ret,
	      at.reached ? "reached the server" : "never reached it", err);
	CHECK(fleet_next_step(ret, at.reached) == want_next, "%s: next step %d", what, (int)want_next);
	if (listening && play != ANSWER_200)
		CHECK(s.got > sizeof(body), "%s: the server had the whole request (%zu bytes)", what, s.got);
	if (listening && play == ANSWER_200)
		CHECK(strcasestr(s.head, "\r\nContent-Encoding: gzip\r\n") &&
		      strstr(s.head, "&query_id=ftstack-1-1-1&insert_distributed_sync=1 ") && !strcasestr(s.head, "Expect:"),
		      "%s: a gzip body, under its query id, synchronous through a Distributed table, no Expect round trip", what);
}

int main(void)
{
	attempt("written", true, ANSWER_200, 0, true, FLEET_DONE);
	attempt("connection refused", false, ANSWER_200, -ECONNREFUSED, false, FLEET_RESEND);
	attempt("4xx", true, ANSWER_400, -EINVAL, true, FLEET_REJECTED);
	attempt("5xx after the request", true, ANSWER_500, -EIO, true, FLEET_VERIFY);
	attempt("closed after the request, no answer", true, CLOSE_AFTER_REQUEST, -EIO, true,
		FLEET_VERIFY);
	CHECK_DONE();
}
