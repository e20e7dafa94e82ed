// SPDX-License-Identifier: BSD-2-Clause
/* `--metrics`: Prometheus text exposition of a model snapshot, and the
 * libmicrohttpd server that serves it (metrics.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "gpu_view.h"
#include "metrics.h"
#include "model.h"

/* ---- [ADDR:]PORT ---- */

int metrics__parse_addr(const char *s, struct sockaddr_storage *sa, socklen_t *len, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *port = s, *colon;
	unsigned long p;
	char *end;

	memset(sa, 0, sizeof(*sa));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' || close - s - 1 >= (long)sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		port = close + 2;
	} else if ((colon = strrchr(s, ':'))) {
		if (colon - s >= (long)sizeof(host) || strchr(s, ':') != colon)
			goto bad;
		if (colon > s)
			snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || port[0] < '0' || port[0] > '9')
		goto bad;
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)sa;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(p);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)sa;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons(p);
		*len = sizeof(*a);
	}
	return 0;
bad:
	snprintf(err, errlen, "invalid --metrics '%s': expected [ADDR:]PORT, ADDR a numeric IPv4 address, "
		 "[IPv6] or localhost (default 127.0.0.1), PORT 0..65535", s);
	return -EINVAL;
}

/* ---- exposition ---- */

/* upper bounds of the cycle-duration buckets, seconds */
static const double cycle_buckets_s[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
					  0.5, 1, 2.5, 5, 10, 30, 60, 300 };

struct expo {
	FILE *f;
	char base[512]; /* command="...",pid="..." */
};

/* A label value: backslash, double quote and newline escaped. */
static void put_escaped(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void escape_into(char *out, size_t cap, const char *v)
{
	FILE *f = fmemopen(out, cap, "w");

	if (!f) {
		out[0] = 0;
		return;
	}
	put_escaped(f, v);
	fclose(f);
}

static void head(struct expo *e, const char *name, const char *type, const char *help)
{
	fprintf(e->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{base[,extra="value"]} value; extra may be NULL */
static void sample(struct expo *e, const char *name, const char *extra, const char *value, double v)
{
	fprintf(e->f, "%s{%s", name, e->base);
	if (extra && value) {
		fprintf(e->f, ",%s=\"", extra);
		put_escaped(e->f, value);
		fputc('"', e->f);
	}
	/* %.17g keeps every double exact; integers print as integers */
	fprintf(e->f, "} %.17g\n", v);
}

static void gauge(struct expo *e, const char *name, const char *help, double v)
{
	if (isnan(v) || isinf(v))
		return;
	head(e, name, "gauge", help);
	sample(e, name, NULL, NULL, v);
}

static bool ended(const struct model_cycle *c)
{
	return c->end_ns && !c->open_at_end;
}

static void base_labels(struct expo *e, const struct model *m)
{
	char cmd[256] = "", pids[192] = "", esc[256 * 2 + 1];
	size_t off = 0;

	if (m->run.command && m->run.command[0]) {
		const char *slash = strrchr(m->run.command[0], '/');

		snprintf(cmd, sizeof(cmd), "%s", slash ? slash + 1 : m->run.command[0]);
	} else if (m->nprocs) {
		snprintf(cmd, sizeof(cmd), "%s", m->procs[0].comm);
	}
	for (size_t i = 0; i < m->run.npids && off < sizeof(pids) - 12; i++)
		off += snprintf(pids + off, sizeof(pids) - off, "%s%d", i ? "," : "", (int)m->run.pids[i]);
	escape_into(esc, sizeof(esc), cmd);
	snprintf(e->base, sizeof(e->base), "command=\"%s\",pid=\"%s\"", esc, pids);
}

/* A histogram of values[0, n) in seconds over the buckets' upper bounds. */
static void histogram(struct expo *e, const char *name, const char *help, const double *bounds, size_t nb,
		      const double *values, size_t n)
{
	char key[160], le[32];
	double sum = 0;

	head(e, name, "histogram", help);
	for (size_t i = 0; i < n; i++)
		sum += values[i];
	snprintf(key, sizeof(key), "%s_bucket", name);
	for (size_t b = 0; b < nb; b++) {
		uint64_t c = 0;

		for (size_t i = 0; i < n; i++)
			c += values[i] <= bounds[b];
		snprintf(le, sizeof(le), "%g", bounds[b]);
		sample(e, key, "le", le, c);
	}
	sample(e, key, "le", "+Inf", n);
	snprintf(key, sizeof(key), "%s_sum", name);
	sample(e, key, NULL, NULL, sum);
	snprintf(key, sizeof(key), "%s_count", name);
	sample(e, key, NULL, NULL, n);
}

static void cycles(struct expo *e, const struct model *m)
{
	const struct model_cycle *last = NULL;
	double *s = m->ncycles ? malloc(m->ncycles * sizeof(double)) : NULL;
	size_t n = 0;

	for (size_t i = 0; i < m->ncycles && s; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!ended(c))
			continue;
		s[n++] = (c->end_ns - c->start_ns) / 1e9;
		if (!last || c->end_ns > last->end_ns)
			last = c;
	}
	head(e, "infertrace_cycles_total", "counter", "Experiment cycles ended so far");
	sample(e, "infertrace_cycles_total", NULL, NULL, n);
	histogram(e, "infertrace_cycle_duration_seconds", "Wall time of the ended cycles", cycle_buckets_s,
		  sizeof(cycle_buckets_s) / sizeof(cycle_buckets_s[0]), s, n);
	free(s);
	if (last) {
		gauge(e, "infertrace_last_cycle_duration_seconds", "Wall time of the last ended cycle",
		      (last->end_ns - last->start_ns) / 1e9);
		gauge(e, "infertrace_tokens_per_second", "Tokens per second of CPU-attributed inference in the last "
		      "ended cycle (profile.json tokens_per_second)", last->tokens_per_second);
	}
}

/* upper bounds of the request buckets, seconds */
static const double ttft_buckets_s[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
static const double itl_buckets_s[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5 };
static const double request_buckets_s[] = { 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300 };
#define NB(a) (sizeof(a) / sizeof((a)[0]))

/* A server's requests (docs/servers.md): the ended ones only, so the
 * counts never go back; those going on as a gauge. */
static void requests(struct expo *e, const struct model *m)
{
	const struct model_requests *r = &m->requests;
	double *ttft, *dur, *gaps;
	size_t nt = 0, nd = 0, ng = 0, open = 0;

	if (!r->present)
		return;
	ttft = malloc((r->list.n + 1) * sizeof(double));
	dur = malloc((r->list.n + 1) * sizeof(double));
	gaps = malloc((r->gaps.n + 1) * sizeof(double));
	for (size_t i = 0; ttft && dur && gaps && i < r->list.n; i++) {
		const struct model_request *q = &r->list.v[i];

		if (q->ended == MODEL_REQUEST_OPEN) {
			open++;
			continue;
		}
		if (isfinite(q->ttft_ms))
			ttft[nt++] = q->ttft_ms / 1e3;
		if (isfinite(q->duration_ms))
			dur[nd++] = q->duration_ms / 1e3;
		for (uint64_t k = 0; k < q->ngaps && q->first_gap + k < r->gaps.n; k++)
			gaps[ng++] = r->gaps.v[q->first_gap + k] / 1e3;
	}
	if (ttft && dur && gaps) {
		head(e, "infertrace_requests_total", "counter", "llama.cpp requests ended so far");
		sample(e, "infertrace_requests_total", NULL, NULL, nd);
		gauge(e, "infertrace_requests_in_flight", "llama.cpp requests going on", (double)open);
		histogram(e, "infertrace_request_ttft_seconds",
			  "Time to first token of the ended requests (from their first prompt batch)", ttft_buckets_s,
			  NB(ttft_buckets_s), ttft, nt);
		histogram(e, "infertrace_request_inter_token_seconds", "Gaps between the outputs of the ended requests",
			  itl_buckets_s, NB(itl_buckets_s), gaps, ng);
		histogram(e, "infertrace_request_duration_seconds", "Duration of the ended requests", request_buckets_s,
			  NB(request_buckets_s), dur, nd);
	}
	free(ttft);
	free(dur);
	free(gaps);
}

static void phases_and_counts(struct expo *e, const struct model *m)
{
	bool any = false;
	int tokens = model__count_id(m, "tokens");

	for (int p = 1; p < IT_MAX_PHASES; p++)
		any |= m->phase_names[p] != NULL;
	if (any) {
		head(e, "infertrace_phase_seconds_total", "counter", "Wall time inside each phase, ended cycles");
		for (int p = 1; p < IT_MAX_PHASES; p++) {
			double ms = 0;

			if (!m->phase_names[p])
				continue;
			for (size_t i = 0; i < m->ncycles; i++)
				if (ended(&m->cycles[i]) && m->cycles[i].phases[p].present)
					ms += m->cycles[i].phases[p].ms;
			sample(e, "infertrace_phase_seconds_total", "phase", m->phase_names[p], ms / 1e3);
		}
		head(e, "infertrace_phase_calls_total", "counter", "Calls of each phase, ended cycles");
		for (int p = 1; p < IT_MAX_PHASES; p++) {
			uint64_t calls = 0;

			if (!m->phase_names[p])
				continue;
			for (size_t i = 0; i < m->ncycles; i++)
				if (ended(&m->cycles[i]))
					calls += m->cycles[i].phases[p].calls;
			sample(e, "infertrace_phase_calls_total", "phase", m->phase_names[p], calls);
		}
	}
	any = false;
	for (int k = 1; k < IT_MAX_PHASES; k++)
		any |= m->count_names[k] != NULL;
	if (!any)
		return;
	head(e, "infertrace_counted_calls_total", "counter", "Calls of each --count function, ended cycles");
	for (int k = 1; k < IT_MAX_PHASES; k++) {
		uint64_t n = 0;

		if (!m->count_names[k])
			continue;
		for (size_t i = 0; i < m->ncycles; i++)
			if (ended(&m->cycles[i]))
				n += m->cycles[i].counts[k];
		sample(e, "infertrace_counted_calls_total", "count", m->count_names[k], n);
		if (k == tokens) {
			/* the same figure under the name dashboards look for */
			head(e, "infertrace_tokens_total", "counter", "Tokens (calls of --count tokens), ended cycles");
			sample(e, "infertrace_tokens_total", NULL, NULL, n);
		}
	}
}

static void samples_lost_memory(struct expo *e, const struct model *m)
{
	double total = m->samples.present ? (double)m->samples.total : NAN, rss = model__rss_now_mb(m);
	size_t i;

	if (!isnan(total)) {
		head(e, "infertrace_samples_total", "counter", "On-CPU samples of the targets");
		sample(e, "infertrace_samples_total", NULL, NULL, total);
	}
	head(e, "infertrace_lost_total", "counter",
	     "Samples, events and other records lost (profile.json lost); non-zero: figures are incomplete");
	for (i = 0; i < m->nlost; i++)
		sample(e, "infertrace_lost_total", "kind", m->lost[i].name, m->lost[i].value);
	gauge(e, "infertrace_rss_bytes", "Resident set size of the traced processes, last seen",
	      rss * 1048576.0);
	if (m->memory.available)
		gauge(e, "infertrace_rss_peak_bytes", "Peak resident set size of a traced process",
		      m->memory.peak_mb * 1048576.0);
}

static void sched(struct expo *e, const struct model *m)
{
	const struct model_sched_figures *s = &m->sched;
	double total = s->oncpu_ms + s->runq_wait_ms + s->offcpu_ms;

	if (!s->available || !(total > 0))
		return;
	head(e, "infertrace_thread_time_ratio", "gauge",
	     "Share of the traced threads' time on a CPU, waiting in the run queue, and blocked");
	sample(e, "infertrace_thread_time_ratio", "state", "oncpu", s->oncpu_ms / total);
	sample(e, "infertrace_thread_time_ratio", "state", "runqueue", s->runq_wait_ms / total);
	sample(e, "infertrace_thread_time_ratio", "state", "blocked", s->offcpu_ms / total);
}

static void side(struct expo *e, const struct model *m)
{
	const struct model_side_figures *s = &m->side;

	gauge(e, "infertrace_temperature_celsius", "Hottest thermal zone or hwmon sensor, recent average",
	      s->now_temp_c);
	gauge(e, "infertrace_cpu_frequency_hertz", "CPU clock averaged over CPUs, recent", s->now_cpu_mhz * 1e6);
	gauge(e, "infertrace_gpu_utilization_ratio", "GPU utilisation, recent", s->now_gpu_util_pct / 100.0);
	gauge(e, "infertrace_gpu_temperature_celsius", "GPU temperature, recent", s->now_gpu_temp_c);
	gauge(e, "infertrace_gpu_clock_hertz", "GPU SM clock, recent", s->now_gpu_mhz * 1e6);
	gauge(e, "infertrace_gpu_power_watts", "GPU power, recent", s->now_gpu_power_w);
}

/* The GPU timeline's figures of the last ended cycle that has them. */
static void gpu(struct expo *e, const struct model *m)
{
	const struct model_cycle *c = gpu_view__last_cycle(m);
	char dev[16];

	if (!c)
		return;
	head(e, "infertrace_gpu_busy_ratio", "gauge",
	     "GPU busy share of the last ended cycle with GPU figures (kernels over its wall)");
	for (size_t i = 0; i < c->gpu.figures.n; i++) {
		const struct model_gpu_figures *f = &c->gpu.figures.v[i];

		snprintf(dev, sizeof(dev), "%u", f->device);
		if (!f->phase && f->window_ms > 0)
			sample(e, "infertrace_gpu_busy_ratio", "device", dev, gpu_view__pct(f->busy_ms, f->window_ms) / 100);
	}
	if (c->gpu.nvml_only)
		return;
	head(e, "infertrace_gpu_kernels_per_cycle", "gauge", "Kernels launched in the last ended cycle with GPU figures");
	for (size_t i = 0; i < c->gpu.figures.n; i++) {
		const struct model_gpu_figures *f = &c->gpu.figures.v[i];

		snprintf(dev, sizeof(dev), "%u", f->device);
		if (!f->phase)
			sample(e, "infertrace_gpu_kernels_per_cycle", "device", dev, (double)f->kernels);
	}
}

char *metrics__render(const struct model *m)
{
	struct expo e;
	char *buf = NULL;
	size_t len = 0;

	e.f = open_memstream(&buf, &len);
	if (!e.f)
		return NULL;
	base_labels(&e, m);
	gauge(&e, "infertrace_recording_seconds", "Time since the recording started", m->run.duration_s);
	cycles(&e, m);
	phases_and_counts(&e, m);
	requests(&e, m);
	samples_lost_memory(&e, m);
	sched(&e, m);
	side(&e, m);
	gpu(&e, m);
	if (fclose(e.f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the server ---- */

long metrics__ratelimit(struct metrics_ratelimit *r, uint64_t now_ns)
{
	long held;

	if (r->printed && now_ns - r->last_ns < r->every_ns) {
		r->held++;
		return -1;
	}
	held = (long)r->held;
	r->printed = true;
	r->last_ns = now_ns;
	r->held = 0;
	return held;
}

/* A connection until its request has arrived (pending), by its socket. */
struct metrics_conn {
	int fd;
	uint64_t since_ns;
	bool used, pending;
};

struct metrics_server {
	struct MHD_Daemon *daemon;
	int fd;
	char url[96];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *text;          /* NULL until the first publish */
	uint64_t built_ns;
	uint64_t generation;
	bool want;           /* a scrape waits for fresh text */
	bool closing;
	/* connections and messages: conn_mu; the sweeper waits on conn_cv */
	pthread_mutex_t conn_mu;
	pthread_cond_t conn_cv;
	pthread_t sweeper;
	bool sweeping, stop_sweeping;
	struct metrics_conn conns[METRICS_CONNECTIONS];
	struct metrics_ratelimit log;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One line on stderr, or none while the rate limit holds it back: a client
 * that makes the server complain must not flood the tracer's stderr. */
static void vsay(struct metrics_server *s, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;
	long held;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '.'))
		line[--n] = 0;
	pthread_mutex_lock(&s->conn_mu);
	held = metrics__ratelimit(&s->log, mono_ns());
	pthread_mutex_unlock(&s->conn_mu);
	if (held < 0)
		return;
	if (held)
		fprintf(stderr, "infertrace: metrics server: %s (and %ld more messages in the last %llu s)\n", line,
			held, METRICS_LOG_EVERY_NS / 1000000000ull);
	else
		fprintf(stderr, "infertrace: metrics server: %s\n", line);
}

static void say(struct metrics_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct metrics_server *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(s, fmt, ap);
	va_end(ap);
}

/* libmicrohttpd's own messages (refused connections and the like) */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	vsay(cls, fmt, ap);
}

/* Closes c for libmicrohttpd to clean up (it owns the socket; it tells
 * on_connection before it closes it, under conn_mu, so c->fd is still its). */
static void drop(struct metrics_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->pending = false;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_ConnectionNotificationCode what)
{
	struct metrics_server *s = cls;
	const union MHD_ConnectionInfo *info;
	struct metrics_conn *c = NULL, *oldest = NULL;
	unsigned int pending = 0;

	pthread_mutex_lock(&s->conn_mu);
	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (*ctx)
			((struct metrics_conn *)*ctx)->used = false;
		*ctx = NULL;
		pthread_mutex_unlock(&s->conn_mu);
		return;
	}
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (size_t i = 0; i < METRICS_CONNECTIONS; i++) {
		struct metrics_conn *o = &s->conns[i];

		if (!o->used) {
			if (!c)
				c = o;
		} else if (o->pending) {
			pending++;
			if (!oldest || o->since_ns < oldest->since_ns)
				oldest = o;
		}
	}
	if (c && info) {
		*c = (struct metrics_conn){ .fd = info->connect_fd, .since_ns = mono_ns(), .used = true, .pending = true };
		*ctx = c;
	}
	/* a newcomer is let in: the longest waiting one makes room */
	if (pending >= METRICS_PENDING_MAX && oldest)
		drop(oldest);
	pthread_mutex_unlock(&s->conn_mu);
	if (pending >= METRICS_PENDING_MAX && oldest)
		say(s, "closed a connection that had not sent its request while %u others waited", pending);
}

/* Closes the connections that have not sent their request in time. */
static void *sweep(void *arg)
{
	struct metrics_server *s = arg;
	struct timespec until;
	unsigned int late;

	pthread_mutex_lock(&s->conn_mu);
	while (!s->stop_sweeping) {
		uint64_t now = mono_ns();

		late = 0;
		for (size_t i = 0; i < METRICS_CONNECTIONS; i++) {
			struct metrics_conn *c = &s->conns[i];

			if (c->used && c->pending && now - c->since_ns > METRICS_REQUEST_NS) {
				drop(c);
				late++;
			}
		}
		if (late) {
			pthread_mutex_unlock(&s->conn_mu);
			say(s, "closed %u connection%s that sent no request within %llu s", late, late > 1 ? "s" : "",
			    METRICS_REQUEST_NS / 1000000000ull);
			pthread_mutex_lock(&s->conn_mu);
		}
		until = deadline_in(200000000ull);
		if (!s->stop_sweeping)
			pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &until);
	}
	pthread_mutex_unlock(&s->conn_mu);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* one request a connection: an idle kept-alive one holds no slot */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's thread: reads only what publish handed over. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **req)
{
	static const char not_found[] = "infertrace serves /metrics only\n";
	static const char not_ready[] = "infertrace: no snapshot yet\n";
	struct metrics_server *s = cls;
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	enum MHD_Result ret;
	struct timespec until;
	uint64_t gen;

	(void)version, (void)upload, (void)upload_size, (void)req;
	/* the request has arrived: no longer at risk of the sweep */
	if (info && info->socket_context) {
		pthread_mutex_lock(&s->conn_mu);
		((struct metrics_conn *)info->socket_context)->pending = false;
		pthread_mutex_unlock(&s->conn_mu);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n", 9);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1);
	pthread_mutex_lock(&s->mu);
	if (!s->text || mono_ns() - s->built_ns > METRICS_MAX_AGE_NS) {
		s->want = true;
		gen = s->generation;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += METRICS_WAIT_NS / 1000000000ull;
		while (s->generation == gen && !s->closing &&
		       pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
			;
	}
	if (s->text)
		ret = reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", s->text, strlen(s->text));
	else
		ret = reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", not_ready, sizeof(not_ready) - 1);
	pthread_mutex_unlock(&s->mu);
	return ret;
}

int metrics_server__start(struct metrics_server **out, const char *addr)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char err[256], host[INET6_ADDRSTRLEN];
	struct metrics_server *s;
	pthread_condattr_t ca;
	int one = 1, e;

	*out = NULL;
	if (metrics__parse_addr(addr, &sa, &len, err, sizeof(err))) {
		fprintf(stderr, "infertrace: %s\n", err);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s->fd, (struct sockaddr *)&sa, len) || listen(s->fd, METRICS_CONNECTIONS) ||
	    getsockname(s->fd, (struct sockaddr *)&sa, &len)) {
		e = errno;
		fprintf(stderr, "infertrace: cannot serve --metrics on %s: %s%s\n", addr, strerror(e),
			e == EADDRINUSE ? " (another program listens there; pick another port, or 0 for a free one)" :
			e == EADDRNOTAVAIL ? " (no interface of this host has that address)" : "");
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return -e;
	}
	if (sa.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host, sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://[%s]:%u/metrics", host,
			 ntohs(((struct sockaddr_in6 *)&sa)->sin6_port));
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://%s:%u/metrics", host,
			 ntohs(((struct sockaddr_in *)&sa)->sin_port));
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_mutex_init(&s->conn_mu, NULL);
	pthread_cond_init(&s->conn_cv, &ca);
	pthread_condattr_destroy(&ca);
	s->log.every_ns = METRICS_LOG_EVERY_NS;
	s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				     (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     0, NULL, NULL, on_request, s,
				     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, /* first, for the options' messages */
				     MHD_OPTION_LISTEN_SOCKET, s->fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONNECTIONS,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)METRICS_PER_IP,
				     MHD_OPTION_CONNECTION_TIMEOUT, METRICS_IDLE_S,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				     MHD_OPTION_END);
	if (s->daemon) {
		s->fd = -1; /* MHD_stop_daemon closes the listening socket */
		e = pthread_create(&s->sweeper, NULL, sweep, s);
		s->sweeping = !e;
	}
	if (!s->daemon || !s->sweeping) {
		fprintf(stderr, "infertrace: cannot start the --metrics HTTP server (libmicrohttpd)\n");
		metrics_server__stop(s);
		return -EIO;
	}
	*out = s;
	return 0;
}

const char *metrics_server__url(const struct metrics_server *s)
{
	return s->url;
}

bool metrics_server__wanted(struct metrics_server *s, uint64_t now_ns)
{
	bool w;

	(void)now_ns;
	pthread_mutex_lock(&s->mu);
	w = s->want;
	pthread_mutex_unlock(&s->mu);
	return w;
}

void metrics_server__publish(struct metrics_server *s, char *text, uint64_t now_ns)
{
	pthread_mutex_lock(&s->mu);
	free(s->text);
	s->text = text;
	s->built_ns = now_ns;
	s->generation++;
	s->want = false;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void metrics_server__stop(struct metrics_server *s)
{
	if (!s)
		return;
	if (s->sweeping) {
		pthread_mutex_lock(&s->conn_mu);
		s->stop_sweeping = true;
		pthread_cond_broadcast(&s->conn_cv);
		pthread_mutex_unlock(&s->conn_mu);
		pthread_join(s->sweeper, NULL);
	}
	if (s->daemon) {
		/* a scrape waiting for fresh text gives up now */
		pthread_mutex_lock(&s->mu);
		s->closing = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		MHD_stop_daemon(s->daemon);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->log.held)
		fprintf(stderr, "infertrace: metrics server: %lu more messages held back\n", s->log.held);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->conn_mu);
	pthread_cond_destroy(&s->conn_cv);
	free(s->text);
	free(s);
}
