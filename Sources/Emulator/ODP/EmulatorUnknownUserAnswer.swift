/// How the GraphQL endpoint answers for a user it does not know (no fixed answer, no events).
public enum EmulatorUnknownUserAnswer: Hashable, Sendable {
    /// HTTP 200 with an error whose code is `INVALID_IDENTIFIER_EXCEPTION` (classification
    /// `DataFetchingException`), as ODP answers today. The default.
    case invalidIdentifier
    /// HTTP 200 with an error whose classification is `InvalidIdentifierException`, the legacy form.
    case legacyInvalidIdentifier
    /// HTTP 200 with `"customer": null` and no error.
    case nullCustomer
}
