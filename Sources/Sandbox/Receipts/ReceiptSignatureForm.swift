/// How the sandbox signs a receipt's payload.
public enum ReceiptSignatureForm: Sendable, CaseIterable {
    /// As Apple's receipts since late 2020: no signed attributes, the signature over the payload.
    case plain
    /// RFC 5652's form: content type and message digest attributes, the signature over them.
    case signedAttributes
    /// Apple's September 2020 form: the same attributes, but the signature over the payload itself.
    case signedAttributesOverPayload
}
