import Foundation

/// One HTTP request, as the SDK hands it to a ``SegmentsTransport``.
///
/// A plain value: middleware changes a copy (adds a header, signs the body) and passes it on.
public struct SegmentsHTTPRequest: Sendable, Hashable {
    /// An HTTP method such as ``get`` or ``post``; any other token can be written `Method("PURGE")`.
    public struct Method: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The method token as sent, e.g. `GET`.
        public let rawValue: String

        /// A method with this token.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A method with this token.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// `GET`.
        public static let get = Method("GET")
        /// `POST`.
        public static let post = Method("POST")
        /// `PUT`.
        public static let put = Method("PUT")
        /// `PATCH`.
        public static let patch = Method("PATCH")
        /// `DELETE`.
        public static let delete = Method("DELETE")
        /// `HEAD`.
        public static let head = Method("HEAD")

        /// The method token.
        public var description: String { rawValue }
    }

    /// The method.
    public var method: Method
    /// The absolute URL, path and query already percent-encoded.
    public var url: URL
    /// The header fields; names compare case-insensitively.
    public var headers: SegmentsHTTPHeaders
    /// The body, or `nil` for none.
    public var body: Data?
    /// The longest the whole exchange may take, in seconds; `nil` leaves it to the transport's default.
    public var timeout: TimeInterval?

    /// Creates a request.
    public init(
        method: Method = .get, url: URL, headers: SegmentsHTTPHeaders = [:], body: Data? = nil,
        timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The URL's path, still percent-encoded (e.g. `/webxp/projects/a%2Fb/segments`).
    public var percentEncodedPath: String {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
    }

    /// The URL's path with percent-escapes decoded (e.g. `/webxp/projects/a/b/segments`).
    public var path: String {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.path ?? url.path
    }

    /// The decoded value of the first query item called `name`, or `nil`.
    public func queryValue(_ name: String) -> String? {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.first { $0.name == name }?.value
    }
}
