#include "CPageCipher.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

// The SHA state structs: a keyed HMAC state copied per page costs a struct
// assignment, where EVP_MD_CTX_copy goes through OpenSSL's providers.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

typedef union {
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
} hash_state;

struct dbcrypt_page_keys {
    EVP_CIPHER_CTX *decrypt;
    EVP_CIPHER_CTX *encrypt;
    int hash;            // 0: no HMAC
    hash_state inner;    // after hashing key XOR ipad
    hash_state outer;    // after hashing key XOR opad
};

size_t dbcrypt_page_hash_size(int hash) {
    switch (hash) {
    case DBCRYPT_PAGE_SHA1: return SHA_DIGEST_LENGTH;
    case DBCRYPT_PAGE_SHA256: return SHA256_DIGEST_LENGTH;
    case DBCRYPT_PAGE_SHA512: return SHA512_DIGEST_LENGTH;
    default: return 0;
    }
}

static const EVP_MD *digest(int hash) {
    switch (hash) {
    case DBCRYPT_PAGE_SHA1: return EVP_sha1();
    case DBCRYPT_PAGE_SHA256: return EVP_sha256();
    case DBCRYPT_PAGE_SHA512: return EVP_sha512();
    default: return NULL;
    }
}

static size_t block_size(int hash) { return hash == DBCRYPT_PAGE_SHA512 ? SHA512_CBLOCK : SHA_CBLOCK; }

static void hash_init(int hash, hash_state *s) {
    switch (hash) {
    case DBCRYPT_PAGE_SHA1: SHA1_Init(&s->sha1); break;
    case DBCRYPT_PAGE_SHA256: SHA256_Init(&s->sha256); break;
    default: SHA512_Init(&s->sha512); break;
    }
}

static void hash_update(int hash, hash_state *s, const uint8_t *data, size_t count) {
    if (count == 0) return;
    switch (hash) {
    case DBCRYPT_PAGE_SHA1: SHA1_Update(&s->sha1, data, count); break;
    case DBCRYPT_PAGE_SHA256: SHA256_Update(&s->sha256, data, count); break;
    default: SHA512_Update(&s->sha512, data, count); break;
    }
}

static void hash_final(int hash, hash_state *s, uint8_t *out) {
    switch (hash) {
    case DBCRYPT_PAGE_SHA1: SHA1_Final(out, &s->sha1); break;
    case DBCRYPT_PAGE_SHA256: SHA256_Final(out, &s->sha256); break;
    default: SHA512_Final(out, &s->sha512); break;
    }
}

int dbcrypt_page_pbkdf2(int hash, const uint8_t *password, size_t passwordCount,
                        const uint8_t *salt, size_t saltCount, uint32_t iterations,
                        uint8_t *out, size_t outCount) {
    const EVP_MD *md = digest(hash);
    if (md == NULL || passwordCount > INT_MAX || saltCount > INT_MAX || outCount > INT_MAX
        || iterations == 0 || iterations > INT_MAX) return 0;
    // OpenSSL reads a NULL password as "no password" only with a length of 0.
    static const uint8_t none = 0;
    return PKCS5_PBKDF2_HMAC((const char *)(password ? password : &none), (int)passwordCount,
                             salt ? salt : &none, (int)saltCount, (int)iterations, md, (int)outCount, out) == 1;
}

dbcrypt_page_keys *dbcrypt_page_keys_new(const uint8_t key[32], int hash, const uint8_t *hmacKey, size_t hmacKeyCount) {
    if (hash != 0 && digest(hash) == NULL) return NULL;
    dbcrypt_page_keys *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->decrypt = EVP_CIPHER_CTX_new();
    k->encrypt = EVP_CIPHER_CTX_new();
    if (k->decrypt == NULL || k->encrypt == NULL
        || EVP_DecryptInit_ex(k->decrypt, EVP_aes_256_cbc(), NULL, key, NULL) != 1
        || EVP_EncryptInit_ex(k->encrypt, EVP_aes_256_cbc(), NULL, key, NULL) != 1) {
        dbcrypt_page_keys_free(k);
        return NULL;
    }
    EVP_CIPHER_CTX_set_padding(k->decrypt, 0);
    EVP_CIPHER_CTX_set_padding(k->encrypt, 0);
    k->hash = hash;
    if (hash != 0) {
        uint8_t block[SHA512_CBLOCK] = {0}, pad[SHA512_CBLOCK];
        size_t size = block_size(hash);
        if (hmacKeyCount > size) {
            hash_state s;
            hash_init(hash, &s);
            hash_update(hash, &s, hmacKey, hmacKeyCount);
            hash_final(hash, &s, block);
            OPENSSL_cleanse(&s, sizeof s);
        } else if (hmacKeyCount > 0) {
            memcpy(block, hmacKey, hmacKeyCount);
        }
        for (size_t i = 0; i < size; i++) pad[i] = block[i] ^ 0x36;
        hash_init(hash, &k->inner);
        hash_update(hash, &k->inner, pad, size);
        for (size_t i = 0; i < size; i++) pad[i] = block[i] ^ 0x5c;
        hash_init(hash, &k->outer);
        hash_update(hash, &k->outer, pad, size);
        OPENSSL_cleanse(block, sizeof block);
        OPENSSL_cleanse(pad, sizeof pad);
    }
    return k;
}

void dbcrypt_page_keys_free(dbcrypt_page_keys *keys) {
    if (keys == NULL) return;
    EVP_CIPHER_CTX_free(keys->decrypt);  // OpenSSL wipes the schedules
    EVP_CIPHER_CTX_free(keys->encrypt);
    OPENSSL_cleanse(keys, sizeof *keys);
    free(keys);
}

int dbcrypt_page_cbc(dbcrypt_page_keys *keys, int encrypt, const uint8_t iv[16],
                     const uint8_t *in, uint8_t *out, size_t count) {
    if (count % 16 != 0 || count > INT_MAX) return 0;
    EVP_CIPHER_CTX *ctx = encrypt ? keys->encrypt : keys->decrypt;
    int written = 0;
    // A NULL cipher and key keep the schedule; only the IV is new.
    if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) != 1) return 0;
    return count == 0 || (EVP_CipherUpdate(ctx, out, &written, in, (int)count) == 1 && written == (int)count);
}

int dbcrypt_page_hmac(dbcrypt_page_keys *keys, const uint8_t *data, size_t count,
                      const uint8_t pageNumber[4], uint8_t *out) {
    if (keys->hash == 0) return 0;
    uint8_t inner[SHA512_DIGEST_LENGTH];
    size_t size = dbcrypt_page_hash_size(keys->hash);
    hash_state s = keys->inner;
    hash_update(keys->hash, &s, data, count);
    hash_update(keys->hash, &s, pageNumber, 4);
    hash_final(keys->hash, &s, inner);
    s = keys->outer;
    hash_update(keys->hash, &s, inner, size);
    hash_final(keys->hash, &s, out);
    OPENSSL_cleanse(&s, sizeof s);
    OPENSSL_cleanse(inner, sizeof inner);
    return 1;
}

int dbcrypt_page_equal(const uint8_t *a, const uint8_t *b, size_t count) {
    return CRYPTO_memcmp(a, b, count) == 0;
}

void dbcrypt_page_wipe(void *bytes, size_t count) {
    if (bytes != NULL) OPENSSL_cleanse(bytes, count);
}
