// libedit's readline interface (Debian's libedit-dev): line editing,
// history kept in memory, completion. Its header needs stdio.h first.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <editline/readline.h>

static char *dbcrypt_editline_no_default_completion(const char *text, int state) {
    (void)text; (void)state;
    return 0;
}

// Sets readline's globals (Swift 6 does not write C globals): this
// program's name for ~/.editrc, and `complete` as the completion function,
// with no fall back to file names.
static void dbcrypt_editline_count_keys(void);
static inline void dbcrypt_editline_setup(rl_completion_func_t *complete) {
    rl_readline_name = "dbcrypt";
    rl_attempted_completion_function = complete;
    rl_completion_entry_function = dbcrypt_editline_no_default_completion;
    dbcrypt_editline_count_keys();
    rl_initialize();
}

// Whether a key was pressed since the prompt: libedit empties its line when
// a signal ends a read, so what Ctrl-C dropped is known only from the keys.
static inline int *dbcrypt_editline_keys(void) {
    static int keys;
    return &keys;
}

// Set by the shell's SIGINT handler: a read it ended gives up the line;
// one that another signal ended (a resized terminal, SIGCONT) reads on.
static inline volatile sig_atomic_t *dbcrypt_editline_interrupted(void) {
    static volatile sig_atomic_t interrupted;
    return &interrupted;
}

static inline void dbcrypt_editline_note_interrupt(void) { *dbcrypt_editline_interrupted() = 1; }

static int dbcrypt_editline_getc(FILE *stream) {
    unsigned char byte;
    for (;;) {
        ssize_t count = read(fileno(stream), &byte, 1);
        if (count == 1) break;
        if (count < 0 && errno == EINTR && !*dbcrypt_editline_interrupted()) continue;
        return EOF;
    }
    (*dbcrypt_editline_keys())++;
    return byte;
}

// Reads keys through dbcrypt_editline_getc.
static inline void dbcrypt_editline_count_keys(void) {
    rl_getc_function = dbcrypt_editline_getc;
}

// Starts counting keys again and forgets a Ctrl-C (before a prompt), or
// returns the count.
static inline void dbcrypt_editline_reset_keys(void) {
    *dbcrypt_editline_keys() = 0;
    *dbcrypt_editline_interrupted() = 0;
}
static inline int dbcrypt_editline_keys_pressed(void) { return *dbcrypt_editline_keys(); }
