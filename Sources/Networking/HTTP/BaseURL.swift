#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// A validated base URL that endpoint paths are joined to (<doc:Behaviour#Wire-format>): exactly one
/// `/` between base and path; path components and query values percent-encoded.
package struct BaseURL: Sendable, Hashable {
    private let components: URLComponents

    /// Validates `string`: an absolute `https` URL with a host (or `http` when `allowsInsecureHTTP`
    /// or the host is loopback, <doc:Behaviour#P3>), without user name, password, query or
    /// fragment. Surrounding white space is ignored. Error messages never repeat the URL, which
    /// could carry credentials (`user:password@`).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`, never crashes.
    package init(_ string: String, allowsInsecureHTTP: Bool = false) throws {
        let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw SegmentsError(.invalidConfiguration, "The base URL is not an absolute http(s) URL")
        }
        // A user name or password is a credential in the wrong place: URLSession would send it as
        // Basic authorization and every printout of the configuration would show it (see Behaviour P4).
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw SegmentsError(.invalidConfiguration, "The base URL must not contain a user name or password")
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
        case "http" where allowsInsecureHTTP || Self.isLoopback(components.percentEncodedHost ?? host):
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

    /// Whether `host` (as written in the URL, percent-escapes not decoded) is loopback: the literal
    /// `localhost`, an IPv4 address in 127.0.0.0/8 or the IPv6 address `::1` (<doc:Behaviour#P3>).
    ///
    /// Addresses are parsed by `inet_pton`, which takes only the strict forms (four decimal octets,
    /// standard IPv6 text), so `127.0.0.+1`, `0177.0.0.1`, `127.1` or `127.0.0.1.evil.example` —
    /// names a resolver may send anywhere — are not loopback. A host with a percent-escape never is.
    package static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name == "localhost" { return true }
        guard !name.contains("%") else { return false }
        if name.hasPrefix("[") && name.hasSuffix("]") {
            name = String(name.dropFirst().dropLast())
        }
        if name.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, name, &address) == 1 else { return false }
            return withUnsafeBytes(of: &address) { bytes in
                bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            }
        }
        var address = in_addr()
        guard inet_pton(AF_INET, name, &address) == 1 else { return false }
        // `s_addr` is in network byte order: its first byte in memory is the first octet.
        return withUnsafeBytes(of: &address) { $0[0] == 127 }
    }
}
