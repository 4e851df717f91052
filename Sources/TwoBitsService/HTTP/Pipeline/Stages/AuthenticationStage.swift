import HTTPServer

/// The API key (400 when malformed, 401 when unknown) and the route's role (403); public routes pass without a key.
struct AuthenticationStage: RequestStage {
    let authenticator: ClientAuthenticator

    func admit(_ request: ServerRequest, _ context: inout RequestContext) throws(APIError) {
        let access = context.entry?.access ?? .anyClient
        if access == .public { return }
        if ClientAuthenticator.isMalformed(request.header("Authorization")) { throw .malformedAuthorization }
        guard let client = authenticator.authenticate(request.header("Authorization")) else { throw .unauthorized }
        if case .role(let role) = access, !client.roles.contains(role) {
            throw .forbidden("this route needs the \(role.rawValue) role; client \(client.name) has \(client.roles.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        context.client = client
    }
}
