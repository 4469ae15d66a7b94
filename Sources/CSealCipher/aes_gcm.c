#include "CSealCipher.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

struct dbcrypt_gcm_key {
    pthread_mutex_t lock;
    EVP_CIPHER_CTX *encrypt;
    EVP_CIPHER_CTX *decrypt;
};

dbcrypt_gcm_key *dbcrypt_gcm_key_new(const uint8_t key[32]) {
    dbcrypt_gcm_key *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->encrypt = EVP_CIPHER_CTX_new();
    k->decrypt = EVP_CIPHER_CTX_new();
    if (k->encrypt == NULL || k->decrypt == NULL
        || EVP_EncryptInit_ex(k->encrypt, EVP_aes_256_gcm(), NULL, key, NULL) != 1
        || EVP_DecryptInit_ex(k->decrypt, EVP_aes_256_gcm(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(k->encrypt);
        EVP_CIPHER_CTX_free(k->decrypt);
        free(k);
        return NULL;
    }
    pthread_mutex_init(&k->lock, NULL);
    return k;
}

void dbcrypt_gcm_key_free(dbcrypt_gcm_key *key) {
    if (key == NULL) return;
    EVP_CIPHER_CTX_free(key->encrypt);
    EVP_CIPHER_CTX_free(key->decrypt);
    pthread_mutex_destroy(&key->lock);
    free(key);
}

// EVP takes int lengths: feed longer inputs in pieces (GCM allows any split).
enum { PIECE = 1 << 30 };

static int add_ad(EVP_CIPHER_CTX *ctx, int encrypting, const uint8_t *ad, size_t count) {
    while (count > 0) {
        int piece = count > PIECE ? PIECE : (int)count, written = 0;
        int ok = encrypting ? EVP_EncryptUpdate(ctx, NULL, &written, ad, piece)
                            : EVP_DecryptUpdate(ctx, NULL, &written, ad, piece);
        if (ok != 1) return 0;
        ad += piece;
        count -= (size_t)piece;
    }
    return 1;
}

static int transform(EVP_CIPHER_CTX *ctx, int encrypting, const uint8_t *in, size_t count, uint8_t *out) {
    while (count > 0) {
        int piece = count > PIECE ? PIECE : (int)count, written = 0;
        int ok = encrypting ? EVP_EncryptUpdate(ctx, out, &written, in, piece)
                            : EVP_DecryptUpdate(ctx, out, &written, in, piece);
        if (ok != 1 || written != piece) return 0;
        in += piece;
        out += piece;
        count -= (size_t)piece;
    }
    return 1;
}

int dbcrypt_gcm_seal(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *plaintext, size_t count, uint8_t *ciphertext, uint8_t tag[16]) {
    int written = 0, ok;
    uint8_t none[16];  // GCM's final step writes no bytes
    pthread_mutex_lock(&key->lock);
    EVP_CIPHER_CTX *ctx = key->encrypt;
    // A NULL cipher and key keep the schedule; only the nonce is new.
    ok = EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1
        && add_ad(ctx, 1, ad1, ad1Count) && add_ad(ctx, 1, ad2, ad2Count)
        && transform(ctx, 1, plaintext, count, ciphertext)
        && EVP_EncryptFinal_ex(ctx, none, &written) == 1 && written == 0
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    pthread_mutex_unlock(&key->lock);
    return ok;
}

int dbcrypt_gcm_open(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *ciphertext, size_t count, const uint8_t tag[16], uint8_t *plaintext) {
    int written = 0, ok;
    uint8_t expected[16], none[16];
    memcpy(expected, tag, 16);
    pthread_mutex_lock(&key->lock);
    EVP_CIPHER_CTX *ctx = key->decrypt;
    ok = EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1
        && add_ad(ctx, 0, ad1, ad1Count) && add_ad(ctx, 0, ad2, ad2Count)
        && transform(ctx, 0, ciphertext, count, plaintext)
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1
        && EVP_DecryptFinal_ex(ctx, none, &written) == 1 && written == 0;
    pthread_mutex_unlock(&key->lock);
    if (!ok && count > 0) OPENSSL_cleanse(plaintext, count);
    return ok;
}
