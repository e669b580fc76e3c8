import Foundation

/// One HTTP/1.x request as it came off the wire: request line, header fields and a
/// `Content-Length` body. The target is kept raw (still percent-encoded).
package struct ParsedHTTPRequest: Hashable, Sendable {
    /// One header field in arrival order; names keep the client's spelling.
    package struct Field: Hashable, Sendable {
        /// The field name as sent.
        package var name: String
        /// The field value without surrounding whitespace.
        package var value: String
    }

    /// The method token, e.g. `GET`.
    package var method: String
    /// The request target as sent, e.g. `/webxp/projects/t/segments?cookie=c`.
    package var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
    /// Header fields in arrival order.
    package var fields: [Field]
    /// The body (empty without `Content-Length`).
    package var body: [UInt8]

    /// The value of the first field called `name` (case-insensitive), or `nil`.
    package func header(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    package var keepsAlive: Bool {
        let tokens = (header("Connection") ?? "").lowercased()
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }
}
