#define _GNU_SOURCE
#include "CPrimitives.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/random.h>
#endif

#if defined(__linux__) && defined(MADV_WIPEONFORK)

// One page: how many bytes of `bytes` are still unused, then the bytes. A
// forked child finds the page zeroed, so `unused` is 0 and it draws anew.
struct pool {
    size_t unused;
    uint8_t bytes[4096 - sizeof(size_t)];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *page;
static int unbuffered;  // MADV_WIPEONFORK refused (a kernel before 4.14)

static int system_random(uint8_t *out, size_t count) {
    while (count > 0) {
        ssize_t got = getrandom(out, count, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return 0;
        }
        out += got;
        count -= (size_t)got;
    }
    return 1;
}

static int make_page(void) {
    void *p = mmap(NULL, sizeof(struct pool), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    if (madvise(p, sizeof(struct pool), MADV_WIPEONFORK) != 0) {
        munmap(p, sizeof(struct pool));
        return 0;
    }
    page = p;
    return 1;
}

int dbcrypt_random_bytes(uint8_t *out, size_t count) {
    // More than a buffer's worth at once (never asked by SQLCipher or the
    // sealed values) goes to the system directly.
    if (count > sizeof page->bytes) return system_random(out, count);
    int ok = 1;
    pthread_mutex_lock(&lock);
    if (page == NULL && !unbuffered && !make_page()) unbuffered = 1;
    if (unbuffered) {
        ok = system_random(out, count);
    } else {
        if (page->unused < count) {
            ok = system_random(page->bytes, sizeof page->bytes);
            page->unused = ok ? sizeof page->bytes : 0;
        }
        if (ok) {
            uint8_t *next = page->bytes + sizeof page->bytes - page->unused;
            memcpy(out, next, count);
            memset(next, 0, count);
            page->unused -= count;
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

#else

#include <stdlib.h>

// macOS and the BSDs: arc4random_buf is a user-space generator that is safe
// across fork. Elsewhere, OpenSSL's.
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__)
int dbcrypt_random_bytes(uint8_t *out, size_t count) {
    arc4random_buf(out, count);
    return 1;
}
#else
#include <openssl/rand.h>
int dbcrypt_random_bytes(uint8_t *out, size_t count) { return count <= INT_MAX && RAND_bytes(out, (int)count) == 1; }
#endif

#endif
