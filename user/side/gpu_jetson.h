// SPDX-License-Identifier: BSD-2-Clause
/* NVIDIA Jetson integrated GPUs and power rails, through sysfs.
 *
 * GPU: the devfreq device under sys/class/devfreq whose device/of_node/name
 * is gm20b/gp10b/gv11b/ga10b/gpu (or whose entry name says so: 57000000.gpu
 * on Nano, 17000000.gv11b on Xavier, 17000000.ga10b or 17000000.gpu on
 * Orin), its cur_freq/max_freq (Hz) and its device's load (per mille); when
 * devfreq has no load file, the fixed load paths of each board are tried.
 * Power: INA3221 monitors under sys/bus/i2c/devices: hwmon in*_label with
 * in*_input (mV) x curr*_input (mA) on L4T 34+ (JetPack 5/6), or the iio
 * rail_name_N / in_powerN_input (mW) of L4T 32 (JetPack 4).
 * See docs/side-data.md for the path table. */
#ifndef INFERTRACE_GPU_JETSON_H
#define INFERTRACE_GPU_JETSON_H

#include <stddef.h>

#include "sysfs_readers.h"

struct gpu_jetson;

/* Finds the Jetson GPU under sysfs_root(). NULL with a reason when none. */
struct gpu_jetson *gpu_jetson__probe(char *reason, size_t reason_len);
void gpu_jetson__free(struct gpu_jetson *j); /* accepts NULL */
/* "ga10b", "gv11b", "gp10b", "gm20b" or the devfreq entry's name. */
const char *gpu_jetson__name(const struct gpu_jetson *j);
/* The GPU's load now, in percent (the driver's per mille over its own
 * short window). 0, or -errno (-ENOENT: no load file). */
int gpu_jetson__read_load(const struct gpu_jetson *j, double *pct);
/* Adds the GPU channels as device 0: load, clock, max clock, GPU thermal
 * zone temperature and the GPU power rail where present. Returns the count. */
int gpu_jetson__add_channels(const struct gpu_jetson *j, struct channels *cs);

/* INA3221 power rails (SM_RAIL_POWER_W, watts), GPU or not. Returns the count. */
int jetson_discover_rails(struct channels *cs);

#endif
