public import FoundationEssentials

extension ServerRequest {
    /// A request from a target as a client sends it (`/v1/x?a=1`), for `HTTPServer.respond(to:)`: the path is
    /// kept raw, the query decoded as the edge decodes it (the same refusals), header names lower-cased (the
    /// last value of a name wins, as at the edge).
    public init(method: String, target: String, headers: [(String, String)] = [], body: Data = Data(),
                maxQueryParameters: Int = 100) throws(HTTPRefusal) {
        let queryStart = target.firstIndex(of: "?")
        var query: [String: String] = [:]
        if let queryStart {
            switch QueryString.decode(target[target.index(after: queryStart)...], maxParameters: maxQueryParameters) {
            case .failure(let refusal): throw refusal
            case .success(let decoded): query = decoded
            }
        }
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[name.lowercased()] = value }
        self.init(method: method, path: String(target[..<(queryStart ?? target.endIndex)]), query: query, headers: fields, body: body)
    }
}
