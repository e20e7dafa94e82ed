// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>

#include "presets.h"

static const struct preset presets[] = {
	{
		.name = "llama.cpp",
		.description = "llama.cpp: llama_decode is the inference phase and counts tokens; "
			       "each llama_tokenize call (one per prompt) starts a cycle",
		/* A JS or Python loop around llama.cpp has no native per-cycle
		 * function; tokenizing the prompt is the first native call of each
		 * cycle and happens once per prompt. */
		.cycle_marker = "libllama:llama_tokenize",
		.phases = {
			{ "llm_inference", "libllama:llama_decode" },
			{ "model_load", "libllama:llama_model_load_from_file,libllama:llama_load_model_from_file" },
		},
		.counts = {
			/* one llama_decode per generated token (the prompt's batch yields the first) */
			{ "tokens", "libllama:llama_decode" },
		},
	},
	{
		.name = "sqlite",
		.description = "SQLite: sqlite3_step, sqlite3_prepare_v2/v3 and sqlite3_exec are the database phase",
		.phases = {
			{ "database", "libsqlite3:sqlite3_step,libsqlite3:sqlite3_prepare_v2,"
				      "libsqlite3:sqlite3_prepare_v3,libsqlite3:sqlite3_exec" },
		},
		.counts = {
			{ "db_statements", "libsqlite3:sqlite3_step" },
		},
	},
	{
		.name = "cuda",
		.description = "CUDA host side: runtime and driver synchronizations are the gpu_sync phase; "
			       "kernel launches, copied bytes and time waited per cycle come from user/cuda.c",
		.phases = {
			{ "gpu_sync", "libcudart:cudaDeviceSynchronize,libcudart:cudaStreamSynchronize,"
				      "libcuda:cuCtxSynchronize,libcuda:cuStreamSynchronize" },
		},
	},
};

const struct preset *preset__find(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].name, name) || (!strcmp(name, "llama") && !strcmp(presets[i].name, "llama.cpp")))
			return &presets[i];
	return NULL;
}

const char *preset__names(void)
{
	return "llama.cpp, sqlite, cuda";
}
