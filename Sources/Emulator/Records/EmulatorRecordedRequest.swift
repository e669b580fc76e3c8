import Foundation

/// One request as the emulator received it, kept in the request log.
public struct EmulatorRecordedRequest: Hashable, Sendable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The path as sent, still percent-encoded, without the query.
    public var path: String
    /// The percent-decoded path segments, e.g. `["webxp", "projects", "token", "segments"]`.
    public var pathComponents: [String]
    /// The query as sent (still percent-encoded, without `?`), or `nil` when there was none.
    public var rawQuery: String?
    /// The percent-decoded query items; a repeated name keeps its first value.
    public var query: [String: String]
    /// Header fields by lower-cased name; repeated fields are joined with `", "`.
    public var headers: [String: String]
    /// The body bytes.
    public var body: Data
    /// When the request was complete.
    public var receivedAt: Date
    /// The endpoint it was routed to, or `nil` when no endpoint matched (404/405).
    public var route: EmulatorRoute?

    /// Creates a record.
    public init(method: String, path: String, pathComponents: [String], rawQuery: String?,
                query: [String: String], headers: [String: String], body: Data,
                receivedAt: Date, route: EmulatorRoute?) {
        self.method = method
        self.path = path
        self.pathComponents = pathComponents
        self.rawQuery = rawQuery
        self.query = query
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
        self.route = route
    }

    /// The value of a header field, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The body parsed as JSON, or `nil` when it is not JSON.
    public var jsonBody: EmulatorJSON? {
        try? EmulatorJSON(jsonData: body)
    }
}
