#ifndef TWOBITS_CSQLITE_SHIM_H
#define TWOBITS_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_STATIC (a macro Swift does not import): SQLite reads the caller's bytes, uncopied, until the
/// statement is reset and its bindings cleared; the caller keeps them alive until then
/// (`SQLiteConnection.withBindings`).
static inline int twobits_sqlite_bind_text_lent(sqlite3_stmt *stmt, int index, const char *text, int len) {
    return sqlite3_bind_text(stmt, index, text, len, SQLITE_STATIC);
}
static inline int twobits_sqlite_bind_blob_lent(sqlite3_stmt *stmt, int index, const void *data, int len) {
    return sqlite3_bind_blob(stmt, index, data, len, SQLITE_STATIC);
}
#endif
