#include "ioprio.h"

#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

/* From linux/ioprio.h, spelled out: older headers lack it. */
#define WHO_PROCESS 1     /* who 0: the calling thread */
#define CLASS_SHIFT 13
#define CLASS_IDLE 3

int e4_ioprio_idle(void)
{
	long prev = syscall(SYS_ioprio_get, WHO_PROCESS, 0);
	if (prev < 0)
		return -errno;
	if (syscall(SYS_ioprio_set, WHO_PROCESS, 0, CLASS_IDLE << CLASS_SHIFT) < 0)
		return -errno;
	return (int)prev;
}

int e4_ioprio_restore(int prio)
{
	return syscall(SYS_ioprio_set, WHO_PROCESS, 0, prio) < 0 ? -errno : 0;
}
