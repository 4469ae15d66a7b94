#include "CSealCipher.h"
#include "CCipherProvider.h"

int dbcrypt_random_nonce(uint8_t out[12]) { return dbcrypt_random_bytes(out, 12); }
