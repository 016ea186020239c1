// Most of the shim is static inline functions in the header; what needs glibc's GNU
// declarations (_GNU_SOURCE, before any system header) is here.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>

#include "csystem_shim.h"

int csystem_spawn_default_signals(posix_spawnattr_t *attributes, short flags) {
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(attributes, &empty);
    posix_spawnattr_setsigdefault(attributes, &all);
    return posix_spawnattr_setflags(attributes, flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

int csystem_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

void csystem_tune_malloc(int arenas, int mmap_threshold, int trim_threshold) {
    if (!getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, arenas);
    if (!getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    if (!getenv("MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

void csystem_name_this_thread(const char *name) {
    char kept[16];
    strncpy(kept, name, sizeof kept - 1);
    kept[sizeof kept - 1] = 0;
    pthread_setname_np(pthread_self(), kept);
}

int csystem_punch_hole(int fd, long long offset, long long length) {
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length);
}
