/// How the app was distributed, as iOS 27 and later report it in `apple_validation_category_01`.
public struct ValidationCategory: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let platform = ValidationCategory(rawValue: 1)
    public static let testFlight = ValidationCategory(rawValue: 2)
    public static let development = ValidationCategory(rawValue: 3)
    public static let appStore = ValidationCategory(rawValue: 4)
    public static let enterprise = ValidationCategory(rawValue: 5)
    public static let developerID = ValidationCategory(rawValue: 6)
    public static let none = ValidationCategory(rawValue: 10)

    /// A stable name ("app_store", …), or "category_N" for values not known yet.
    public var name: String {
        switch rawValue {
        case 1: return "platform"
        case 2: return "testflight"
        case 3: return "development"
        case 4: return "app_store"
        case 5: return "enterprise"
        case 6: return "developer_id"
        case 10: return "none"
        default: return "category_\(rawValue)"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
