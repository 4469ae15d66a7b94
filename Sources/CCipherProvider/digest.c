// SHA-256 for DBCrypt's schema migration checksums: see CCipherProvider.h.
#include "CCipherProvider.h"

#include <openssl/evp.h>

int dbcrypt_sha256(const void *data, size_t size, unsigned char *out) {
    unsigned int length = 0;
    return EVP_Digest(data, size, out, &length, EVP_sha256(), NULL) == 1 && length == 32 ? 0 : 1;
}
