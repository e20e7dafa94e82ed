// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's CUDA counts (struct model_cuda): a cycle's cuda and
 * gpu.cuda, the run's, one table each for the writer and the loader. */
#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T struct model_cuda_totals
JF_TABLE_PUBLIC(profile_cuda_totals_table, JF("kernel_launches", JF_U64, kernel_launches),
		JF("graph_launches", JF_U64, graph_launches), JF("memcpy_calls", JF_U64, memcpy_calls),
		JF("memcpy_bytes", JF_U64, memcpy_bytes), JF("sync_calls", JF_U64, sync_calls),
		JF("sync_wait_ms", JF_REAL, sync_wait_ms));
#undef JF_T

#define JF_T int32_t
JF_TABLE(library_table, { .kind = JF_NAME, .names = &profile_model_names });
#undef JF_T

#define JF_T struct model_cuda
JF_TABLE(launch_stacks_table, JF("python", JF_U64, launch_stacks.python), JF("native", JF_U64, launch_stacks.native),
	 JF("not_kept", JF_U64, launch_stacks.not_kept), JF("copies", JF_U64, launch_stacks.copies),
	 JF("reused", JF_U64, launch_stacks.reused));
JF_TABLE(cuda_table, JF(NULL, JF_OBJ, totals, .sub = &profile_cuda_totals_table),
	 JF_GROUP("launch_stacks", launch_stacks_table), JF("libraries", JF_VEC, libraries, .sub = &library_table),
	 JF("functions_probed", JF_U64, functions_probed));
#undef JF_T

/* gpu.cuda into the gpu object o, when the concern ran (ctx: the model) */
int profile_cuda__write(const struct model *m, json_t *gpu)
{
	if (!m->cuda.totals.present)
		return 0;
	return profile__set(gpu, "cuda", jf_object(&cuda_table, &m->cuda, m));
}

int profile_cuda__read(struct model *m, json_t *gpu)
{
	json_t *cuda = json_object_get(gpu, "cuda");
	int err;

	if (!json_is_object(cuda))
		return 0;
	err = jf_read_into(&cuda_table, &m->cuda, cuda, m);
	m->cuda.totals.present = true;
	return err;
}
