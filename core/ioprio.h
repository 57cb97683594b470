/* The I/O priority of the calling thread (ioprio_set(2); glibc has no
 * wrapper). Only schedulers that know priorities (bfq; mq-deadline for
 * the class only) act on it: `none`, which loop devices and most NVMe
 * drives use, ignores it. */
#pragma once

/* Puts the calling thread in the idle class (served only when no other
 * I/O waits for the disk). Returns its priority before (for
 * e4_ioprio_restore), or -errno. */
int e4_ioprio_idle(void);

/* Gives the calling thread back a priority e4_ioprio_idle returned. 0 or -errno. */
int e4_ioprio_restore(int prio);
