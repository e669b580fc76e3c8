// libFuzzer target: the two parsers that read text a server or an app supplies before any request
// is made — `Retry-After` (RFC 9110 §10.2.3) and the base URL (see Behaviour P3, P4, P7).
//
// Byte 0 picks the parser (bit 0: 0 = Retry-After, 1 = base URL) and, for the base URL, whether
// plain HTTP is allowed (bit 1); the rest of the input is the text, decoded as UTF-8.
//
// Properties checked beyond "no crash, no memory error":
// - Retry-After: `nil` or a finite number of seconds within `0...RetryAfter.maximumSeconds`; every
//   non-empty all-digit value is accepted, a short one exactly (up to the cap), whatever `now` is; two calls agree.
// - base URL: a rejection is `.invalidConfiguration` only and its message never repeats the input
//   (the marker `SECRET` never shows); an accepted URL is http(s), and plain http without permission
//   only for a host an independent parser here calls loopback (`localhost`, 127/8, `::1`), while
//   every such loopback URL is accepted; endpoint paths and query values built from the input keep
//   the base's scheme, host and port (they cannot move a request elsewhere).
import Foundation
import SegmentsDomain
@testable import SegmentsNetworking

@_cdecl("LLVMFuzzerTestOneInput")
public func urlAndRetryAfterFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let selector = bytes[0]
    let text = String(decoding: UnsafeBufferPointer(start: bytes + 1, count: count - 1), as: UTF8.self)
    if selector & 1 == 0 {
        checkRetryAfter(text)
    } else {
        checkBaseURL(text, allowsInsecureHTTP: selector & 2 != 0)
    }
    return 0
}

private func checkRetryAfter(_ text: String) {
    let now = Date(timeIntervalSince1970: 1_732_249_200)
    let seconds = RetryAfter.seconds(from: text, now: now)
    require(seconds == RetryAfter.seconds(from: text, now: now), "two parses of one value disagree")
    if let seconds {
        require(seconds.isFinite && seconds >= 0 && seconds <= RetryAfter.maximumSeconds, "wait \(seconds) out of bounds")
    }
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return }
    require(seconds != nil, "delta-seconds rejected")
    require(
        RetryAfter.seconds(from: text, now: Date(timeIntervalSince1970: 0)) == seconds, "delta-seconds depend on now")
    let significant = trimmed.drop { $0 == "0" }
    if significant.count <= 5 {
        let value = TimeInterval(Int(significant.isEmpty ? "0" : String(significant)) ?? -1)
        require(seconds == min(value, RetryAfter.maximumSeconds), "wrong delta")
    }
}

private func checkBaseURL(_ text: String, allowsInsecureHTTP: Bool) {
    let base: BaseURL
    do {
        base = try BaseURL(text, allowsInsecureHTTP: allowsInsecureHTTP)
    } catch let error as SegmentsError {
        require(error.code == .invalidConfiguration, "rejected with \(error.code)")
        require(!error.message.contains("SECRET"), "the error message repeats the URL")
        require(!shouldAccept(text, allowsInsecureHTTP: allowsInsecureHTTP), "a loopback http URL was rejected")
        return
    } catch {
        fatalError("BaseURL threw a non-SegmentsError: \(error)")
    }
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
        fatalError("accepted a URL that URLComponents does not parse")
    }
    require(scheme == "https" || scheme == "http", "accepted scheme \(scheme)")
    if scheme == "http" && !allowsInsecureHTTP {
        require(isLoopback(components.percentEncodedHost ?? ""), "plain http accepted for a host that is not loopback")
    }
    // Path segments and query values taken from the input must stay data.
    let piece = String(trimmed.prefix(64))
    guard let url = try? base.appending(path: ["webxp", "projects", piece, "segments"], query: [("cookie", piece)]),
        let built = URLComponents(url: url, resolvingAgainstBaseURL: false)
    else { return }
    require(built.scheme?.lowercased() == scheme, "the endpoint changed the scheme")
    require(built.percentEncodedHost == components.percentEncodedHost, "the endpoint changed the host")
    require(built.port == components.port, "the endpoint changed the port")
    require(built.queryItems?.first(where: { $0.name == "cookie" })?.value == piece, "the query value was not kept")
}

/// Whether `BaseURL` must accept `text`: an `http` URL with a loopback host and nothing else wrong.
private func shouldAccept(_ text: String, allowsInsecureHTTP: Bool) -> Bool {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard let components = URLComponents(string: trimmed), components.scheme?.lowercased() == "http",
        let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil
    else { return false }
    if let port = components.port, !(1...65_535).contains(port) { return false }
    // Behaviour P4: a user name or password (anything before an `@` in the authority) is refused.
    if let scheme = trimmed.range(of: "://"), trimmed[scheme.upperBound...].prefix(while: { !"/?#".contains($0) }).contains("@") {
        return false
    }
    return isLoopback(components.percentEncodedHost ?? "")
}

/// An independent loopback test: `localhost`, four strict decimal octets starting with 127, or an
/// IPv6 text form of `::1`.
private func isLoopback(_ rawHost: String) -> Bool {
    var host = rawHost.lowercased()
    if host == "localhost" { return true }
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host.contains(":") { return ipv6Groups(host) == [0, 0, 0, 0, 0, 0, 0, 1] }
    guard let octets = ipv4Octets(host) else { return false }
    return octets[0] == 127
}

private func ipv4Octets(_ text: String) -> [Int]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var octets: [Int] = []
    for part in parts {
        guard (1...3).contains(part.count), part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            part.count == 1 || part.first != "0", let value = Int(part), value <= 255
        else { return nil }
        octets.append(value)
    }
    return octets
}

/// The eight 16-bit groups of an IPv6 text (RFC 4291 §2.2, with `::` and a trailing IPv4 part).
private func ipv6Groups(_ text: String) -> [Int]? {
    func groups(_ part: Substring) -> [Int]? {
        if part.isEmpty { return [] }
        var result: [Int] = []
        let fields = part.split(separator: ":", omittingEmptySubsequences: false)
        for (index, field) in fields.enumerated() {
            if index == fields.count - 1, field.contains(".") {
                guard let octets = ipv4Octets(String(field)) else { return nil }
                result += [octets[0] << 8 | octets[1], octets[2] << 8 | octets[3]]
            } else {
                guard (1...4).contains(field.count), let value = Int(field, radix: 16), !field.hasPrefix("+"),
                    !field.hasPrefix("-")
                else { return nil }
                result.append(value)
            }
        }
        return result
    }
    let halves = text.components(separatedBy: "::")
    switch halves.count {
    case 1:
        guard let all = groups(Substring(text)), all.count == 8 else { return nil }
        return all
    case 2:
        guard let head = groups(Substring(halves[0])), let tail = groups(Substring(halves[1])), head.count + tail.count <= 7
        else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    default:
        return nil
    }
}
