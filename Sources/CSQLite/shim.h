#ifndef TWOBITS_CSQLITE_SHIM_H
#define TWOBITS_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot express it.
static inline int twobits_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int len) {
    return sqlite3_bind_text(stmt, index, text, len, SQLITE_TRANSIENT);
}
static inline int twobits_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *data, int len) {
    return sqlite3_bind_blob(stmt, index, data, len, SQLITE_TRANSIENT);
}
#endif
