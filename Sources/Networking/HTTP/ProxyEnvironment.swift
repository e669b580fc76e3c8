import Foundation

/// libcurl's reading of the proxy environment variables, which FoundationNetworking (URLSession on
/// Linux) leaves to it: it does not apply `connectionProxyDictionary`.
///
/// For an `http` URL libcurl uses `http_proxy` (lower case only), for `https` `https_proxy` or
/// `HTTPS_PROXY`, and otherwise `all_proxy` or `ALL_PROXY`; the lower-case spelling wins, an empty
/// value counts as unset. `no_proxy` (or `NO_PROXY`) lists hosts that bypass the proxy: `*` for
/// all, else comma-separated names matched exactly or as a domain suffix (`.example.com` and
/// `example.com` both match `api.example.com`). An entry libcurl might read more generously than
/// this (a CIDR range such as `127.0.0.0/8`) counts as no match here, so the SDK errs towards
/// refusing a request, never towards sending it through a proxy.
package enum ProxyEnvironment {
    /// The name of the variable that would send a request for `url` through a proxy, or `nil`
    /// when none would. Never the value, which may hold `user:password@` (<doc:Behaviour#P4>).
    package static func proxyVariable(for url: URL, environment: [String: String]) -> String? {
        let scheme = url.scheme?.lowercased()
        var names: [String] = []
        if scheme == "http" { names.append("http_proxy") }
        if scheme == "https" { names += ["https_proxy", "HTTPS_PROXY"] }
        names += ["all_proxy", "ALL_PROXY"]
        guard let variable = names.first(where: { !(environment[$0] ?? "").isEmpty }) else { return nil }
        let noProxy = [environment["no_proxy"], environment["NO_PROXY"]].compactMap { $0 }.first { !$0.isEmpty } ?? ""
        return bypasses(url.host ?? "", noProxy: noProxy) ? nil : variable
    }

    /// Whether `noProxy` lists `host` (see the type's documentation).
    package static func bypasses(_ host: String, noProxy: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let entries = noProxy.split(whereSeparator: { $0 == "," || $0 == " " }).map { $0.lowercased() }
        for var entry in entries {
            if entry == "*" { return true }
            if entry.hasPrefix("[") && entry.hasSuffix("]") { entry = String(entry.dropFirst().dropLast()) }
            while entry.hasPrefix(".") { entry.removeFirst() }
            guard !entry.isEmpty else { continue }
            if name == entry || name.hasSuffix("." + entry) { return true }
        }
        return false
    }
}
