// See include/CSQLiteShims.h for what each function does.
#include "CSQLiteShims.h"

int twobits_sqlite_bind_text_lent(sqlite3_stmt *stmt, int index, const char *text, int len) {
    return sqlite3_bind_text(stmt, index, text, len, SQLITE_STATIC);
}

int twobits_sqlite_bind_blob_lent(sqlite3_stmt *stmt, int index, const void *data, int len) {
    return sqlite3_bind_blob(stmt, index, data, len, SQLITE_STATIC);
}
