/// The forms a receipt's CMS signature has taken (Apple's since late 2020, RFC 5652's, Apple's of September
/// 2020): the sandbox signs in each, the verifier accepts each.
public enum ReceiptSignatureForm: Sendable, CaseIterable {
    /// As Apple's receipts since late 2020: no signed attributes, the signature over the payload.
    case plain
    /// RFC 5652's form: content type and message digest attributes, the signature over them.
    case signedAttributes
    /// Apple's September 2020 form: the same attributes, but the signature over the payload itself.
    case signedAttributesOverPayload
}
