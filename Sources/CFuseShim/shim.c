#include "cfuse_shim.h"
