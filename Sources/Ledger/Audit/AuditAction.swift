/// Every action the audit trail records, each string declared once (docs/policy.md, "The audit trail").
public enum AuditAction: String, Sendable, CaseIterable, Codable {
    case promotionClaim = "promotion.claim"
    case installRegister = "install.register"
    case ban
    case unban
    case banPending = "ban.pending"
    case unbanPending = "unban.pending"
    case banApplied = "ban.applied"
    case unbanApplied = "unban.applied"
    /// A pending ban or unban by install id withdrawn by an admin before it was applied.
    case pendingCancelled = "pending.cancel"
    case debugSecretCreate = "debug_secret.create"
    case debugSecretDelete = "debug_secret.delete"
    case keysGenerate = "keys.generate"
    case keysRotate = "keys.rotate"
    case keysPrune = "keys.prune"
    case keysActivated = "keys.activated"
    /// An App Attest key revoked by an admin: its further assertions are refused.
    case appAttestRevoke = "app_attest.revoke"
    /// A request proof refused although the key signed it (a body, method or path other than the request's, a
    /// replay, a ban, the risk policy): the reason and the key id, never the body or its digest.
    case appAttestProofRefused = "app_attest.proof_refused"

    /// A ban or unban ordered by install id, recorded when ordered.
    public static func pending(_ kind: PendingDeviceAction.Kind) -> AuditAction {
        kind == .ban ? .banPending : .unbanPending
    }

    /// A ban or unban ordered by install id, recorded when written to the device's bits.
    public static func applied(_ kind: PendingDeviceAction.Kind) -> AuditAction {
        kind == .ban ? .banApplied : .unbanApplied
    }
}
