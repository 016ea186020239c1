#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H

// C library calls that Swift's Glibc module leaves out (malloc.h is not part of it).

#include <malloc.h>

/// Gives the memory malloc holds free back to the system (every arena, not only the top of
/// the heap). Returns 1 when some was given back.
static inline int csystem_release_free_memory(void) {
    return malloc_trim(0);
}

#endif
