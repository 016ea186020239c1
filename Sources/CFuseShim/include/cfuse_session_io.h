// The session's /dev/fuse I/O, routed through offlinefs (libfuse's `fuse_session_custom_io`) to
// negotiate two kernel features libfuse 3.14 does not know (kernel 6.9+):
//
//   FUSE_PASSTHROUGH            an open file's reads and mmaps go straight to a backing file
//                               the daemon registered (`cfuse_backing_open`), with no request
//                               reaching the daemon: a cached item reads as fast as its cache file.
//   FUSE_DIRECT_IO_ALLOW_MMAP   a `direct_io` file may still be mmapped (through the page cache).
//
// libfuse builds the INIT reply from flags it knows; the I/O layer sees the kernel's INIT
// request (what it offers), and adds the wanted features the kernel offered to libfuse's INIT
// reply on its way out. An open reply is marked for passthrough the same way: on its way out,
// on the thread that sends it (`cfuse_reply_open_backing`). Everything else passes unchanged.
#ifndef CFUSE_SESSION_IO_H
#define CFUSE_SESSION_IO_H

#include <stdint.h>
#include "cfuse_shim.h"

/// INIT flags (the kernel's 64-bit `flags | flags2 << 32`) this layer can negotiate.
static const uint64_t CFUSE_INIT_DIRECT_IO_ALLOW_MMAP = 1ULL << 36;
static const uint64_t CFUSE_INIT_PASSTHROUGH = 1ULL << 37;

/// One session's I/O state. Made before the mount, freed after `fuse_session_destroy`.
struct cfuse_io;

struct cfuse_io *cfuse_io_new(void);
void cfuse_io_free(struct cfuse_io *io);

/// Routes `se`'s I/O through `io` (after `fuse_session_mount`, before the loop runs).
/// Returns 0 or a negative errno.
int cfuse_io_install(struct cfuse_io *io, struct fuse_session *se);

/// The INIT flags the kernel offered (0 before INIT arrives; valid in the `init` callback).
uint64_t cfuse_io_offered(const struct cfuse_io *io);

/// Asks for `flags` (of CFUSE_INIT_*): those the kernel offered are added to the INIT reply.
/// Call before or from the `init` callback.
void cfuse_io_want(struct cfuse_io *io, uint64_t flags);

/// The CFUSE_INIT_* flags the INIT reply carried (0 before it is sent).
uint64_t cfuse_io_granted(const struct cfuse_io *io);

/// Registers `fd` as a backing file (FUSE_DEV_IOC_BACKING_OPEN; needs CAP_SYS_ADMIN).
/// Returns its id (> 0) or a negative errno. The kernel holds its own reference to the file.
int cfuse_backing_open(const struct cfuse_io *io, int fd);

/// Drops backing id `id` (files opened with it keep reading). Returns 0 or a negative errno.
int cfuse_backing_close(const struct cfuse_io *io, int id);

/// `fuse_reply_open`, with the open file's reads and mmaps passed through to backing `id`.
int cfuse_reply_open_backing(fuse_req_t req, const struct fuse_file_info *fi, int id);

#endif
