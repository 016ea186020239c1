// libfuse3 low-level API for Swift. fuse_lowlevel.h refuses to compile without
// FUSE_USE_VERSION; 312 makes fuse_session_loop_mt a real function Swift can call.
#ifndef CFUSE_SHIM_H
#define CFUSE_SHIM_H

#define FUSE_USE_VERSION 312
#include <stddef.h>
#include <sys/types.h>
#include <fuse3/fuse_lowlevel.h>
#include <sys/xattr.h>

/// A one-buffer `fuse_bufvec` reading `size` bytes of `fd` at `offset`
/// (`FUSE_BUFVEC_INIT` is a macro): lets a read reply splice from a cache file.
static inline struct fuse_bufvec cfuse_bufvec_fd(int fd, size_t size, off_t offset) {
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fd;
    buf.buf[0].pos = offset;
    return buf;
}

#include "cfuse_session_io.h"

#endif
