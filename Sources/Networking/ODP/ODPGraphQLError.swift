/// An error the ODP GraphQL API reported in its `errors` array, kept as the
/// ``SegmentsError/underlying`` error of a failed fetch so apps can read the classification
/// (<doc:Behaviour#O4>).
public struct ODPGraphQLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `errors[0].message`, when present.
    public let message: String?
    /// `errors[0].extensions.code`, e.g. `INVALID_IDENTIFIER_EXCEPTION`.
    public let code: String?
    /// `errors[0].extensions.classification`, e.g. `DataFetchingException`.
    public let classification: String?

    /// Creates an error.
    public init(message: String?, code: String?, classification: String?) {
        self.message = message
        self.code = code
        self.classification = classification
    }

    /// The reason of the failure as Optimizely's SDK reports it: the classification, or
    /// `decode error` when there is none.
    public var reason: String { classification ?? "decode error" }

    /// Whether this is the "unknown or invalid user id" error, in its current form (code
    /// `INVALID_IDENTIFIER_EXCEPTION`) or its legacy form (classification `InvalidIdentifierException`).
    public var isInvalidIdentifier: Bool {
        code == "INVALID_IDENTIFIER_EXCEPTION" || classification == "InvalidIdentifierException"
    }

    /// The reason and the code; never the user id.
    public var description: String {
        "ODP GraphQL error (\(reason)\(code.map { ", code \($0)" } ?? ""))"
    }
}
