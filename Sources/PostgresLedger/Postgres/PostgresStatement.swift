/// One statement and its parameters, for `PostgresConnection.pipeline`.
struct PostgresStatement: Sendable {
    let sql: String
    let parameters: [PostgresValue]
}
