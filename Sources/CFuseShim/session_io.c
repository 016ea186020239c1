// See cfuse_session_io.h. The kernel structures are spelled out here: the system's
// <linux/fuse.h> (Debian 12) predates passthrough.
#define _GNU_SOURCE
#include "cfuse_session_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define OPCODE_INIT 26
#define INIT_EXT (1U << 30)            // flags2 is valid
#define INIT_WRITEBACK_CACHE (1U << 16) // excludes passthrough
#define FOPEN_PASSTHROUGH_FLAG (1U << 7)
#define MAX_STACK_DEPTH 2               // FILESYSTEM_MAX_STACK_DEPTH: cache files may be on overlayfs
#define MAX_SESSIONS 64

struct in_header { uint32_t len, opcode; uint64_t unique, nodeid; uint32_t uid, gid, pid; uint16_t extlen, padding; };
struct out_header { uint32_t len; int32_t error; uint64_t unique; };
struct init_in { uint32_t major, minor, max_readahead, flags, flags2, unused[11]; };
struct init_out {
    uint32_t major, minor, max_readahead, flags;
    uint16_t max_background, congestion_threshold;
    uint32_t max_write, time_gran;
    uint16_t max_pages, map_alignment;
    uint32_t flags2, max_stack_depth;
    uint16_t request_timeout, unused[11];
};
struct open_out { uint64_t fh; uint32_t open_flags; int32_t backing_id; };
struct backing_map { int32_t fd; uint32_t flags; uint64_t padding; };
#define IOC_BACKING_OPEN _IOW(229, 1, struct backing_map)
#define IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

_Static_assert(sizeof(struct init_out) == 64, "fuse_init_out is 64 bytes");
_Static_assert(sizeof(struct open_out) == 16, "fuse_open_out is 16 bytes");

struct cfuse_io {
    int fd;
    _Atomic uint64_t offered;
    _Atomic uint64_t wanted;
    _Atomic uint64_t granted;
    _Atomic uint64_t init_unique;  // the INIT request awaiting its reply (0: none)
};

// Sessions by descriptor, for the I/O callbacks (which get the descriptor, not the session).
// Looked up only for INIT, so a plain lock will do.
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cfuse_io *sessions[MAX_SESSIONS];
// INIT replies not sent yet, over all sessions: every other reply skips the look-up.
static atomic_int inits_pending;
// The backing id the open reply being sent on this thread passes through to (0: none).
static __thread int32_t open_backing_id;

static struct cfuse_io *session_for(int fd) {
    struct cfuse_io *found = NULL;
    pthread_mutex_lock(&sessions_lock);
    for (int i = 0; i < MAX_SESSIONS; i++) {
        if (sessions[i] && sessions[i]->fd == fd) { found = sessions[i]; break; }
    }
    pthread_mutex_unlock(&sessions_lock);
    return found;
}

static void note_init_request(int fd, const void *buf, size_t len) {
    if (len < sizeof(struct in_header) + offsetof(struct init_in, flags2)) return;
    struct cfuse_io *io = session_for(fd);
    if (!io) return;
    const struct in_header *header = buf;
    struct init_in in = {0};
    memcpy(&in, (const char *)buf + sizeof *header,
           len - sizeof *header < sizeof in ? len - sizeof *header : sizeof in);
    uint64_t offered = in.flags;
    if ((in.flags & INIT_EXT) && len >= sizeof *header + offsetof(struct init_in, unused)) {
        offered |= (uint64_t)in.flags2 << 32;
    }
    atomic_store(&io->offered, offered);
    if (atomic_exchange(&io->init_unique, header->unique) == 0) atomic_fetch_add(&inits_pending, 1);
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata) {
    (void)userdata;
    ssize_t count = read(fd, buf, len);
    if (count >= (ssize_t)sizeof(struct in_header) && ((struct in_header *)buf)->opcode == OPCODE_INIT) {
        note_init_request(fd, buf, (size_t)count);
    }
    return count;
}

static size_t total_length(const struct iovec *iov, int count) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += iov[i].iov_len;
    return total;
}

// libfuse's INIT reply plus the wanted features the kernel offered.
static ssize_t send_init_reply(struct cfuse_io *io, int fd, struct iovec *iov, int count) {
    struct out_header header;
    struct init_out out = {0};
    size_t total = total_length(iov, count), copied = 0;
    char *bytes = malloc(total);
    if (!bytes) return -1;
    for (int i = 0; i < count; i++) { memcpy(bytes + copied, iov[i].iov_base, iov[i].iov_len); copied += iov[i].iov_len; }
    memcpy(&header, bytes, sizeof header);
    size_t arg = total - sizeof header;
    memcpy(&out, bytes + sizeof header, arg < sizeof out ? arg : sizeof out);
    free(bytes);

    uint64_t extras = atomic_load(&io->wanted) & atomic_load(&io->offered)
                    & (CFUSE_INIT_PASSTHROUGH | CFUSE_INIT_DIRECT_IO_ALLOW_MMAP);
    if (out.flags & INIT_WRITEBACK_CACHE) extras &= ~CFUSE_INIT_PASSTHROUGH;
    if (header.error != 0 || extras == 0) return writev(fd, iov, count);
    out.flags |= INIT_EXT;
    out.flags2 |= (uint32_t)(extras >> 32);
    if (extras & CFUSE_INIT_PASSTHROUGH) out.max_stack_depth = MAX_STACK_DEPTH;
    header.len = sizeof header + sizeof out;
    struct iovec patched[2] = { { &header, sizeof header }, { &out, sizeof out } };
    // Recorded before the reply goes: once the kernel has it, requests that depend on it
    // (a passthrough open, a getxattr asking what was granted) may reach another thread at once.
    atomic_store(&io->granted, extras);
    if (writev(fd, patched, 2) != (ssize_t)header.len) {
        atomic_store(&io->granted, 0);
        return -1;
    }
    return (ssize_t)total;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata) {
    (void)userdata;
    if (open_backing_id != 0 && count == 2 && iov[0].iov_len == sizeof(struct out_header)
        && iov[1].iov_len == sizeof(struct open_out)) {
        struct open_out out;
        memcpy(&out, iov[1].iov_base, sizeof out);
        out.open_flags |= FOPEN_PASSTHROUGH_FLAG;
        out.backing_id = open_backing_id;
        struct iovec patched[2] = { iov[0], { &out, sizeof out } };
        return writev(fd, patched, 2);
    }
    if (atomic_load_explicit(&inits_pending, memory_order_relaxed) > 0 && count >= 1
        && iov[0].iov_len >= sizeof(struct out_header)) {
        uint64_t unique = ((const struct out_header *)iov[0].iov_base)->unique;
        struct cfuse_io *io = session_for(fd);
        uint64_t expected = unique;
        if (io && unique != 0 && atomic_compare_exchange_strong(&io->init_unique, &expected, 0)) {
            atomic_fetch_sub(&inits_pending, 1);
            return send_init_reply(io, fd, iov, count);
        }
    }
    return writev(fd, iov, count);
}

static ssize_t io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
                              unsigned int flags, void *userdata) {
    (void)userdata;
    return splice(fdin, offin, fdout, offout, len, flags);
}

struct cfuse_io *cfuse_io_new(void) {
    struct cfuse_io *io = calloc(1, sizeof *io);
    if (io) io->fd = -1;
    return io;
}

void cfuse_io_free(struct cfuse_io *io) {
    if (!io) return;
    pthread_mutex_lock(&sessions_lock);
    for (int i = 0; i < MAX_SESSIONS; i++) if (sessions[i] == io) sessions[i] = NULL;
    pthread_mutex_unlock(&sessions_lock);
    if (atomic_exchange(&io->init_unique, 0) != 0) atomic_fetch_sub(&inits_pending, 1);
    free(io);
}

int cfuse_io_install(struct cfuse_io *io, struct fuse_session *se) {
    int fd = fuse_session_fd(se);
    if (fd < 0) return -EBADF;
    int slot = -1;
    pthread_mutex_lock(&sessions_lock);
    for (int i = 0; i < MAX_SESSIONS && slot < 0; i++) if (!sessions[i]) slot = i;
    if (slot >= 0) { io->fd = fd; sessions[slot] = io; }
    pthread_mutex_unlock(&sessions_lock);
    if (slot < 0) return -EMFILE;
    // No splice_receive: every request is read by io_read, so INIT is seen.
    struct fuse_custom_io custom = { .read = io_read, .writev = io_writev, .splice_send = io_splice_send };
    return fuse_session_custom_io(se, &custom, fd);
}

uint64_t cfuse_io_offered(const struct cfuse_io *io) { return atomic_load(&((struct cfuse_io *)io)->offered); }
void cfuse_io_want(struct cfuse_io *io, uint64_t flags) { atomic_fetch_or(&io->wanted, flags); }
uint64_t cfuse_io_granted(const struct cfuse_io *io) { return atomic_load(&((struct cfuse_io *)io)->granted); }

int cfuse_backing_open(const struct cfuse_io *io, int fd) {
    struct backing_map map = { .fd = fd };
    int id = ioctl(io->fd, IOC_BACKING_OPEN, &map);
    return id < 0 ? -errno : id;
}

int cfuse_backing_close(const struct cfuse_io *io, int id) {
    uint32_t value = (uint32_t)id;
    return ioctl(io->fd, IOC_BACKING_CLOSE, &value) < 0 ? -errno : 0;
}

int cfuse_reply_open_backing(fuse_req_t req, const struct fuse_file_info *fi, int id) {
    open_backing_id = id;
    int result = fuse_reply_open(req, fi);
    open_backing_id = 0;
    return result;
}
