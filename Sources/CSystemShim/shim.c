// The header holds the shim (static inline functions); SwiftPM wants one source file.
#include "csystem_shim.h"
