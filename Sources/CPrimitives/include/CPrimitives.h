#ifndef DBCRYPT_PRIMITIVES_H
#define DBCRYPT_PRIMITIVES_H

// Every cryptographic primitive DBCrypt, DBCryptSeal and SQLCipherFormat use,
// with keys set up once: hashes, HMAC with its pads hashed once, PBKDF2,
// AES-256 in CBC (pages), GCM (sealed values) and CTR (the store's names),
// random bytes, constant-time comparison and wiping.
//
// This header names no library. `openssl.c` implements it on OpenSSL's
// libcrypto; an implementation on Apple's CommonCrypto would be one more file
// beside it. `random.c` draws from the system.
//
// Keys are opaque: made from bytes the caller may wipe as soon as the call
// returns, freed with their own function, which wipes every copy.

#include <stddef.h>
#include <stdint.h>

/// Sizes fixed by the algorithms.
enum {
    /// An AES-256 key.
    DBCRYPT_AES_KEY_SIZE = 32,
    /// An AES block, and so a CBC IV and a CTR counter block.
    DBCRYPT_AES_BLOCK_SIZE = 16,
    /// A GCM nonce: 96 bits, as NIST recommends.
    DBCRYPT_GCM_NONCE_SIZE = 12,
    /// A GCM tag: the full 128 bits.
    DBCRYPT_GCM_TAG_SIZE = 16,
    /// The largest digest (SHA-512).
    DBCRYPT_MAX_DIGEST_SIZE = 64,
};

/// The library the primitives come from and its version, for example
/// "OpenSSL 3.0.17 1 Jul 2025".
const char *dbcrypt_primitives_library(void);

/// The hash functions of SQLCipher's key derivation and page HMACs, and of
/// the sealed store's lookup tags.
typedef enum {
    DBCRYPT_SHA1 = 1,
    DBCRYPT_SHA256 = 2,
    DBCRYPT_SHA512 = 3,
} dbcrypt_hash;

/// The digest length of `hash` in bytes (20, 32 or 64), or 0 if unknown.
size_t dbcrypt_hash_size(int hash);

/// SHA-256 of `count` bytes at `data` into `out`. Returns 1, or 0 if the
/// library failed (then `out` holds nothing to use).
int dbcrypt_sha256(const void *data, size_t count, uint8_t out[32]);

/// PBKDF2-HMAC with `hash`, writing `outCount` bytes to `out`. Returns 1, or 0
/// for an unknown hash, zero iterations, a length past INT_MAX, or no memory.
int dbcrypt_pbkdf2(int hash, const void *password, size_t passwordCount,
                   const uint8_t *salt, size_t saltCount, uint32_t iterations,
                   uint8_t *out, size_t outCount);

/// scrypt (RFC 7914) with cost `n` (a power of two), block size `r` and
/// parallelism `p`, using at most `maxMemory` bytes, writing `outCount`
/// bytes to `out`. Returns 1, or 0 for parameters OpenSSL refuses or no memory.
int dbcrypt_scrypt(const void *password, size_t passwordCount, const uint8_t *salt, size_t saltCount,
                   uint64_t n, uint64_t r, uint64_t p, uint64_t maxMemory, uint8_t *out, size_t outCount);

/// How many key derivations (PBKDF2 of more than 2 rounds: SQLCipher's HMAC
/// key takes 2) this process has computed here: what a test counts to prove
/// a passphrase derived once.
long dbcrypt_key_derivations(void);

/// An HMAC key for one hash, with the inner and outer states (key XOR ipad,
/// key XOR opad) hashed once. Read-only once made: safe to use from several
/// threads at once.
typedef struct dbcrypt_hmac_key dbcrypt_hmac_key;

/// A key of `count` bytes (any length, as HMAC takes) for `hash`, or NULL for
/// an unknown hash or no memory.
dbcrypt_hmac_key *dbcrypt_hmac_key_new(int hash, const uint8_t *key, size_t count);

/// Frees the key, wiping its states.
void dbcrypt_hmac_key_free(dbcrypt_hmac_key *key);

/// The HMAC of `count` bytes at `data` followed by `moreCount` bytes at
/// `more` (a page and its number, say; either may be empty), into `out`: the
/// hash's size.
void dbcrypt_hmac(const dbcrypt_hmac_key *key, const uint8_t *data, size_t count,
                  const uint8_t *more, size_t moreCount, uint8_t *out);

/// An AES-256 key scheduled for CBC without padding, both ways: pages. One
/// thread at a time.
typedef struct dbcrypt_cbc_key dbcrypt_cbc_key;

/// A key from 32 bytes, or NULL when out of memory.
dbcrypt_cbc_key *dbcrypt_cbc_key_new(const uint8_t key[32]);

/// Frees the key, wiping its schedules.
void dbcrypt_cbc_key_free(dbcrypt_cbc_key *key);

/// Decrypts (`encrypt` 0) or encrypts (1) `count` bytes, a multiple of 16,
/// from `in` to `out` (which may be the same buffer) under `iv`. Returns 1,
/// or 0 if the library failed or `count` is not a multiple of 16 (then `out`
/// is zeroed).
int dbcrypt_cbc(dbcrypt_cbc_key *key, int encrypt, const uint8_t iv[16],
                const uint8_t *in, uint8_t *out, size_t count);

/// An AES-256-GCM key with its encryption and decryption contexts. Safe to
/// use from several threads at once (each call holds the key's lock).
typedef struct dbcrypt_gcm_key dbcrypt_gcm_key;

/// A key from 32 bytes, or NULL when out of memory.
dbcrypt_gcm_key *dbcrypt_gcm_key_new(const uint8_t key[32]);

/// Frees the key, wiping its schedules.
void dbcrypt_gcm_key_free(dbcrypt_gcm_key *key);

/// Encrypts `count` bytes of `plaintext` into `ciphertext` (the same length;
/// the two may be the same buffer) and writes the tag. The additional data is
/// `ad1` followed by `ad2` (either may be empty). Returns 1, or 0 if the
/// library failed.
int dbcrypt_gcm_seal(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *plaintext, size_t count, uint8_t *ciphertext, uint8_t tag[16]);

/// Decrypts and authenticates: returns 1 and the plaintext in `plaintext`, or
/// 0 when the tag does not match (then `plaintext` is zeroed: nothing
/// unauthenticated is left in it).
int dbcrypt_gcm_open(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *ciphertext, size_t count, const uint8_t tag[16], uint8_t *plaintext);

/// An AES-256-CTR key: the sealed store's entry names, each encrypted with
/// its lookup tag as the initial counter block (SIV). Safe to use from
/// several threads at once (each call holds the key's lock).
typedef struct dbcrypt_ctr_key dbcrypt_ctr_key;

/// A key from 32 bytes, or NULL when out of memory.
dbcrypt_ctr_key *dbcrypt_ctr_key_new(const uint8_t key[32]);

/// Frees the key, wiping its schedule.
void dbcrypt_ctr_key_free(dbcrypt_ctr_key *key);

/// Writes `in` XOR the key stream that starts at `counter` (a big-endian
/// 128-bit counter) to `out`; the two may be the same buffer. Encrypts and
/// decrypts. Returns 1, or 0 if the library failed or `count` exceeds INT_MAX.
int dbcrypt_ctr_xor(dbcrypt_ctr_key *key, const uint8_t counter[16], const uint8_t *in, size_t count, uint8_t *out);

/// Fills `out` with `count` bytes from the system's random generator: IVs,
/// salts, nonces, new keys. Bytes are drawn from getrandom(2) 4 KiB at a time
/// and handed out once each, from a page a forked child gets zeroed
/// (MADV_WIPEONFORK), so parent and child never hand out the same bytes;
/// where that is not available, every call asks the system. Returns 1, or 0
/// if the system gave no random bytes.
int dbcrypt_random_bytes(uint8_t *out, size_t count);

/// Whether `count` bytes at `a` and `b` are equal, in time that does not
/// depend on where they differ.
int dbcrypt_equal(const void *a, const void *b, size_t count);

/// Overwrites `count` bytes with zeros in a way the compiler keeps.
void dbcrypt_wipe(void *bytes, size_t count);

#endif
