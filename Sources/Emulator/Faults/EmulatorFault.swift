import Foundation

/// A misbehaviour the emulator plays instead of (or before) a normal answer, to test the client's
/// error handling. Inject with ``SegmentsEmulator/injectFault(_:on:count:)``.
public enum EmulatorFault: Hashable, Sendable {
    /// Answer with this status code and a small JSON error body, optionally with a `Retry-After`
    /// header value (seconds or an HTTP date, sent verbatim).
    case status(Int, retryAfter: String? = nil)
    /// Wait this many seconds, then answer normally. `stop()` cuts the wait short.
    case delay(TimeInterval)
    /// Close the connection without sending a byte.
    case dropConnection
    /// Send the headers and half the body of the normal answer, then reset the connection (RST).
    case dropMidBody
    /// Send headers whose `Content-Length` promises the whole normal body but only half of it,
    /// then close the connection in an orderly way (FIN).
    case truncatedBody
    /// Answer 200 with a body that is not JSON.
    case malformedJSON
    /// Answer 200 with JSON of the wrong shape: an array where an object is expected.
    case wrongShape
    /// Answer 200 with a JSON body of exactly this many bytes (a string value padded with `x`).
    case oversizedBody(bytes: Int)
    /// Answer 200 with exactly these bytes as a JSON body, whatever they are: a hostile server's
    /// answer, such as JSON in UTF-16 (Behaviour P7 in `Docs/Behaviour.md`).
    case body([UInt8])
    /// Answer with this redirect status (301, 302, 303, 307 or 308) and `Location: location`,
    /// without processing the request, as a hostile or misconfigured server might (Behaviour P6 in
    /// `Docs/Behaviour.md`).
    case redirect(Int, location: String)
}

extension EmulatorFault {
    /// Whether the fault answers in place of the endpoint: `.status` and `.redirect` do; every other
    /// fault lets the request be processed and garbles or delays only the answer.
    var answersWithoutProcessing: Bool {
        switch self {
        case .status, .redirect: true
        default: false
        }
    }

    /// Turns the normal answer into the faulty one.
    func apply(to normal: EmulatorHTTPResponse) -> EmulatorHTTPResponse {
        switch self {
        case .status(let code, let retryAfter):
            var response = EmulatorHTTPResponse.error(code, "injected status \(code)")
            if let retryAfter { response.headers.append(("Retry-After", retryAfter)) }
            return response
        case .redirect(let code, let location):
            var response = EmulatorHTTPResponse.error(code, "moved")
            response.headers.append(("Location", location))
            return response
        case .delay(let seconds):
            var response = normal
            response.delay = max(0, seconds)
            return response
        case .dropConnection:
            var response = normal
            response.delivery = .closeWithoutResponse
            return response
        case .dropMidBody:
            var response = normal
            response.delivery = .reset(bytes: normal.body.count / 2)
            return response
        case .truncatedBody:
            var response = normal
            if response.body.count < 2 { response.body = Array(#"{"success":true}"#.utf8) }
            response.delivery = .truncated(bytes: response.body.count / 2)
            return response
        case .malformedJSON:
            return .json(200, Array(#"{"discovery": [{"id": "a", "segmentation_id": "#.utf8))
        case .wrongShape:
            return .json(200, Array(#"[{"id":"a","segmentation_id":"g"}]"#.utf8))
        case .oversizedBody(let bytes):
            // `"xxx…"`: a valid JSON string of the requested total size (at least the two quotes).
            let size = max(2, bytes)
            var body = [UInt8](repeating: UInt8(ascii: "x"), count: size)
            body[0] = UInt8(ascii: "\"")
            body[size - 1] = UInt8(ascii: "\"")
            return .json(200, body)
        case .body(let bytes):
            return .json(200, bytes)
        }
    }
}
