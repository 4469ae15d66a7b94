#include "CSealCipher.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

struct dbcrypt_ctr_key {
    pthread_mutex_t lock;
    EVP_CIPHER_CTX *ctx;
};

dbcrypt_ctr_key *dbcrypt_ctr_key_new(const uint8_t key[32]) {
    dbcrypt_ctr_key *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->ctx = EVP_CIPHER_CTX_new();
    if (k->ctx == NULL || EVP_EncryptInit_ex(k->ctx, EVP_aes_256_ctr(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(k->ctx);
        free(k);
        return NULL;
    }
    pthread_mutex_init(&k->lock, NULL);
    return k;
}

void dbcrypt_ctr_key_free(dbcrypt_ctr_key *key) {
    if (key == NULL) return;
    EVP_CIPHER_CTX_free(key->ctx);
    pthread_mutex_destroy(&key->lock);
    free(key);
}

int dbcrypt_ctr_xor(dbcrypt_ctr_key *key, const uint8_t counter[16], const uint8_t *in, size_t count, uint8_t *out) {
    if (count > INT_MAX) return 0;  // names, not files
    int written = 0, ok;
    pthread_mutex_lock(&key->lock);
    // A NULL cipher and key keep the schedule; only the counter block is new.
    ok = EVP_EncryptInit_ex(key->ctx, NULL, NULL, NULL, counter) == 1
        && (count == 0 || (EVP_EncryptUpdate(key->ctx, out, &written, in, (int)count) == 1 && written == (int)count));
    pthread_mutex_unlock(&key->lock);
    return ok;
}

int dbcrypt_equal(const uint8_t *a, const uint8_t *b, size_t count) {
    return CRYPTO_memcmp(a, b, count) == 0;
}
