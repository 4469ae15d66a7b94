#ifndef DBCRYPT_CIPHER_PROVIDER_H
#define DBCRYPT_CIPHER_PROVIDER_H

// DBCrypt's crypto provider for SQLCipher 3.4.x.
//
// SQLCipher 3.4.x does all its cryptography through a table of functions, the
// provider, which sqlcipher_register_provider replaces. This one adds the
// SQLCipher 4 format (PBKDF2-HMAC-SHA512 and HMAC-SHA512 per page, 80 reserved
// bytes) to the SQLCipher 3 one (SHA-1, 48 reserved bytes), on CPrimitives,
// and keeps its keys scheduled across pages instead of making them anew for
// each page. SQLCipher 4 has both formats itself and never uses this table.

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

#endif
