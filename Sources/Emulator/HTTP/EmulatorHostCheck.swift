import Foundation

/// The `Host` check that stops DNS rebinding: a web page whose name is made to resolve to
/// 127.0.0.1 can reach the emulator from a browser, but the browser still sends that name as
/// `Host`. Only loopback hosts are served.
enum EmulatorHostCheck {
    /// Whether a `Host` header value names loopback: `localhost`, an IPv4 address in 127/8 or
    /// `[::1]`, with or without a port. Addresses are parsed by `inet_pton` (strict forms only).
    static func isLoopback(_ value: String) -> Bool {
        var host = Substring(value.trimmingCharacters(in: .whitespaces).lowercased())
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || isPort(rest) else { return false }
            guard let bytes = EmulatorPOSIX.ipv6Address(String(host[host.index(after: host.startIndex)..<close])) else {
                return false
            }
            return bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
        }
        if let colon = host.lastIndex(of: ":") {
            guard isPort(host[colon...]) else { return false }
            host = host[..<colon]
        }
        if host == "localhost" { return true }
        guard let bytes = EmulatorPOSIX.ipv4Address(String(host)) else { return false }
        return bytes[0] == 127
    }

    /// `:` and one to five digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.dropFirst()
        return text.first == ":" && (1...5).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
