import Foundation

/// The check that stops web pages: any page a browser shows can send a "simple" cross-origin
/// `POST` (e.g. `text/plain` JSON) to 127.0.0.1 without a CORS preflight, and the `Host` check
/// does not see it (the browser names 127.0.0.1 as `Host`). Browsers mark such requests, so they
/// are refused with 403 before anything is routed, recorded or a fault consumed: an `Origin` that
/// is not a loopback origin, or `Sec-Fetch-Site: cross-site`. Requests without those headers
/// (the SDK, curl) are not affected.
enum EmulatorOriginCheck {
    /// Why the request is refused, or `nil` when it may be served.
    static func refusal(_ fields: [ParsedHTTPRequest.Field]) -> String? {
        for field in fields {
            if field.name.caseInsensitiveCompare("Origin") == .orderedSame && !isLoopbackOrigin(field.value) {
                return "requests from a web page of another origin are refused: Origin must be http://127.0.0.1, "
                    + "http://localhost or http://[::1] (any port)"
            }
            if field.name.caseInsensitiveCompare("Sec-Fetch-Site") == .orderedSame
                && field.value.trimmingCharacters(in: .whitespaces).lowercased() == "cross-site" {
                return "cross-site browser requests are refused"
            }
        }
        return nil
    }

    /// Whether an `Origin` value is `http://` and a loopback host (``EmulatorHostCheck``) with an
    /// optional port, and nothing else (no path, no user info, no other scheme; `null` is not).
    static func isLoopbackOrigin(_ value: String) -> Bool {
        let scheme = "http://"
        guard value.count > scheme.count, value.prefix(scheme.count).lowercased() == scheme else { return false }
        let authority = value.dropFirst(scheme.count)
        guard !authority.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else { return false }
        return EmulatorHostCheck.isLoopback(String(authority))
    }
}
