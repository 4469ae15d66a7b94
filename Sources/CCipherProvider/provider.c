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
#include "CPrimitives.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

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
enum { KEY_SIZE = DBCRYPT_AES_KEY_SIZE, IV_SIZE = DBCRYPT_AES_BLOCK_SIZE, BLOCK_SIZE = DBCRYPT_AES_BLOCK_SIZE };


static _Thread_local int selected_mode = DBCRYPT_MODE_DEFAULT;

// The keys are made on first use and again only when SQLCipher hands over
// another key (a rekey): a copy of each is kept to tell.
typedef struct {
    int mode;
    int poisoned;
    dbcrypt_cbc_key *cipher;
    unsigned char cipher_key[KEY_SIZE];
    dbcrypt_hmac_key *hmac;
    unsigned char hmac_key[KEY_SIZE];
    int hmac_key_sz;
} context;

static int hash(const context *c) { return c->mode == DBCRYPT_MODE_SHA512 ? DBCRYPT_SHA512 : DBCRYPT_SHA1; }

static int hmac_size(const context *c) { return (int)dbcrypt_hash_size(hash(c)); }

// The page size a buffer of `size` bytes belongs to: the next power of two
// above it (the reserve is at least 16 bytes, and pages are 512 to 65536).
static int page_size_above(int size) {
    int page = 512;
    while (page <= size && page < 65536) page <<= 1;
    return page;
}

static void forget_keys(context *c) {
    dbcrypt_cbc_key_free(c->cipher);
    dbcrypt_hmac_key_free(c->hmac);
    c->cipher = NULL;
    c->hmac = NULL;
    dbcrypt_wipe(c->cipher_key, sizeof c->cipher_key);
    dbcrypt_wipe(c->hmac_key, sizeof c->hmac_key);
    c->hmac_key_sz = 0;
}

// MARK: - The provider's functions

static int activate(void *ctx) { (void)ctx; return OK; }
static int deactivate(void *ctx) { (void)ctx; return OK; }
static const char *get_provider_name(void *ctx) { (void)ctx; return dbcrypt_provider_name(); }
static const char *get_provider_version(void *ctx) { (void)ctx; return dbcrypt_primitives_library(); }
static int fips_status(void *ctx) { (void)ctx; return 0; }

// The system's generator needs no seeding from SQLCipher.
static int add_random(void *ctx, void *buffer, int length) {
    (void)ctx, (void)buffer, (void)length;
    return OK;
}

static int random_bytes(void *ctx, void *buffer, int length) {
    (void)ctx;
    return length >= 0 && dbcrypt_random_bytes(buffer, (size_t)length) ? OK : ERROR;
}

static int kdf(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz,
               int workfactor, int key_sz, unsigned char *key) {
    if (pass_sz < 0 || salt_sz < 0 || workfactor < 1 || key_sz < 0) return ERROR;
    return dbcrypt_pbkdf2(hash(ctx), pass, (size_t)pass_sz, salt, (size_t)salt_sz, (uint32_t)workfactor, key, (size_t)key_sz)
        ? OK : ERROR;
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
    if (key_sz < 0 || key_sz > KEY_SIZE || in_sz < 0 || in2_sz < 0) {
        c->poisoned = 1;
        memset(out, 0, (size_t)size);
        return ERROR;
    }
    if (c->hmac == NULL || c->hmac_key_sz != key_sz || !dbcrypt_equal(c->hmac_key, key, (size_t)key_sz)) {
        dbcrypt_hmac_key_free(c->hmac);
        c->hmac = dbcrypt_hmac_key_new(hash(c), key, (size_t)key_sz);
        if (c->hmac == NULL) {
            // No HMAC can be computed: every page from here on fails its check.
            c->poisoned = 1;
            memset(out, 0, (size_t)size);
            return NOMEM;
        }
        memcpy(c->hmac_key, key, (size_t)key_sz);
        c->hmac_key_sz = key_sz;
    }
    dbcrypt_hmac(c->hmac, in, (size_t)in_sz, in2, (size_t)in2_sz, out);
    return OK;
}

static int cipher(void *ctx, int encrypt, unsigned char *key, int key_sz, unsigned char *iv,
                  unsigned char *in, int in_sz, unsigned char *out) {
    context *c = ctx;
    // `in_sz` is the page size less its reserve. A reserve that holds an IV
    // and part of an HMAC means an HMAC layout too small for this mode.
    int reserve = page_size_above(in_sz) - in_sz;
    if (c->poisoned || key_sz != KEY_SIZE || in_sz < 0 || in_sz % BLOCK_SIZE != 0
        || (reserve > IV_SIZE && reserve < IV_SIZE + hmac_size(c))) {
        c->poisoned = 1;
        if (in_sz > 0) memset(out, 0, (size_t)in_sz);
        return ERROR;
    }
    if (c->cipher == NULL || !dbcrypt_equal(c->cipher_key, key, KEY_SIZE)) {
        dbcrypt_cbc_key_free(c->cipher);
        c->cipher = dbcrypt_cbc_key_new(key);
        if (c->cipher == NULL) {
            // Zeros would otherwise get a valid HMAC: poison, as for a bad layout.
            c->poisoned = 1;
            memset(out, 0, in_sz);
            return NOMEM;
        }
        memcpy(c->cipher_key, key, KEY_SIZE);
    }
    if (!dbcrypt_cbc(c->cipher, encrypt != 0, iv, in, out, (size_t)in_sz)) {
        c->poisoned = 1;
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
    forget_keys(c);
    dbcrypt_wipe(c, sizeof *c);
    free(c);
    *ctx = NULL;
    return OK;
}

static int ctx_init(void **ctx) {
    context *c = calloc(1, sizeof *c);
    *ctx = c;
    if (c == NULL) return NOMEM;
    c->mode = selected_mode == DBCRYPT_MODE_SHA512 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1;
    return OK;
}

// MARK: - Installing

const char *dbcrypt_provider_name(void) { return "dbcrypt-openssl"; }

void dbcrypt_provider_select_mode(int mode) { selected_mode = mode; }

int dbcrypt_provider_install(void) {
    static int installed = 0;
    if (installed) return OK;
    sqlcipher_activate_fn sqlcipher_activate = (sqlcipher_activate_fn)dlsym(RTLD_DEFAULT, "sqlcipher_activate");
    sqlcipher_malloc_fn sqlcipher_malloc = (sqlcipher_malloc_fn)dlsym(RTLD_DEFAULT, "sqlcipher_malloc");
    sqlcipher_register_provider_fn sqlcipher_register_provider =
        (sqlcipher_register_provider_fn)dlsym(RTLD_DEFAULT, "sqlcipher_register_provider");
    if (!sqlcipher_activate || !sqlcipher_malloc || !sqlcipher_register_provider) return ERROR;

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
