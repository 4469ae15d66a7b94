#ifndef DBCRYPT_COPENSSL_SHIM_H
#define DBCRYPT_COPENSSL_SHIM_H

// OpenSSL's libcrypto, found through pkg-config ("libcrypto"), as Homebrew's
// openssl@3 is, which lives outside the compiler's default paths. The C
// targets include OpenSSL's headers themselves; depending on this target
// gives them its include path and links libcrypto.
#include <openssl/crypto.h>

#endif
