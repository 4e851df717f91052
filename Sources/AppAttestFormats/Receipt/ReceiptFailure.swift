/// Why a receipt was refused: the step that found it and a detail for logs and support.
public struct ReceiptFailure: Error, Equatable, CustomStringConvertible, Sendable {
    public let step: ReceiptStep
    public let detail: String

    public init(at step: ReceiptStep, _ detail: String) {
        self.step = step
        self.detail = detail
    }

    public var description: String { "receipt refused at step \(step.rawValue): \(detail)" }
}
