/* What the daemon knows of how long jobs take here: the cost model
 * (core/cost.h) fitted to the unthrottled defrag jobs it ran, kept in
 * state_dir across mounts, one for this filesystem and one for the
 * machine; plan's seconds_expected comes from it. */
#pragma once

#include <stdbool.h>

#include "fs.h"
#include "defragtree.h"
#include "plan.h"

/* Loads the models from state_dir (a damaged file: ignored, one log
 * line). Call once before serving; e4fs_costs_free at the end. */
void e4fs_costs_init(E4Fs *fs);
void e4fs_costs_free(E4Fs *fs);

/* A finished job: added to both models and saved when it moved without a
 * throttle and did enough to say something (8 MiB or 1 s). */
void e4fs_costs_job_done(E4Fs *fs, const E4DefragSummary *s);

/* The seconds a job doing plan would take (out). From the model of this
 * filesystem once it has E4FS_COSTS_OWN jobs (or the machine's has no
 * others), else the machine's; without any job, from an O_DIRECT read
 * of up to 16 MiB of plan->largest (relative to fd; "" is fd itself),
 * once per mount, as a rate of bytes. make_room: the job would make room
 * for plan's room files (their bytes count as room). Never faster than
 * -o defrag_mibps allows. */
void e4fs_costs_estimate(E4Fs *fs, int fd, const E4Plan *plan, bool make_room, E4PlanTime *out);

/* Jobs of a filesystem from which its own model is preferred to the
 * machine's. */
#define E4FS_COSTS_OWN 3
