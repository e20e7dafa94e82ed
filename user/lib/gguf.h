// SPDX-License-Identifier: BSD-2-Clause
/* GGUF model files (llama.cpp's format): the header facts a reader of a
 * recording wants, read from the key-value metadata and tensor infos. */
#ifndef INFERTRACE_GGUF_H
#define INFERTRACE_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gguf_facts {
	uint32_t version;
	char arch[64];             /* general.architecture; "" when absent */
	bool has_file_type;
	uint32_t file_type;        /* general.file_type (enum llama_ftype) */
	int64_t n_layer, n_embd, n_ctx_train; /* ARCH.block_count, ...; -1 when absent */
	uint64_t n_params;         /* elements of all tensors */
	uint64_t n_tensors;
	uint64_t size_bytes;       /* the file's size */
};

/* 0, or -errno (-EINVAL: not a GGUF file or a truncated/corrupt header;
 * err names what). */
int gguf__read(const char *path, struct gguf_facts *f, char *err, size_t errlen);
/* "F32", "Q4_K_M", ...; NULL for an unknown type. */
const char *gguf__file_type_name(uint32_t file_type);
/* Approximate bits per weight of a file type (llama.cpp's quantize table);
 * 0 when unknown. */
double gguf__file_type_bits(uint32_t file_type);

#endif
