#ifndef CSYSTEMD_H
#define CSYSTEMD_H

// libsystemd's sd-bus (Debian: libsystemd-dev), for OfflineDBus. Every call the binding makes
// imports as is (none is variadic), so there is no shim code.
#include <systemd/sd-bus.h>

#endif
