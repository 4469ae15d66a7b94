#ifndef DBCRYPT_PAGE_CIPHER_H
#define DBCRYPT_PAGE_CIPHER_H

// SQLCipherFormat's primitives, on OpenSSL's libcrypto (which DBCrypt links
// already, for its SQLCipher provider), with keys set up once per file:
// AES-256-CBC without padding for page contents, the page HMAC (SHA-1,
// SHA-256 or SHA-512) and PBKDF2 for SQLCipher's key derivation.
//
// swift-crypto's AES._CBC schedules the key and allocates its result on
// every call, and a page reader makes one call per page: the reader's
// throughput goal is a fraction of what OpenSSL itself does per page.

#include <stddef.h>
#include <stdint.h>

/// The hash functions SQLCipher uses for its KDF and page HMACs.
typedef enum {
    DBCRYPT_PAGE_SHA1 = 1,
    DBCRYPT_PAGE_SHA256 = 2,
    DBCRYPT_PAGE_SHA512 = 3,
} dbcrypt_page_hash;

/// The digest length of `hash` in bytes (20, 32 or 64), or 0 if unknown.
size_t dbcrypt_page_hash_size(int hash);

/// PBKDF2-HMAC with `hash`. Returns 1, or 0 if OpenSSL refused (an unknown
/// hash, a length past INT_MAX, no memory).
int dbcrypt_page_pbkdf2(int hash, const uint8_t *password, size_t passwordCount,
                        const uint8_t *salt, size_t saltCount, uint32_t iterations,
                        uint8_t *out, size_t outCount);

/// A file's page keys: the AES-256 key scheduled for CBC in both directions,
/// and the HMAC key's inner and outer states. One thread at a time.
typedef struct dbcrypt_page_keys dbcrypt_page_keys;

/// Keys from a 32-byte encryption key and an HMAC key of `hmacKeyCount`
/// bytes for `hash` (0: no HMAC, SQLCipher 1). NULL if OpenSSL could not make
/// them (out of memory, an unknown hash). The caller may wipe both keys as
/// soon as this returns.
dbcrypt_page_keys *dbcrypt_page_keys_new(const uint8_t key[32], int hash, const uint8_t *hmacKey, size_t hmacKeyCount);

/// Frees the keys, wiping every copy of them.
void dbcrypt_page_keys_free(dbcrypt_page_keys *keys);

/// Decrypts (`encrypt` 0) or encrypts (1) `count` bytes, a multiple of 16,
/// from `in` to `out` (which may be the same buffer) with AES-256-CBC and
/// no padding. Returns 1, or 0 if OpenSSL failed or `count` is not a
/// multiple of 16.
int dbcrypt_page_cbc(dbcrypt_page_keys *keys, int encrypt, const uint8_t iv[16],
                     const uint8_t *in, uint8_t *out, size_t count);

/// The HMAC of `count` bytes of `data` followed by the 4 bytes `pageNumber`
/// into `out` (the hash's size). Returns 1, or 0 without an HMAC key.
int dbcrypt_page_hmac(dbcrypt_page_keys *keys, const uint8_t *data, size_t count,
                      const uint8_t pageNumber[4], uint8_t *out);

/// Whether `count` bytes at `a` and `b` are equal, in time that does not
/// depend on where they differ.
int dbcrypt_page_equal(const uint8_t *a, const uint8_t *b, size_t count);

/// Overwrites `count` bytes with zeros in a way the compiler keeps.
void dbcrypt_page_wipe(void *bytes, size_t count);

#endif
