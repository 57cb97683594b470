#include "costs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>

#include "beneath.h"
#include "cost.h"
#include "jobs.h"

#define MACHINE "costs"

/* A job that did less says little about the costs. */
#define MIN_BYTES (8ull << 20)
#define MIN_SECONDS 1.0

/* Bytes the read probe reads at most. */
#define PROBE_BYTES (16ull << 20)

/* The file of this filesystem's model: "costs-" and its id (statfs
 * f_fsid, from its UUID on ext4), as resume state is named. */
static char *own_name(E4Fs *fs)
{
	g_autofree char *id = e4fs_fs_id(fs);
	return g_strdup_printf("costs-%s", id);
}

static void load(E4Fs *fs, const char *name, E4CostModel *m)
{
	int rc = e4_cost_load(fs->state_dir_fd, name, m);
	if (rc == -EBADMSG)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: cost model %s damaged: ignored\n", name);
	else if (rc < 0 && rc != -ENOENT)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: cost model %s: %s: ignored\n", name, g_strerror(-rc));
}

void e4fs_costs_init(E4Fs *fs)
{
	g_mutex_init(&fs->costs_lock);
	fs->cost_own = g_new0(E4CostModel, 1);
	fs->cost_machine = g_new0(E4CostModel, 1);
	fs->cost_own_name = own_name(fs);
	if (fs->state_dir_fd < 0)
		return;
	load(fs, fs->cost_own_name, fs->cost_own);
	load(fs, MACHINE, fs->cost_machine);
}

void e4fs_costs_free(E4Fs *fs)
{
	g_free(fs->cost_own);
	g_free(fs->cost_machine);
	g_free(fs->cost_own_name);
	g_mutex_clear(&fs->costs_lock);
}

static void save(E4Fs *fs, const char *name, const E4CostModel *m)
{
	int rc = e4_cost_save(m, fs->state_dir_fd, name);
	if (rc < 0)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: cost model %s not written: %s\n", name, g_strerror(-rc));
}

void e4fs_costs_job_done(E4Fs *fs, const E4DefragSummary *s)
{
	uint64_t moved = s->bytes_done - MIN(s->bytes_done, s->room_for_bytes);
	E4CostSample x = {
		.files = s->outcomes[E4_OUTCOME_IMPROVED] + s->outcomes[E4_OUTCOME_NO_GAIN] +
			 s->outcomes[E4_OUTCOME_FAILED],
		.bytes = moved,
		.room_bytes = s->room_for_bytes,
		.seconds = s->seconds,
	};
	if (s->bytes_done < MIN_BYTES && s->seconds < MIN_SECONDS)
		return;
	/* One job at a time through here: the files are written in the
	 * order the samples were added. */
	g_mutex_lock(&fs->costs_lock);
	if (e4_cost_add(fs->cost_own, &x) && e4_cost_add(fs->cost_machine, &x) && fs->state_dir_fd >= 0) {
		save(fs, fs->cost_own_name, fs->cost_own);
		save(fs, MACHINE, fs->cost_machine);
	}
	g_mutex_unlock(&fs->costs_lock);
}

/* The read probe's rate, bytes per second, measured once per mount. */
static double probe_rate(E4Fs *fs, int fd, const char *path)
{
	g_mutex_lock(&fs->costs_lock);
	double rate = fs->probe_rate;
	g_mutex_unlock(&fs->costs_lock);
	if (rate > 0 || !path)
		return rate;
	int pfd = *path ? e4_open_beneath(fd, path, O_RDONLY) : dup(fd);
	rate = pfd >= 0 ? e4_plan_probe_read(pfd, PROBE_BYTES) : -1; /* outside the lock: it reads the disk */
	if (pfd >= 0)
		close(pfd);
	g_mutex_lock(&fs->costs_lock);
	if (rate > 0 && fs->probe_rate <= 0)
		fs->probe_rate = rate;
	g_mutex_unlock(&fs->costs_lock);
	return rate > 0 ? rate : 0;
}

/* The model to use: this filesystem's once it knows enough, else the
 * machine's. False when neither has a job. */
static bool fitted(E4Fs *fs, E4CostFit *fit, const char **scope)
{
	g_mutex_lock(&fs->costs_lock);
	bool own = fs->cost_own->n >= E4FS_COSTS_OWN || fs->cost_own->n == fs->cost_machine->n;
	int rc = e4_cost_fit(own ? fs->cost_own : fs->cost_machine, fit);
	g_mutex_unlock(&fs->costs_lock);
	*scope = own ? "filesystem" : "machine";
	return rc == 0;
}

void e4fs_costs_estimate(E4Fs *fs, int fd, const E4Plan *plan, bool make_room, E4PlanTime *out)
{
	uint32_t bs = fs->info->geom.block_size;
	/* As a job's sample counts them: the second pass moves files again. */
	uint64_t bytes = (plan->blocks + plan->retry_blocks) * bs;
	*out = (E4PlanTime){ .source = "none", .room_bytes = make_room ? plan->room_blocks * bs : 0 };
	E4CostFit fit;
	const char *scope;
	if (fitted(fs, &fit, &scope)) {
		out->source = "jobs";
		out->scope = scope;
		out->jobs = fit.samples;
		out->seconds = e4_cost_seconds(&fit, plan->files, bytes, out->room_bytes);
	} else if (plan->files > 0) {
		double rate = probe_rate(fs, fd, plan->largest);
		out->source = rate > 0 ? "probe" : "none";
		out->seconds = rate > 0 ? (double)(bytes + out->room_bytes) / rate : 0;
	}
	double cap = fs->job_defaults.mibps * 1048576.0;
	if (cap > 0 && out->seconds < (double)bytes / cap)
		out->seconds = (double)bytes / cap;
	out->mibps = out->seconds > 0 ? (double)(plan->blocks * bs) / 1048576.0 / out->seconds : 0;
}
