// DBCrypt's crypto provider for SQLCipher 3.4.x: see CCipherProvider.h.
//
// How SQLCipher 3.4.1 uses a provider, and what this file relies on:
// - Keying a connection (sqlite3_key or ATTACH ... KEY) copies the registered
//   provider table into the new codec's read and write contexts and calls
//   ctx_init for each, on the keying thread. The mode (SHA-1 or SHA-512) is
//   fixed there, from a thread-local choice, so that SQLCipher reads the right
//   HMAC size before it computes the page reserve: 16 bytes of IV plus the
//   HMAC, rounded up to 16 (48 for SHA-1, 80 for SHA-512).
// - SQLCipher ignores the return codes of hmac and cipher. A SHA-512 HMAC
//   with a SHA-1 sized reserve would write 16 bytes past the page buffer, so
//   both functions check the page layout first and, when it does not fit,
//   write nothing out of bounds and poison the context: every later page
//   comes out as zeros and fails SQLCipher's checks, an error, not corruption.
// - ctx_copy copies the mode only, never OpenSSL context pointers (each
//   context owns its own); ctx_cmp returns 1 when equal.
// - get_provider_name, get_provider_version and fips_status receive
//   SQLCipher's cipher context, not ours: they must not look at it.
#include "CCipherProvider.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
// The low-level SHA functions are deprecated in OpenSSL 3 but stay its
// fastest path: a digest state is a plain struct, copied for each page
// instead of the allocating EVP_MD_CTX_copy_ex.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

// The provider table of SQLCipher 3.4.x (src/sqlcipher.h, not installed by Debian).
typedef struct {
    int (*activate)(void *ctx);
    int (*deactivate)(void *ctx);
    const char *(*get_provider_name)(void *ctx);
    int (*add_random)(void *ctx, void *buffer, int length);
    int (*random)(void *ctx, void *buffer, int length);
    int (*hmac)(void *ctx, unsigned char *hmac_key, int key_sz, unsigned char *in, int in_sz,
                unsigned char *in2, int in2_sz, unsigned char *out);
    int (*kdf)(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz,
               int workfactor, int key_sz, unsigned char *key);
    int (*cipher)(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv,
                  unsigned char *in, int in_sz, unsigned char *out);
    int (*set_cipher)(void *ctx, const char *cipher_name);
    const char *(*get_cipher)(void *ctx);
    int (*get_key_sz)(void *ctx);
    int (*get_iv_sz)(void *ctx);
    int (*get_block_sz)(void *ctx);
    int (*get_hmac_sz)(void *ctx);
    int (*ctx_copy)(void *target_ctx, void *source_ctx);
    int (*ctx_cmp)(void *c1, void *c2);
    int (*ctx_init)(void **ctx);
    int (*ctx_free)(void **ctx);
    int (*fips_status)(void *ctx);
    const char *(*get_provider_version)(void *ctx);
} sqlcipher_provider;

// SQLCipher 3.4's functions for registering a provider, looked up when the
// provider is installed, so that the same code links against any version:
// SQLCipher 4 lacks sqlcipher_activate, and its sqlcipher_register_provider
// takes another table. DBCrypt installs this provider only when
// `PRAGMA cipher_version` says 3.4.x (CipherInfo's probe).
typedef void *(*sqlcipher_malloc_fn)(int size);
typedef int (*sqlcipher_register_provider_fn)(sqlcipher_provider *provider);
typedef void (*sqlcipher_activate_fn)(void);

enum { OK = 0, ERROR = 1, NOMEM = 7 };
enum { KEY_SIZE = 32, IV_SIZE = 16, BLOCK_SIZE = 16, MAX_HMAC_SIZE = 64 };

// Fetched once at install, read-only afterwards, shared by every context.
static EVP_CIPHER *aes256cbc;
static EVP_MD *sha1;
static EVP_MD *sha512;
static char version_text[128];

static _Thread_local int selected_mode = DBCRYPT_MODE_DEFAULT;

// A SHA-1 or SHA-512 digest state, by the mode.
typedef union { SHA_CTX sha1; SHA512_CTX sha512; } digest_state;

typedef struct {
    int mode;
    int poisoned;
    // One cipher context per direction, keyed once and re-keyed only when the key changes.
    EVP_CIPHER_CTX *cipher[2];
    unsigned char cipher_key[2][KEY_SIZE];
    int cipher_keyed[2];
    // HMAC as two digest states (key XOR ipad, key XOR opad) computed once per key.
    digest_state inner, outer;
    unsigned char hmac_key[KEY_SIZE];
    int hmac_keyed;
} context;

static const EVP_MD *digest(const context *c) { return c->mode == DBCRYPT_MODE_SHA512 ? sha512 : sha1; }

static int hmac_size(const context *c) { return c->mode == DBCRYPT_MODE_SHA512 ? 64 : 20; }

// The page size a buffer of `size` bytes belongs to: the next power of two
// above it (the reserve is at least 16 bytes, and pages are 512 to 65536).
static int page_size_above(int size) {
    int page = 512;
    while (page <= size && page < 65536) page <<= 1;
    return page;
}

static void forget_keys(context *c) {
    OPENSSL_cleanse(c->cipher_key, sizeof c->cipher_key);
    OPENSSL_cleanse(c->hmac_key, sizeof c->hmac_key);
    c->cipher_keyed[0] = c->cipher_keyed[1] = 0;
    c->hmac_keyed = 0;
}

// MARK: - The provider's functions

static int activate(void *ctx) { (void)ctx; return OK; }
static int deactivate(void *ctx) { (void)ctx; return OK; }
static const char *get_provider_name(void *ctx) { (void)ctx; return dbcrypt_provider_name(); }
static const char *get_provider_version(void *ctx) { (void)ctx; return version_text; }
static int fips_status(void *ctx) { (void)ctx; return 0; }

static int add_random(void *ctx, void *buffer, int length) {
    (void)ctx;
    RAND_add(buffer, length, 0);
    return OK;
}

static int random_bytes(void *ctx, void *buffer, int length) {
    (void)ctx;
    return length >= 0 && dbcrypt_random_bytes(buffer, (size_t)length) ? OK : ERROR;
}

/// Key derivations of more than 2 rounds (SQLCipher's HMAC key takes 2), for tests.
static _Atomic long key_derivations;

long dbcrypt_provider_key_derivations(void) { return key_derivations; }

static int kdf(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz,
               int workfactor, int key_sz, unsigned char *key) {
    context *c = ctx;
    if (workfactor > 2) key_derivations++;
    return PKCS5_PBKDF2_HMAC((const char *)pass, pass_sz, salt, salt_sz, workfactor, digest(c), key_sz, key) == 1
        ? OK : ERROR;
}

static void digest_init(const context *c, void *state) {
    if (c->mode == DBCRYPT_MODE_SHA512) SHA512_Init(state); else SHA1_Init(state);
}

static void digest_update(const context *c, void *state, const void *data, size_t size) {
    if (c->mode == DBCRYPT_MODE_SHA512) SHA512_Update(state, data, size); else SHA1_Update(state, data, size);
}

static void digest_final(const context *c, void *state, unsigned char *out) {
    if (c->mode == DBCRYPT_MODE_SHA512) SHA512_Final(out, state); else SHA1_Final(out, state);
}

static int set_hmac_key(context *c, const unsigned char *key, int key_sz) {
    int block = c->mode == DBCRYPT_MODE_SHA512 ? SHA512_CBLOCK : SHA_CBLOCK;
    unsigned char pad[SHA512_CBLOCK];
    if (key_sz > KEY_SIZE) return ERROR;
    memset(pad, 0x36, block);
    for (int i = 0; i < key_sz; i++) pad[i] ^= key[i];
    digest_init(c, &c->inner);
    digest_update(c, &c->inner, pad, block);
    memset(pad, 0x5c, block);
    for (int i = 0; i < key_sz; i++) pad[i] ^= key[i];
    digest_init(c, &c->outer);
    digest_update(c, &c->outer, pad, block);
    OPENSSL_cleanse(pad, sizeof pad);
    memcpy(c->hmac_key, key, key_sz);
    c->hmac_keyed = key_sz;
    return OK;
}

static int hmac(void *ctx, unsigned char *key, int key_sz, unsigned char *in, int in_sz,
                unsigned char *in2, int in2_sz, unsigned char *out) {
    context *c = ctx;
    int size = hmac_size(c);
    // `in` is the page's ciphertext and IV; the HMAC goes right after it, and
    // must end within the page.
    if (c->poisoned || page_size_above(in_sz) - in_sz < size) {
        c->poisoned = 1;
        return ERROR;
    }
    if (c->hmac_keyed != key_sz || CRYPTO_memcmp(c->hmac_key, key, key_sz) != 0) {
        if (set_hmac_key(c, key, key_sz) != OK) return ERROR;
    }
    unsigned char inner_hash[MAX_HMAC_SIZE];
    digest_state work = c->inner;
    digest_update(c, &work, in, in_sz);
    digest_update(c, &work, in2, in2_sz);
    digest_final(c, &work, inner_hash);
    work = c->outer;
    digest_update(c, &work, inner_hash, size);
    digest_final(c, &work, out);
    OPENSSL_cleanse(&work, sizeof work);
    return OK;
}

static int cipher(void *ctx, int encrypt, unsigned char *key, int key_sz, unsigned char *iv,
                  unsigned char *in, int in_sz, unsigned char *out) {
    context *c = ctx;
    // `in_sz` is the page size less its reserve. A reserve that holds an IV
    // and part of an HMAC means an HMAC layout too small for this mode.
    int reserve = page_size_above(in_sz) - in_sz;
    if (c->poisoned || key_sz != KEY_SIZE || in_sz % BLOCK_SIZE != 0
        || (reserve > IV_SIZE && reserve < IV_SIZE + hmac_size(c))) {
        c->poisoned = 1;
        memset(out, 0, in_sz);
        return ERROR;
    }
    int direction = encrypt ? 1 : 0;
    EVP_CIPHER_CTX *e = c->cipher[direction];
    int ok;
    if (!c->cipher_keyed[direction] || CRYPTO_memcmp(c->cipher_key[direction], key, KEY_SIZE) != 0) {
        // Pages are whole blocks: no padding. The setting survives the IV-only
        // re-initialisations below.
        ok = EVP_CipherInit_ex2(e, aes256cbc, key, iv, direction, NULL) && EVP_CIPHER_CTX_set_padding(e, 0);
        if (ok) {
            memcpy(c->cipher_key[direction], key, KEY_SIZE);
            c->cipher_keyed[direction] = 1;
        }
    } else {
        ok = EVP_CipherInit_ex2(e, NULL, NULL, iv, direction, NULL);
    }
    int written = 0;
    ok = ok && EVP_CipherUpdate(e, out, &written, in, in_sz);
    if (!ok || written != in_sz) {
        memset(out, 0, in_sz);
        return ERROR;
    }
    return OK;
}

static int set_cipher(void *ctx, const char *name) {
    context *c = ctx;
    char lower[40];
    size_t n = strlen(name);
    if (n >= sizeof lower) return ERROR;
    for (size_t i = 0; i <= n; i++) lower[i] = (char)tolower((unsigned char)name[i]);
    // The plain name keeps the mode; a qualified name switches it, after which
    // `PRAGMA cipher_use_hmac = ON` must recompute the reserve.
    if (strcmp(lower, "aes-256-cbc") == 0) return OK;
    if (strcmp(lower, "aes-256-cbc-hmac-sha1") == 0) { c->mode = DBCRYPT_MODE_SHA1; forget_keys(c); return OK; }
    if (strcmp(lower, "aes-256-cbc-hmac-sha512") == 0) { c->mode = DBCRYPT_MODE_SHA512; forget_keys(c); return OK; }
    return ERROR;
}

static const char *get_cipher(void *ctx) {
    context *c = ctx;
    return c->mode == DBCRYPT_MODE_SHA512 ? "AES-256-CBC-HMAC-SHA512" : "AES-256-CBC";
}

static int get_key_sz(void *ctx) { (void)ctx; return KEY_SIZE; }
static int get_iv_sz(void *ctx) { (void)ctx; return IV_SIZE; }
static int get_block_sz(void *ctx) { (void)ctx; return BLOCK_SIZE; }
static int get_hmac_sz(void *ctx) { return hmac_size(ctx); }

static int ctx_copy(void *target, void *source) {
    context *t = target;
    const context *s = source;
    t->mode = s->mode;
    t->poisoned = s->poisoned;
    forget_keys(t);
    return OK;
}

static int ctx_cmp(void *c1, void *c2) {
    return ((context *)c1)->mode == ((context *)c2)->mode;
}

static int ctx_free(void **ctx) {
    context *c = *ctx;
    if (c == NULL) return OK;
    EVP_CIPHER_CTX_free(c->cipher[0]);
    EVP_CIPHER_CTX_free(c->cipher[1]);
    OPENSSL_clear_free(c, sizeof *c);
    *ctx = NULL;
    return OK;
}

static int ctx_init(void **ctx) {
    context *c = OPENSSL_zalloc(sizeof *c);
    *ctx = c;
    if (c == NULL) return NOMEM;
    c->mode = selected_mode == DBCRYPT_MODE_SHA512 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1;
    c->cipher[0] = EVP_CIPHER_CTX_new();
    c->cipher[1] = EVP_CIPHER_CTX_new();
    if (!c->cipher[0] || !c->cipher[1]) {
        ctx_free(ctx);
        return NOMEM;
    }
    return OK;
}

// MARK: - Installing

const char *dbcrypt_provider_name(void) { return "dbcrypt-openssl"; }

void dbcrypt_provider_select_mode(int mode) { selected_mode = mode; }

// The algorithms, fetched from OpenSSL once per process: by the install on
// SQLCipher 3.4.x, by the first key derivation on any version.
static pthread_once_t algorithms_fetched = PTHREAD_ONCE_INIT;
static void fetch(void) {
    aes256cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
}
static int fetch_algorithms(void) {
    pthread_once(&algorithms_fetched, fetch);
    return aes256cbc && sha1 && sha512 ? OK : ERROR;
}

int dbcrypt_provider_derive_key(const void *pass, int pass_sz, const unsigned char *salt, int salt_sz,
                                int iterations, int mode, unsigned char *key) {
    if (fetch_algorithms() != OK) return ERROR;
    context c = { .mode = mode == DBCRYPT_MODE_SHA512 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1 };
    return kdf(&c, pass, pass_sz, (unsigned char *)salt, salt_sz, iterations, KEY_SIZE, key);
}

int dbcrypt_provider_install(void) {
    static int installed = 0;
    if (installed) return OK;
    if (fetch_algorithms() != OK) return ERROR;
    sqlcipher_activate_fn sqlcipher_activate = (sqlcipher_activate_fn)dlsym(RTLD_DEFAULT, "sqlcipher_activate");
    sqlcipher_malloc_fn sqlcipher_malloc = (sqlcipher_malloc_fn)dlsym(RTLD_DEFAULT, "sqlcipher_malloc");
    sqlcipher_register_provider_fn sqlcipher_register_provider =
        (sqlcipher_register_provider_fn)dlsym(RTLD_DEFAULT, "sqlcipher_register_provider");
    if (!sqlcipher_activate || !sqlcipher_malloc || !sqlcipher_register_provider) return ERROR;
    strncpy(version_text, OpenSSL_version(OPENSSL_VERSION), sizeof version_text - 1);

    // Activating once, and never deactivating, keeps SQLCipher from freeing
    // the registered provider when the last keyed connection closes.
    sqlcipher_activate();
    sqlcipher_provider *p = sqlcipher_malloc(sizeof *p);
    if (p == NULL) return NOMEM;
    memset(p, 0, sizeof *p);
    p->activate = activate;
    p->deactivate = deactivate;
    p->get_provider_name = get_provider_name;
    p->add_random = add_random;
    p->random = random_bytes;
    p->hmac = hmac;
    p->kdf = kdf;
    p->cipher = cipher;
    p->set_cipher = set_cipher;
    p->get_cipher = get_cipher;
    p->get_key_sz = get_key_sz;
    p->get_iv_sz = get_iv_sz;
    p->get_block_sz = get_block_sz;
    p->get_hmac_sz = get_hmac_sz;
    p->ctx_copy = ctx_copy;
    p->ctx_cmp = ctx_cmp;
    p->ctx_init = ctx_init;
    p->ctx_free = ctx_free;
    p->fips_status = fips_status;
    p->get_provider_version = get_provider_version;
    int rc = sqlcipher_register_provider(p);
    if (rc == OK) installed = 1;
    return rc;
}
