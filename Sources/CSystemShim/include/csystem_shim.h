#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H

// C library calls that Swift's Glibc module leaves out (malloc.h is not part of it, nor
// glibc's own posix_spawn extensions, nor sys/eventfd.h).

#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/eventfd.h>

/// Gives the memory malloc holds free back to the system (every arena, not only the top of
/// the heap). Returns 1 when some was given back.
static inline int csystem_release_free_memory(void) {
    return malloc_trim(0);
}

/// Names the calling thread as `ps -L`, `top -H`, `perf` and the soak bench show it (the
/// kernel keeps 15 bytes; longer names are cut). Foundation's `Thread.name` does not reach
/// the kernel on Linux, so threads name themselves first thing.
void csystem_name_this_thread(const char *name);

/// Sets malloc's `M_ARENA_MAX`, `M_MMAP_THRESHOLD` and `M_TRIM_THRESHOLD`, each unless the
/// user set it through glibc's environment variable (`MALLOC_ARENA_MAX`, …). Called first
/// thing, before any thread allocates. A fixed mmap threshold also stops glibc from raising
/// it to the size of each large block freed.
void csystem_tune_malloc(int arenas, int mmap_threshold, int trim_threshold);

/// Makes a spawned child close every descriptor from `lowest` on, inherited by accident or
/// not (glibc 2.34+: `posix_spawn_file_actions_addclosefrom_np`).
int csystem_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// Makes a spawned child start with no signal blocked and every signal at its default (the
/// spawner's threads block some, and a child inherits ignored signals), plus `flags`.
int csystem_spawn_default_signals(posix_spawnattr_t *attributes, short flags);

/// Writes out what standard output holds; returns 1 when it, or an earlier write of it,
/// failed (Swift 6 cannot name C's `stdout`, a mutable global).
static inline int csystem_standard_output_failed(void) {
    return fflush(stdout) != 0 || ferror(stdout);
}

/// Frees the disk blocks of `length` bytes at `offset` of the file behind `fd`, which then
/// read as zeros; the file keeps its size. 0, or -1 with errno (`EOPNOTSUPP` where the
/// file system cannot).
int csystem_punch_hole(int fd, long long offset, long long length);

#endif
