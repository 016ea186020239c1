// Most of the shim is static inline functions in the header; what needs glibc's GNU
// declarations (_GNU_SOURCE, before any system header) is here.
#define _GNU_SOURCE
#include <spawn.h>

#include "csystem_shim.h"

int csystem_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
