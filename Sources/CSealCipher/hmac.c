#include "CSealCipher.h"

#include <stdlib.h>
#include <string.h>

// The SHA-256 state structs: copying a keyed state is the whole point here.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>

struct dbcrypt_hmac_key {
    SHA256_CTX inner;  // after hashing key XOR ipad
    SHA256_CTX outer;  // after hashing key XOR opad
};

dbcrypt_hmac_key *dbcrypt_hmac_key_new(const uint8_t *key, size_t count) {
    dbcrypt_hmac_key *k = malloc(sizeof *k);
    if (k == NULL) return NULL;
    uint8_t block[SHA256_CBLOCK] = {0}, pad[SHA256_CBLOCK];
    if (count > SHA256_CBLOCK) {
        SHA256(key, count, block);
    } else if (count > 0) {
        memcpy(block, key, count);
    }
    for (int i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    SHA256_Init(&k->inner);
    SHA256_Update(&k->inner, pad, sizeof pad);
    for (int i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    SHA256_Init(&k->outer);
    SHA256_Update(&k->outer, pad, sizeof pad);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    return k;
}

void dbcrypt_hmac_key_free(dbcrypt_hmac_key *key) {
    if (key == NULL) return;
    OPENSSL_cleanse(key, sizeof *key);
    free(key);
}

void dbcrypt_hmac(const dbcrypt_hmac_key *key, const uint8_t *message, size_t count, uint8_t out[32]) {
    SHA256_CTX ctx = key->inner;
    uint8_t inner[SHA256_DIGEST_LENGTH];
    if (count > 0) SHA256_Update(&ctx, message, count);
    SHA256_Final(inner, &ctx);
    ctx = key->outer;
    SHA256_Update(&ctx, inner, sizeof inner);
    SHA256_Final(out, &ctx);
    OPENSSL_cleanse(&ctx, sizeof ctx);
    OPENSSL_cleanse(inner, sizeof inner);
}
