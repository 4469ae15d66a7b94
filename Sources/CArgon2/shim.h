// Debian's libargon2-dev (the reference implementation of RFC 9106), or Homebrew's argon2.
#include <argon2.h>
