// SPDX-License-Identifier: BSD-2-Clause
/* trace.json's GPU tracks (trace_gpu.h). */
#include <stdlib.h>
#include <string.h>

#include "gpu_view.h"
#include "trace_gpu.h"

static void str(FILE *f, const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(d ? d : "\"\"", f);
	free(d);
	json_decref(j);
}

static uint64_t us_of(const struct model *m, uint64_t ns)
{
	return ns > m->run.start_ns ? (ns - m->run.start_ns) / 1000 : 0;
}

static int track_cmp(const void *a, const void *b, void *ctx)
{
	const struct model_gpu_op *v = ctx, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void op_name(const struct model *m, const struct model_gpu_op *op, char *buf, size_t len)
{
	char b[32];

	if (op->what == MODEL_GPU_KERNEL)
		snprintf(buf, len, "%s", model__name(m, op->name) ? model__name(m, op->name) : "kernel");
	else if (op->what == MODEL_GPU_COPY)
		snprintf(buf, len, "memcpy %s %s", gpu_view__dir_name(op->dir), gpu_view__bytes(b, sizeof(b), op->bytes));
	else
		snprintf(buf, len, "memset %s", gpu_view__bytes(b, sizeof(b), op->bytes));
}

static void track_names(FILE *f, const struct model_gpu_op *op, bool new_device, const char **sep)
{
	int pid = TRACE_GPU_PID_BASE + (int)op->device;

	if (new_device) {
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"GPU %u\"}}",
			*sep, pid, op->device);
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,\"args\":"
			"{\"sort_index\":%d}}", pid, pid);
		*sep = ",\n";
	}
	fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":\"stream %u\"}}",
		*sep, pid, op->stream, op->stream);
	fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%u,\"args\":{\"sort_index\":%u}}",
		pid, op->stream, op->stream);
	*sep = ",\n";
}

static void write_op(const struct model *m, FILE *f, const struct model_gpu_op *op, uint64_t b, uint64_t e,
		     bool clipped, size_t flow, const char **sep)
{
	int pid = TRACE_GPU_PID_BASE + (int)op->device;
	const char *phase = op->phase && op->phase < IT_MAX_PHASES ? m->phase_names[op->phase] : NULL;
	char name[1100];

	op_name(m, op, name, sizeof(name));
	fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"gpu\",\"pid\":%d,\"tid\":%u,\"ts\":%llu,\"dur\":%llu,\"name\":", *sep, pid,
		op->stream, (unsigned long long)b, (unsigned long long)(e - b));
	str(f, name);
	fprintf(f, ",\"args\":{\"correlation\":%u,\"launch_tid\":%d,\"cycle\":", op->correlation, (int)op->tid);
	if (op->cycle >= 0 && (size_t)op->cycle < m->ncycles)
		fprintf(f, "%u", m->cycles[op->cycle].index);
	else
		fputs("null", f);
	fputs(",\"phase\":", f);
	str(f, phase ? phase : "");
	fprintf(f, ",\"bytes\":%llu,\"duration_us\":%.3f%s}}", (unsigned long long)op->bytes,
		op->end_ns > op->start_ns ? (op->end_ns - op->start_ns) / 1e3 : 0.0, clipped ? ",\"clipped\":true" : "");
	*sep = ",\n";
	if (!flow)
		return;
	/* the launch on its CPU thread, tied to the op */
	fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu,\"pid\":%d,\"tid\":%d,\"ts\":%llu}",
		flow, (int)op->tgid, (int)op->tid, (unsigned long long)us_of(m, op->launch_ns));
	fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu,\"pid\":%d,"
		"\"tid\":%u,\"ts\":%llu}", flow, pid, op->stream, (unsigned long long)b);
}

void trace_gpu__write(const struct model *m, FILE *f, const char **sep)
{
	const struct model_gpu_op *ops = m->gpu_activity.ops.v;
	size_t n = m->gpu_activity.ops.n, flows = 0, *idx;
	uint64_t last_e = 0;

	if (!n || !(idx = malloc(n * sizeof(*idx))))
		return;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	if (n)
		qsort_r(idx, n, sizeof(*idx), track_cmp, (void *)ops);
	for (size_t k = 0; k < n; k++) {
		const struct model_gpu_op *op = &ops[idx[k]], *prev = k ? &ops[idx[k - 1]] : NULL;
		bool new_track = !prev || prev->device != op->device || prev->stream != op->stream, clipped = false;
		uint64_t b = us_of(m, op->start_ns), e = us_of(m, op->end_ns);

		if (new_track) {
			track_names(f, op, !prev || prev->device != op->device, sep);
			last_e = 0;
		}
		if (b < last_e) {
			b = last_e;
			clipped = true;
		}
		if (e < b)
			e = b;
		last_e = e;
		write_op(m, f, op, b, e, clipped, op->tid && op->launch_ns ? ++flows : 0, sep);
	}
	free(idx);
}
