import Foundation
import SegmentsDomain

/// Everything the ODP adapter needs to address and authorize its GraphQL requests: the API host the
/// query is sent to, the public key sent as `x-api-key`, and the request time-out
/// (<doc:Behaviour#ODP-audiences-query>).
///
/// ```swift
/// let odp = ODPConfiguration(apiKey: "W4WzcEs-ABgXorzY7h1LCQ", apiHost: "https://api.zaius.com")
/// try odp.validate()   // optional: fail early on a bad host or key
/// ```
///
/// Printing never shows the API key — `description`, `debugDescription`, `dump` and `Mirror` alike
/// (<doc:Behaviour#P4>).
public struct ODPConfiguration: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// `https://api.zaius.com`, the Optimizely Data Platform API host.
    public static let defaultAPIHost = "https://api.zaius.com"
    /// The default deadline of each request: 10 s.
    public static let defaultRequestTimeout: TimeInterval = 10
    /// The identifier fields every configuration allows: `vuid` and `fs_user_id`.
    public static let knownIdentifierFields: Set<AudienceIdentifier.Field> = [.vuid, .fsUserId]

    /// The project's public API key, sent as `x-api-key`.
    public var apiKey: String
    /// The API host; `/v3/graphql` is joined to it with exactly one `/`.
    public var apiHost: String
    /// The deadline of each request, in seconds: more than 0, at most 300 (<doc:Behaviour#P7>).
    public var requestTimeout: TimeInterval
    /// Whether a plain `http` host that is not loopback is allowed (<doc:Behaviour#P3>); `false` by
    /// default.
    public var allowsInsecureHTTP: Bool
    /// Identifier fields allowed besides `vuid` and `fs_user_id`; each must be a GraphQL name
    /// (`[_A-Za-z][_0-9A-Za-z]*`). No other name is ever put into the query text.
    public var additionalIdentifierFields: Set<String>

    /// Creates a configuration.
    public init(
        apiKey: String, apiHost: String = defaultAPIHost, requestTimeout: TimeInterval = defaultRequestTimeout,
        allowsInsecureHTTP: Bool = false, additionalIdentifierFields: Set<String> = []
    ) {
        self.apiKey = apiKey
        self.apiHost = apiHost
        self.requestTimeout = requestTimeout
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.additionalIdentifierFields = additionalIdentifierFields
    }

    /// Checks the settings without sending anything: a non-empty key without control characters
    /// such as CR or LF, a valid host (absolute, `https` unless allowed otherwise, without a user
    /// name or password), a time-out within `0 < t ≤ 300` s and valid additional
    /// field names.
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`, never crashes. The adapter checks the
    ///   same before every request, so calling this is optional.
    public func validate() throws {
        _ = try endpointURL()
    }

    /// Whether `field` may appear in the query text.
    public func allows(_ field: AudienceIdentifier.Field) -> Bool {
        Self.knownIdentifierFields.contains(field)
            || (additionalIdentifierFields.contains(field.rawValue) && ODPQuery.isName(field.rawValue))
    }

    /// The host and the time-out, without the key.
    public var description: String {
        "ODPConfiguration(apiHost: \(apiHost), apiKey: <redacted>, requestTimeout: \(requestTimeout))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Every setting, with the key as `<redacted>`.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "apiKey": "<redacted>", "apiHost": apiHost, "requestTimeout": requestTimeout,
                "allowsInsecureHTTP": allowsInsecureHTTP, "additionalIdentifierFields": additionalIdentifierFields,
            ], displayStyle: .struct)
    }

    /// `{apiHost}/v3/graphql`, after validating every setting.
    func endpointURL() throws -> URL {
        guard !apiKey.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw SegmentsError(.invalidConfiguration, "The ODP API key is empty")
        }
        try HeaderValueRules.check(apiKey, "The ODP API key")
        try DurationRules.checkTimeout(requestTimeout, "The ODP request time-out")
        if let bad = additionalIdentifierFields.sorted().first(where: { !ODPQuery.isName($0) }) {
            throw SegmentsError(.invalidConfiguration, "'\(bad)' is not a valid GraphQL field name")
        }
        return try BaseURL(apiHost, allowsInsecureHTTP: allowsInsecureHTTP).appending(path: ["v3", "graphql"])
    }
}
