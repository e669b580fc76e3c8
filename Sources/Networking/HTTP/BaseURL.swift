import Foundation
import SegmentsDomain

/// A validated base URL that endpoint paths are joined to (WIRE.md: exactly one `/` between base
/// and path; path components and query values percent-encoded).
package struct BaseURL: Sendable, Hashable {
    private let components: URLComponents

    /// Validates `string`: an absolute `https` URL with a host (or `http` when `allowsInsecureHTTP`
    /// or the host is loopback, SPEC P3), without query or fragment. Surrounding white space is ignored.
    /// Error messages never repeat the URL, which could carry credentials (`user:password@`).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`, never crashes.
    package init(_ string: String, allowsInsecureHTTP: Bool = false) throws {
        let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw SegmentsError(.invalidConfiguration, "The base URL is not an absolute http(s) URL")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw SegmentsError(.invalidConfiguration, "The base URL has an invalid port")
        }
        guard components.query == nil, components.fragment == nil else {
            throw SegmentsError(.invalidConfiguration, "The base URL must not have a query or fragment")
        }
        switch scheme {
        case "https":
            break
        case "http" where allowsInsecureHTTP || Self.isLoopback(host):
            break
        case "http":
            throw SegmentsError(
                .invalidConfiguration, "The base URL uses plain http; use https or allow insecure HTTP")
        default:
            throw SegmentsError(.invalidConfiguration, "The base URL is not an http(s) URL")
        }
        self.components = components
    }

    /// The base joined to `path` (each element one percent-encoded path segment) with `query`
    /// (values and names percent-encoded), e.g. `["webxp", "projects", token, "segments"]`.
    package func appending(path: [String], query: [(name: String, value: String)] = []) throws -> URL {
        var url = components
        var basePath = url.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        url.percentEncodedPath = basePath + "/" + path.map(Self.encodeSegment).joined(separator: "/")
        url.percentEncodedQuery =
            query.isEmpty ? nil : query.map { "\(Self.encode($0.name))=\(Self.encode($0.value))" }.joined(separator: "&")
        guard let result = url.url else {
            throw SegmentsError(.invalidConfiguration, "Could not build a request URL from the base URL")
        }
        return result
    }

    /// Percent-encodes every byte of `value` except RFC 3986 unreserved characters, so `/`, `?`,
    /// `&`, `#`, `=`, `+`, `%`, space and non-ASCII text survive as data.
    package static func encode(_ value: String) -> String {
        var encoded = ""
        encoded.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// A path segment: `encode`, and `.`/`..` escaped too so they cannot walk up the path.
    private static func encodeSegment(_ value: String) -> String {
        if !value.isEmpty && value.allSatisfy({ $0 == "." }) {
            return String(repeating: "%2E", count: value.count)
        }
        return encode(value)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
