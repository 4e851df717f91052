// TwoBits' own C over SQLite (libsqlite3-dev): bindings with SQLITE_STATIC, a macro Swift does not import.
// The definitions are in CSQLiteShims.c, compiled with -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_CSQLITE_SHIMS_H
#define TWOBITS_CSQLITE_SHIMS_H
#include <sqlite3.h>

/// SQLITE_STATIC (a macro Swift does not import): SQLite reads the caller's bytes, uncopied, until the
/// statement is reset and its bindings cleared; the caller keeps them alive until then
/// (`SQLiteConnection.withBindings`).
int twobits_sqlite_bind_text_lent(sqlite3_stmt *stmt, int index, const char *text, int len);
int twobits_sqlite_bind_blob_lent(sqlite3_stmt *stmt, int index, const void *data, int len);
#endif
