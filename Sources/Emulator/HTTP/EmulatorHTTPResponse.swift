import Foundation

/// An HTTP/1.1 response the emulator writes, plus how it is delivered (whole, or broken on purpose
/// by an injected fault).
struct EmulatorHTTPResponse: Sendable {
    /// How the bytes reach the client.
    enum Delivery: Sendable, Equatable {
        /// Status line, headers and the whole body.
        case complete
        /// Nothing: the connection is closed right away.
        case closeWithoutResponse
        /// Headers and the first `bytes` of the body, then an orderly close (FIN).
        case truncated(bytes: Int)
        /// Headers and the first `bytes` of the body, then an abortive close (RST).
        case reset(bytes: Int)
    }

    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var delivery: Delivery = .complete
    /// Seconds to wait before writing anything.
    var delay: TimeInterval = 0

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON answer with `Content-Type: application/json`.
    static func json(_ status: Int, _ body: [UInt8]) -> EmulatorHTTPResponse {
        EmulatorHTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A JSON answer of a string-keyed object, e.g. `{"success":true}` or `{"error":"…"}`.
    static func json(_ status: Int, object: [String: EmulatorJSON]) -> EmulatorHTTPResponse {
        json(status, EmulatorJSON.object(object).encodedBytes())
    }

    /// `{"error": message}` with the given status.
    static func error(_ status: Int, _ message: String) -> EmulatorHTTPResponse {
        json(status, object: ["error": .string(message)])
    }

    /// Whether the connection may stay open after this answer is written.
    var allowsKeepAlive: Bool { delivery == .complete }

    /// Status line, headers (with `Content-Length` and `Connection`) and the blank line.
    func head(keepAlive: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(for: status))\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "Content-Length: \(body.count)\r\n"
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The head and the whole body, as `.complete` delivery writes them.
    func wire(keepAlive: Bool) -> [UInt8] {
        head(keepAlive: keepAlive) + body
    }

    static func reason(for status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        case 507: return "Insufficient Storage"
        default: return "Status \(status)"
        }
    }
}
