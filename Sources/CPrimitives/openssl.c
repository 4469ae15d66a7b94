// CPrimitives.h on OpenSSL's libcrypto.
#include "CPrimitives.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The SHA state structs are deprecated in OpenSSL 3 but stay its fastest
// path for HMAC with precomputed pads: a keyed state is copied per message
// with a struct assignment, where EVP_MD_CTX_copy_ex allocates.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

const char *dbcrypt_primitives_library(void) { return OpenSSL_version(OPENSSL_VERSION); }

// MARK: - Hashes

typedef union {
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
} hash_state;

size_t dbcrypt_hash_size(int hash) {
    switch (hash) {
    case DBCRYPT_SHA1: return SHA_DIGEST_LENGTH;
    case DBCRYPT_SHA256: return SHA256_DIGEST_LENGTH;
    case DBCRYPT_SHA512: return SHA512_DIGEST_LENGTH;
    default: return 0;
    }
}

static const EVP_MD *digest(int hash) {
    switch (hash) {
    case DBCRYPT_SHA1: return EVP_sha1();
    case DBCRYPT_SHA256: return EVP_sha256();
    case DBCRYPT_SHA512: return EVP_sha512();
    default: return NULL;
    }
}

static size_t block_size(int hash) { return hash == DBCRYPT_SHA512 ? SHA512_CBLOCK : SHA_CBLOCK; }

static void hash_init(int hash, hash_state *s) {
    switch (hash) {
    case DBCRYPT_SHA1: SHA1_Init(&s->sha1); break;
    case DBCRYPT_SHA256: SHA256_Init(&s->sha256); break;
    default: SHA512_Init(&s->sha512); break;
    }
}

static void hash_update(int hash, hash_state *s, const uint8_t *data, size_t count) {
    if (count == 0) return;
    switch (hash) {
    case DBCRYPT_SHA1: SHA1_Update(&s->sha1, data, count); break;
    case DBCRYPT_SHA256: SHA256_Update(&s->sha256, data, count); break;
    default: SHA512_Update(&s->sha512, data, count); break;
    }
}

static void hash_final(int hash, hash_state *s, uint8_t *out) {
    switch (hash) {
    case DBCRYPT_SHA1: SHA1_Final(out, &s->sha1); break;
    case DBCRYPT_SHA256: SHA256_Final(out, &s->sha256); break;
    default: SHA512_Final(out, &s->sha512); break;
    }
}

int dbcrypt_sha256(const void *data, size_t count, uint8_t out[32]) {
    unsigned int length = 0;
    static const uint8_t none = 0;
    return EVP_Digest(data ? data : &none, count, out, &length, EVP_sha256(), NULL) == 1 && length == 32;
}

// MARK: - PBKDF2

static _Atomic long key_derivations;

long dbcrypt_key_derivations(void) { return key_derivations; }

int dbcrypt_pbkdf2(int hash, const void *password, size_t passwordCount,
                   const uint8_t *salt, size_t saltCount, uint32_t iterations,
                   uint8_t *out, size_t outCount) {
    const EVP_MD *md = digest(hash);
    if (md == NULL || passwordCount > INT_MAX || saltCount > INT_MAX || outCount > INT_MAX
        || iterations == 0 || iterations > INT_MAX) return 0;
    if (iterations > 2) key_derivations++;
    // OpenSSL reads a NULL password as "no password" only with a length of 0.
    static const uint8_t none = 0;
    return PKCS5_PBKDF2_HMAC(password ? password : (const void *)&none, (int)passwordCount,
                             salt ? salt : &none, (int)saltCount, (int)iterations, md, (int)outCount, out) == 1;
}

int dbcrypt_scrypt(const void *password, size_t passwordCount, const uint8_t *salt, size_t saltCount,
                   uint64_t n, uint64_t r, uint64_t p, uint64_t maxMemory, uint8_t *out, size_t outCount) {
    static const uint8_t none = 0;
    return EVP_PBE_scrypt(password ? password : (const void *)&none, passwordCount, salt ? salt : &none, saltCount,
                          n, r, p, maxMemory, out, outCount) == 1;
}

// MARK: - HMAC

struct dbcrypt_hmac_key {
    int hash;
    hash_state inner;  // after hashing key XOR ipad
    hash_state outer;  // after hashing key XOR opad
};

dbcrypt_hmac_key *dbcrypt_hmac_key_new(int hash, const uint8_t *key, size_t count) {
    if (digest(hash) == NULL) return NULL;
    dbcrypt_hmac_key *k = OPENSSL_zalloc(sizeof *k);
    if (k == NULL) return NULL;
    uint8_t block[SHA512_CBLOCK] = {0}, pad[SHA512_CBLOCK];
    size_t size = block_size(hash);
    if (count > size) {
        hash_state s;
        hash_init(hash, &s);
        hash_update(hash, &s, key, count);
        hash_final(hash, &s, block);
        OPENSSL_cleanse(&s, sizeof s);
    } else if (count > 0) {
        memcpy(block, key, count);
    }
    k->hash = hash;
    for (size_t i = 0; i < size; i++) pad[i] = block[i] ^ 0x36;
    hash_init(hash, &k->inner);
    hash_update(hash, &k->inner, pad, size);
    for (size_t i = 0; i < size; i++) pad[i] = block[i] ^ 0x5c;
    hash_init(hash, &k->outer);
    hash_update(hash, &k->outer, pad, size);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    return k;
}

void dbcrypt_hmac_key_free(dbcrypt_hmac_key *key) {
    if (key != NULL) OPENSSL_clear_free(key, sizeof *key);
}

void dbcrypt_hmac(const dbcrypt_hmac_key *key, const uint8_t *data, size_t count,
                  const uint8_t *more, size_t moreCount, uint8_t *out) {
    uint8_t inner[DBCRYPT_MAX_DIGEST_SIZE];
    hash_state s = key->inner;
    hash_update(key->hash, &s, data, count);
    hash_update(key->hash, &s, more, moreCount);
    hash_final(key->hash, &s, inner);
    s = key->outer;
    hash_update(key->hash, &s, inner, dbcrypt_hash_size(key->hash));
    hash_final(key->hash, &s, out);
    OPENSSL_cleanse(&s, sizeof s);
    OPENSSL_cleanse(inner, sizeof inner);
}

// MARK: - AES-256-CBC

struct dbcrypt_cbc_key {
    EVP_CIPHER_CTX *decrypt;
    EVP_CIPHER_CTX *encrypt;
};

void dbcrypt_cbc_key_free(dbcrypt_cbc_key *key) {
    if (key == NULL) return;
    EVP_CIPHER_CTX_free(key->decrypt);  // OpenSSL wipes the schedules
    EVP_CIPHER_CTX_free(key->encrypt);
    OPENSSL_free(key);
}

dbcrypt_cbc_key *dbcrypt_cbc_key_new(const uint8_t key[32]) {
    dbcrypt_cbc_key *k = OPENSSL_zalloc(sizeof *k);
    if (k == NULL) return NULL;
    k->decrypt = EVP_CIPHER_CTX_new();
    k->encrypt = EVP_CIPHER_CTX_new();
    if (k->decrypt == NULL || k->encrypt == NULL
        || EVP_DecryptInit_ex(k->decrypt, EVP_aes_256_cbc(), NULL, key, NULL) != 1
        || EVP_EncryptInit_ex(k->encrypt, EVP_aes_256_cbc(), NULL, key, NULL) != 1) {
        dbcrypt_cbc_key_free(k);
        return NULL;
    }
    // Pages are whole blocks. The setting survives the IV-only re-initialisations below.
    EVP_CIPHER_CTX_set_padding(k->decrypt, 0);
    EVP_CIPHER_CTX_set_padding(k->encrypt, 0);
    return k;
}

int dbcrypt_cbc(dbcrypt_cbc_key *key, int encrypt, const uint8_t iv[16],
                const uint8_t *in, uint8_t *out, size_t count) {
    EVP_CIPHER_CTX *ctx = encrypt ? key->encrypt : key->decrypt;
    int written = 0;
    // A NULL cipher and key keep the schedule; only the IV is new.
    int ok = count % 16 == 0 && count <= INT_MAX && EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) == 1
        && (count == 0 || (EVP_CipherUpdate(ctx, out, &written, in, (int)count) == 1 && written == (int)count));
    if (!ok && count > 0) OPENSSL_cleanse(out, count);
    return ok;
}

// MARK: - AES-256-GCM

struct dbcrypt_gcm_key {
    pthread_mutex_t lock;
    EVP_CIPHER_CTX *encrypt;
    EVP_CIPHER_CTX *decrypt;
};

dbcrypt_gcm_key *dbcrypt_gcm_key_new(const uint8_t key[32]) {
    dbcrypt_gcm_key *k = OPENSSL_zalloc(sizeof *k);
    if (k == NULL) return NULL;
    k->encrypt = EVP_CIPHER_CTX_new();
    k->decrypt = EVP_CIPHER_CTX_new();
    if (k->encrypt == NULL || k->decrypt == NULL
        || EVP_EncryptInit_ex(k->encrypt, EVP_aes_256_gcm(), NULL, key, NULL) != 1
        || EVP_DecryptInit_ex(k->decrypt, EVP_aes_256_gcm(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(k->encrypt);
        EVP_CIPHER_CTX_free(k->decrypt);
        OPENSSL_free(k);
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
    OPENSSL_free(key);
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
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, DBCRYPT_GCM_TAG_SIZE, tag) == 1;
    pthread_mutex_unlock(&key->lock);
    return ok;
}

int dbcrypt_gcm_open(dbcrypt_gcm_key *key, const uint8_t nonce[12],
                     const uint8_t *ad1, size_t ad1Count, const uint8_t *ad2, size_t ad2Count,
                     const uint8_t *ciphertext, size_t count, const uint8_t tag[16], uint8_t *plaintext) {
    int written = 0, ok;
    uint8_t expected[DBCRYPT_GCM_TAG_SIZE], none[16];
    memcpy(expected, tag, sizeof expected);
    pthread_mutex_lock(&key->lock);
    EVP_CIPHER_CTX *ctx = key->decrypt;
    ok = EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1
        && add_ad(ctx, 0, ad1, ad1Count) && add_ad(ctx, 0, ad2, ad2Count)
        && transform(ctx, 0, ciphertext, count, plaintext)
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, DBCRYPT_GCM_TAG_SIZE, expected) == 1
        && EVP_DecryptFinal_ex(ctx, none, &written) == 1 && written == 0;
    pthread_mutex_unlock(&key->lock);
    if (!ok && count > 0) OPENSSL_cleanse(plaintext, count);
    return ok;
}

// MARK: - AES-256-CTR

struct dbcrypt_ctr_key {
    pthread_mutex_t lock;
    EVP_CIPHER_CTX *ctx;
};

dbcrypt_ctr_key *dbcrypt_ctr_key_new(const uint8_t key[32]) {
    dbcrypt_ctr_key *k = OPENSSL_zalloc(sizeof *k);
    if (k == NULL) return NULL;
    k->ctx = EVP_CIPHER_CTX_new();
    if (k->ctx == NULL || EVP_EncryptInit_ex(k->ctx, EVP_aes_256_ctr(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(k->ctx);
        OPENSSL_free(k);
        return NULL;
    }
    pthread_mutex_init(&k->lock, NULL);
    return k;
}

void dbcrypt_ctr_key_free(dbcrypt_ctr_key *key) {
    if (key == NULL) return;
    EVP_CIPHER_CTX_free(key->ctx);
    pthread_mutex_destroy(&key->lock);
    OPENSSL_free(key);
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

// MARK: - Comparing and wiping

int dbcrypt_equal(const void *a, const void *b, size_t count) {
    return CRYPTO_memcmp(a, b, count) == 0;
}

void dbcrypt_wipe(void *bytes, size_t count) {
    if (bytes != NULL && count > 0) OPENSSL_cleanse(bytes, count);
}
