#include "ccrypto_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int ccrypto_sha256_fd(int fd, off_t length, unsigned char digest[32]) {
    enum { chunk = 1 << 20 };
    unsigned char *buffer = malloc(chunk);
    if (buffer == NULL) return ENOMEM;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        free(buffer);
        return -1;
    }
    (void)posix_fadvise(fd, 0, length, POSIX_FADV_SEQUENTIAL);
    int result = 0;
    off_t offset = 0;
    while (offset < length) {
        size_t want = (size_t)(length - offset < chunk ? length - offset : chunk);
        ssize_t got = pread(fd, buffer, want, offset);
        if (got < 0) {
            if (errno == EINTR) continue;
            result = errno;
            break;
        }
        if (got == 0) { result = EIO; break; }  // the file is shorter than it should be
        if (EVP_DigestUpdate(ctx, buffer, (size_t)got) != 1) { result = -1; break; }
        offset += got;
    }
    unsigned int size = 0;
    if (result == 0 && EVP_DigestFinal_ex(ctx, digest, &size) != 1) result = -1;
    EVP_MD_CTX_free(ctx);
    free(buffer);
    return result;
}
