// Most of the shim is static inline functions in the header; what needs glibc's GNU
// declarations (_GNU_SOURCE, before any system header) is here.
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>

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
