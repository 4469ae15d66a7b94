// LevelDB's C API.
#include <leveldb/c.h>
