import Foundation

/// One HTTP response, as a ``SegmentsTransport`` returns it: the status, the header fields and the
/// whole body.
public struct SegmentsHTTPResponse: Sendable, Hashable {
    /// The status code, e.g. `200`.
    public var status: Int
    /// The header fields; names compare case-insensitively (`headers["retry-after"]`).
    public var headers: SegmentsHTTPHeaders
    /// The body; empty when there is none.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: SegmentsHTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text` encoded as UTF-8, handy for fakes and middleware.
    public init(status: Int, headers: SegmentsHTTPHeaders = [:], text: String) {
        self.init(status: status, headers: headers, body: Data(text.utf8))
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200...299).contains(status) }
}
