import Foundation

/// A request target split into its percent-decoded path segments and query items.
struct EmulatorRequestTarget: Sendable, Equatable {
    /// The path as sent (still encoded), without the query.
    var path: String
    /// The query as sent, without `?`.
    var rawQuery: String?
    /// Decoded path segments; a trailing `/` is ignored.
    var components: [String]
    /// Decoded query items; the first of a repeated name wins. `+` stays `+` (it is not a space here).
    var query: [String: String]

    /// Splits `target`; `nil` when it is not origin-form or absolute-form, or its escapes are broken.
    init?(_ target: String) {
        var target = Substring(target)
        if target.hasPrefix("http://") || target.hasPrefix("https://") {
            // Absolute form (proxies): drop scheme and authority.
            guard let scheme = target.range(of: "://") else { return nil }
            let afterScheme = target[scheme.upperBound...]
            target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        guard target.hasPrefix("/") else { return nil }
        let pathPart: Substring
        if let mark = target.firstIndex(of: "?") {
            pathPart = target[..<mark]
            rawQuery = String(target[target.index(after: mark)...])
        } else {
            pathPart = target
            rawQuery = nil
        }
        path = String(pathPart)
        var pieces = pathPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if pieces.last == "" { pieces.removeLast() }
        var components: [String] = []
        for piece in pieces {
            guard let decoded = String(piece).removingPercentEncoding else { return nil }
            components.append(decoded)
        }
        self.components = components
        var query: [String: String] = [:]
        for item in (rawQuery ?? "").split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = String(pair[0]).removingPercentEncoding,
                  let value = String(pair.count > 1 ? pair[1] : "").removingPercentEncoding else { return nil }
            if query[name] == nil { query[name] = value }
        }
        self.query = query
    }
}
