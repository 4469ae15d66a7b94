#ifndef DBCRYPT_CSQLCIPHER_SHIM_H
#define DBCRYPT_CSQLCIPHER_SHIM_H

// SQLCipher declares sqlite3_key, sqlite3_key_v2, sqlite3_rekey and
// sqlite3_rekey_v2 only when SQLITE_HAS_CODEC is defined before the header.
// pkg-config "sqlcipher" puts SQLCipher's include directory first on the
// search path, so <sqlite3.h> here is SQLCipher's, not the system SQLite's.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro that Swift cannot import: SQLite copies
// the bound bytes before the bind call returns.
static inline sqlite3_destructor_type dbcrypt_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
