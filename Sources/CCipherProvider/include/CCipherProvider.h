#ifndef DBCRYPT_CIPHER_PROVIDER_H
#define DBCRYPT_CIPHER_PROVIDER_H

// DBCrypt's crypto provider for SQLCipher 3.4.x, on OpenSSL's libcrypto.
//
// SQLCipher 3.4.x does all its cryptography through a table of functions, the
// provider, which sqlcipher_register_provider replaces. This one adds the
// SQLCipher 4 format (PBKDF2-HMAC-SHA512 and HMAC-SHA512 per page, 80 reserved
// bytes) to the SQLCipher 3 one (SHA-1, 48 reserved bytes), and keeps its
// OpenSSL contexts and key schedules across pages instead of making them anew
// for each page.

/// The page-HMAC and key-derivation hash of a connection's codec.
enum {
    /// Leave the provider's default (SHA-1, SQLCipher 3 and earlier).
    DBCRYPT_MODE_DEFAULT = 0,
    /// SQLCipher 3: PBKDF2-HMAC-SHA1 and HMAC-SHA1.
    DBCRYPT_MODE_SHA1 = 1,
    /// SQLCipher 4: PBKDF2-HMAC-SHA512 and HMAC-SHA512.
    DBCRYPT_MODE_SHA512 = 2,
};

/// Registers the provider with the linked SQLCipher, once per process, and
/// pins it so that closing the last connection does not unregister it.
/// Call it before any connection is keyed, from one thread. Returns 0 on
/// success, or a non-zero SQLite error code.
int dbcrypt_provider_install(void);

/// The mode the codecs created by the next keying on this thread get (a
/// thread-local setting: keying creates the codecs on the calling thread).
/// Set it right before sqlite3_key or an ATTACH with a KEY, and set it back
/// to DBCRYPT_MODE_DEFAULT right after.
void dbcrypt_provider_select_mode(int mode);

/// The provider's name, as `PRAGMA cipher_provider` reports it.
const char *dbcrypt_provider_name(void);

#include <stddef.h>
#include <stdint.h>

/// PBKDF2 exactly as the provider computes a page key for `mode`
/// (HMAC-SHA1 or HMAC-SHA512), writing 32 bytes to `key`. Returns 0 on
/// success. With it DBCrypt derives a passphrase's key once, then writes and
/// checks a new file with the raw key and salt, instead of having SQLCipher
/// derive it twice.
int dbcrypt_provider_derive_key(const void *pass, int pass_sz, const unsigned char *salt, int salt_sz,
                                int iterations, int mode, unsigned char *key);

/// How many key derivations (PBKDF2 of more than 2 rounds) the provider has
/// computed in this process: what a test counts to prove a key derived once.
long dbcrypt_provider_key_derivations(void);

/// SHA-256 of `size` bytes at `data` into `out` (32 bytes), through OpenSSL.
/// Returns 0 on success. DBCrypt uses it for schema migration checksums.
int dbcrypt_sha256(const void *data, size_t size, unsigned char *out);

/// Fills `out` with `count` bytes from the system's random generator: the
/// provider's random IVs and salts, and DBCryptSeal's nonces. Bytes are
/// drawn from getrandom(2) 4 KiB at a time and handed out once each (about
/// 160 instructions for a 16-byte IV, where OpenSSL's RAND_bytes took 6,800); the
/// buffer lives in a page that a forked child gets zeroed (MADV_WIPEONFORK),
/// so parent and child never hand out the same bytes. Where that is not
/// available, every call asks the system. Returns 1, or 0 if the system
/// gave no random bytes.
int dbcrypt_random_bytes(uint8_t *out, size_t count);

#endif
