// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>

#include <linux/types.h>

#include "infertrace.h"
#include "presets.h"

static const struct preset presets[] = {
	{
		.name = "llama.cpp",
		.description = "llama.cpp: each llama_decode batch is timed as llm_prompt (several tokens) or "
			       "llm_generate (one token) and its tokens counted; a prompt batch at position 0 "
			       "starts a cycle; the model's GGUF facts and the context's settings are read",
		/* Cycles from what llama.cpp does, whatever the driver's language:
		 * a sequence's prompt is processed at position 0 after its memory
		 * was cleared. Tokenizing is no boundary: it happens at load, in
		 * chat templates, and any number of times per prompt. */
		.batch = { "libllama:llama_decode", "llm_prompt", "llm_generate", "prompt_tokens", "generated_tokens" },
		.args = {
			{ "libllama:llama_init_from_model,libllama:llama_new_context_with_model", IT_LLAMA_ARG_CONTEXT_PARAMS },
			{ "libllama:llama_set_n_threads", IT_LLAMA_ARG_THREADS },
			{ "libllama:llama_model_load_from_file,libllama:llama_load_model_from_file", IT_LLAMA_ARG_MODEL_PATH },
			/* every CPU variant ggml may load; the one chosen is called */
			{ "libggml-cpu:ggml_backend_cpu_set_n_threads", IT_LLAMA_ARG_BACKEND_THREADS },
			/* a request's sequence ended (analysis/requests.c) */
			{ "libllama:llama_memory_seq_rm,libllama:llama_kv_self_seq_rm,libllama:llama_kv_cache_seq_rm",
			  IT_LLAMA_ARG_SEQ_RM },
			{ "libllama:llama_memory_clear,libllama:llama_kv_self_clear,libllama:llama_kv_cache_clear",
			  IT_LLAMA_ARG_MEMORY_CLEAR },
		},
		.phases = {
			{ "model_load", "libllama:llama_model_load_from_file,libllama:llama_load_model_from_file" },
		},
	},
	{
		.name = "sqlite",
		.description = "SQLite: the database phase is the Python functions that call the sqlite3 module, "
			       "timed whole from stack observations (from module-level code: each statement, "
			       "sqlite3_step, placed then); in native programs sqlite3_exec and "
			       "sqlite3_prepare_v2/v3 (no per-row function is probed)",
		/* sqlite3_step runs once per row: a probe there cost more than the
		 * rows (100,240 hits in 5 cycles, the phase inflated by 158%).
		 * Python's sqlite3 module prepares BEGIN and COMMIT for each
		 * transaction and caches its statements, so these few hits show
		 * which Python function does the database work; that function is
		 * then timed from the stacks, rows and Python code between them
		 * included (py:@callers, docs/probes.md). */
		.phases = {
			{ "database", "libsqlite3:sqlite3_prepare_v2,libsqlite3:sqlite3_prepare_v3,"
				      "libsqlite3:sqlite3_exec,py:@callers" },
		},
		/* module-level code has no call to time whole (it is the run):
		 * there each statement is timed natively, as sqlite3_step runs
		 * it, placed when such a caller is first seen */
		.fallback = {
			{ "database", "libsqlite3:sqlite3_step" },
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
