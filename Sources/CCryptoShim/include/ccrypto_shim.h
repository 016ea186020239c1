// The system OpenSSL libcrypto's digest API (EVP), for verifying downloads.
// Swift imports these functions directly; the shim adds one helper that hashes a file
// descriptor in C, so verifying a 1 GiB file costs one call and no Swift buffers.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <sys/types.h>

/// SHA-256 of the first `length` bytes of `fd` (read with pread from offset 0) into `digest`
/// (32 bytes). Returns 0 on success, an errno value on a read error or short file, or -1
/// when libcrypto fails.
int ccrypto_sha256_fd(int fd, off_t length, unsigned char digest[32]);

#endif
