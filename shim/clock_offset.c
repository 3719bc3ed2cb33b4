/*
 * The clock shim: an LD_PRELOAD library that moves a process's wall clock while it runs.
 *
 * It interposes clock_gettime (CLOCK_REALTIME and CLOCK_REALTIME_COARSE only), gettimeofday and
 * time, and adds an offset in milliseconds: a little-endian int64 at the start of the file named
 * by REDLOCK_CLOCK_OFFSET_FILE, mapped shared, so a write to the file moves the clock at once.
 * Redis expires keys on this clock (mstime() from gettimeofday), so a forward offset expires a
 * key early on that master alone: a node's clock jump, on a real server.
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, which reads the clock while the
 * allocator initialises; libfaketime's clock_gettime calls back into the allocator there and the
 * server dies at start ("Unexpected recursive calls to clock_gettime()"). This shim takes the
 * true time from the raw system call and never allocates: the file is opened and mapped with
 * plain system calls the first time a clock is read.
 *
 * Built by build.rs (feature `redis`) and embedded in the binary; see docs/live-replay.md.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const int64_t no_offset = 0;
/* The mapped offset, or &no_offset when there is no file; NULL until the first read. */
static const volatile int64_t *offset_ms;

static const volatile int64_t *map_offset(void) {
    const volatile int64_t *mapped = &no_offset;
    const char *path = getenv("REDLOCK_CLOCK_OFFSET_FILE");
    if (path != NULL) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            void *page = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
            if (page != MAP_FAILED) {
                mapped = page;
            }
            syscall(SYS_close, fd);
        }
    }
    const volatile int64_t *expected = NULL;
    /* Two threads may map at once: the first one's mapping wins, the other is given back. */
    if (!__atomic_compare_exchange_n(&offset_ms, &expected, mapped, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        if (mapped != &no_offset) {
            munmap((void *)mapped, sizeof(int64_t));
        }
        mapped = expected;
    }
    return mapped;
}

static int64_t current_offset_ms(void) {
    const volatile int64_t *offset = __atomic_load_n(&offset_ms, __ATOMIC_ACQUIRE);
    if (offset == NULL) {
        offset = map_offset();
    }
    return *offset;
}

/* The true wall clock moved by the offset. */
static int shifted(clockid_t clock, struct timespec *ts) {
    int result = (int)syscall(SYS_clock_gettime, clock, ts);
    if (result != 0) {
        return result;
    }
    int64_t nanos = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + current_offset_ms() * 1000000;
    ts->tv_sec = nanos / 1000000000;
    ts->tv_nsec = nanos % 1000000000;
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000;
        ts->tv_sec -= 1;
    }
    return 0;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) {
        return shifted(clock, ts);
    }
    return (int)syscall(SYS_clock_gettime, clock, ts);
}

/* glibc declares tv non-null, but POSIX lets a caller pass NULL: keep the check. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    if (shifted(CLOCK_REALTIME, &ts) != 0) {
        return -1;
    }
    if (tv != NULL) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    if (tz != NULL) {
        /* The time zone argument is obsolete: report UTC, as the kernel does by default. */
        struct timezone *zone = tz;
        zone->tz_minuteswest = 0;
        zone->tz_dsttime = 0;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (shifted(CLOCK_REALTIME, &ts) != 0) {
        return (time_t)-1;
    }
    if (out != NULL) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
