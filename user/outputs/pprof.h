// SPDX-License-Identifier: BSD-2-Clause
/* profile.pb.gz: the pprof format (gzip'd protobuf), written from the model's
 * labelled stacks. Sample types samples/count, cpu/nanoseconds and
 * offcpu/nanoseconds; labels phase, cycle, pid, comm, thread; mappings with
 * build-ids. See pprof.c and docs/outputs.md. */
#ifndef INFERTRACE_PPROF_H
#define INFERTRACE_PPROF_H

#include <stddef.h>

struct model;

/* The uncompressed Profile message (malloc'd). 0 or -ENOMEM. */
int pprof__encode(const struct model *m, unsigned char **out, size_t *len);
/* Writes DIR/profile.pb.gz atomically. 0 or -errno. */
int pprof__write(const struct model *m, const char *dir);

#endif
