#ifndef DBCRYPT_SEAL_CIPHER_H
#define DBCRYPT_SEAL_CIPHER_H

// DBCryptSeal's primitives with keys that are set up once, on OpenSSL's
// libcrypto (which DBCrypt links already, for its SQLCipher provider):
// AES-256-GCM for values, HMAC-SHA256 for the store's lookup tags and
// AES-256-CTR for its entry names (together, SIV),
// and the nonces to go with GCM.
//
// swift-crypto's AES.GCM sets up a new cipher context for every call (key
// schedule, hash tables, several allocations): about 1.9 µs to seal 100
// bytes, where a context keyed once takes about 0.3 µs. DBCryptSeal seals or
// opens a value per row read or written, so it keeps one context per key.

#include <stddef.h>
#include <stdint.h>

/// An AES-256-GCM key with its encryption and decryption contexts. Safe to
/// use from several threads at once (each call holds the key's lock).
typedef struct dbcrypt_gcm_key dbcrypt_gcm_key;

/// A key scheduled from 32 bytes, or NULL if OpenSSL cannot make one (out of
/// memory). The caller may wipe `key` as soon as this returns.
dbcrypt_gcm_key *dbcrypt_gcm_key_new(const uint8_t key[32]);

/// Frees the key; OpenSSL wipes its schedule.
void dbcrypt_gcm_key_free(dbcrypt_gcm_key *key);

/// Encrypts `count` bytes of `plaintext` into `ciphertext` (the same length;
/// the two may be the same buffer) and writes the 16-byte tag. The additional
/// data is `ad1` followed by `ad2` (either may be empty). Returns 1, or 0 if
/// OpenSSL failed.
int dbcrypt_gcm_seal(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *plaintext, size_t count, uint8_t *ciphertext, uint8_t tag[16]);

/// Decrypts and authenticates: returns 1 and the plaintext in `plaintext`, or
/// 0 when the tag does not match (then `plaintext` is zeroed: nothing
/// unauthenticated is left in it).
int dbcrypt_gcm_open(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *ciphertext, size_t count, const uint8_t tag[16], uint8_t *plaintext);

/// Fills `out` with 12 bytes from the system's random generator, through
/// CCipherProvider's `dbcrypt_random_bytes` (buffered, never the same bytes
/// twice, safe across fork). Returns 1, or 0 if the system gave no random bytes.
int dbcrypt_random_nonce(uint8_t out[12]);

/// An HMAC-SHA256 key with its inner and outer hash states computed once:
/// the store's lookup tags for entry names. Read-only after it is made, so
/// safe to use from several threads at once.
typedef struct dbcrypt_hmac_key dbcrypt_hmac_key;

/// A key from `count` bytes (any length, as HMAC takes), or NULL when out of
/// memory. The caller may wipe `key` as soon as this returns.
dbcrypt_hmac_key *dbcrypt_hmac_key_new(const uint8_t *key, size_t count);

/// Frees the key, wiping its states.
void dbcrypt_hmac_key_free(dbcrypt_hmac_key *key);

/// HMAC-SHA256 of `count` bytes of `message`: 32 bytes to `out`.
void dbcrypt_hmac(const dbcrypt_hmac_key *key, const uint8_t *message, size_t count, uint8_t out[32]);

/// An AES-256-CTR key, for the store's entry names: each name is encrypted
/// with its lookup tag (a 16-byte HMAC of the name) as the initial counter
/// block, and authenticated by recomputing that tag after decryption, the
/// SIV construction (deterministic authenticated encryption). Safe to use
/// from several threads at once (each call holds the key's lock).
typedef struct dbcrypt_ctr_key dbcrypt_ctr_key;

/// A key scheduled from 32 bytes, or NULL if OpenSSL cannot make one (out of
/// memory). The caller may wipe `key` as soon as this returns.
dbcrypt_ctr_key *dbcrypt_ctr_key_new(const uint8_t key[32]);

/// Frees the key; OpenSSL wipes its schedule.
void dbcrypt_ctr_key_free(dbcrypt_ctr_key *key);

/// Writes `in` XOR the AES-256-CTR key stream that starts at `counter` (a
/// big-endian 128-bit counter) to `out`; the two may be the same buffer.
/// Encrypts and decrypts. Returns 1, or 0 if OpenSSL failed or `count`
/// exceeds INT_MAX.
int dbcrypt_ctr_xor(dbcrypt_ctr_key *key, const uint8_t counter[16], const uint8_t *in, size_t count, uint8_t *out);

/// Whether the `count` bytes at `a` and `b` are equal, in time that does not
/// depend on where they differ.
int dbcrypt_equal(const uint8_t *a, const uint8_t *b, size_t count);

#endif
