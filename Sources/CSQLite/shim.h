// Debian's SQLite header (libsqlite3-dev), as one module: includes only. TwoBits' own C over SQLite is
// Sources/CSQLiteShims.
#ifndef TWOBITS_CSQLITE_SHIM_H
#define TWOBITS_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
