import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@testable import SegmentsNetworking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession transport's own sessions (see Behaviour P3, P4): whatever configuration the app
/// supplies, nothing is cached and no cookie is kept, and loopback hosts get a session without
/// proxies.
@Suite(Hang.timeLimit(minutes: 1)) struct SessionConfigurationTests {
    /// What an app might pass: the default configuration, with a disk cache and cookies on.
    private static func appConfiguration() -> URLSessionConfiguration {
        let app = URLSessionConfiguration.default
        app.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, diskPath: nil)
        app.requestCachePolicy = .returnCacheDataElseLoad
        app.httpCookieStorage = HTTPCookieStorage.shared
        app.httpCookieAcceptPolicy = .always
        app.httpShouldSetCookies = true
        app.timeoutIntervalForRequest = 42
        app.httpAdditionalHeaders = ["X-App": "kept"]
        return app
    }

    @Test func p4_anAppSuppliedConfigurationNeverCachesNorKeepsCookies() {
        let app = Self.appConfiguration()
        let used = URLSessionSegmentsTransport(configuration: app).configuration

        #expect(used.urlCache == nil, "responses (segments, URLs with cookie=) would reach the URL cache")
        #expect(used.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(used.httpCookieStorage == nil)
        #expect(used.httpShouldSetCookies == false)
        #expect(used.httpCookieAcceptPolicy == .never)
        // The app's other settings are kept, and its own object is left as it was (a copy is changed).
        #expect(used.timeoutIntervalForRequest == 42)
        #expect(used.httpAdditionalHeaders?["X-App"] as? String == "kept")
        #expect(app.urlCache != nil)
        #expect(app.httpCookieStorage != nil)
        #expect(app.httpShouldSetCookies == true)
    }

    @Test func p4_theDefaultConfigurationNeverCachesNorKeepsCookies() {
        let used = URLSessionSegmentsTransport().configuration
        #expect(used.urlCache == nil)
        #expect(used.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(used.httpCookieStorage == nil)
        #expect(used.httpShouldSetCookies == false)
    }

    @Test func p3_theLoopbackSessionUsesNoProxyAndKeepsTheRest() {
        let app = Self.appConfiguration()
        app.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "proxy.example", "HTTPPort": 3128]
        let settings = URLSessionSegmentsTransport.sessionConfiguration(from: app)
        let direct = URLSessionSegmentsTransport.directSessionConfiguration(from: settings)

        #expect(direct.connectionProxyDictionary?.isEmpty == true, "a loopback request could reach a proxy")
        #expect(settings.connectionProxyDictionary?.isEmpty == false, "other hosts keep the app's proxy")
        #expect(direct.urlCache == nil)
        #expect(direct.httpCookieStorage == nil)
        #expect(direct.timeoutIntervalForRequest == 42)
    }
}

/// libcurl's proxy variables as the transport reads them (see Behaviour P3): which one would
/// send a request through a proxy, and which `no_proxy` entries bypass it.
@Suite(Hang.timeLimit(minutes: 1)) struct ProxyEnvironmentTests {
    private static let proxy = "http://user:pw@proxy.example:3128"

    @Test(arguments: [
        ("http://127.0.0.1:8080/x", ["http_proxy": proxy], "http_proxy"),
        ("http://localhost/x", ["all_proxy": proxy], "all_proxy"),
        ("http://[::1]:80/x", ["ALL_PROXY": proxy], "ALL_PROXY"),
        ("https://127.0.0.1/x", ["HTTPS_PROXY": proxy], "HTTPS_PROXY"),
        ("https://localhost/x", ["https_proxy": proxy, "all_proxy": proxy], "https_proxy"),
        ("http://127.0.0.1/x", ["http_proxy": proxy, "no_proxy": "example.com,127.0.0.0/8"], "http_proxy"),
        ("http://localhost/x", ["http_proxy": proxy, "no_proxy": "notlocalhost"], "http_proxy"),
    ])
    func p3_aProxyVariableThatWouldApplyIsNamed(url: String, environment: [String: String], variable: String) throws {
        #expect(ProxyEnvironment.proxyVariable(for: try #require(URL(string: url)), environment: environment) == variable)
    }

    @Test(arguments: [
        ("http://127.0.0.1/x", [String: String]()),
        ("http://127.0.0.1/x", ["HTTP_PROXY": proxy]),  // libcurl reads http_proxy in lower case only
        ("http://127.0.0.1/x", ["http_proxy": ""]),
        ("http://127.0.0.1/x", ["https_proxy": proxy]),
        ("http://127.0.0.1/x", ["http_proxy": proxy, "no_proxy": "*"]),
        ("http://127.0.0.1/x", ["http_proxy": proxy, "NO_PROXY": "localhost, 127.0.0.1"]),
        ("http://localhost:9/x", ["all_proxy": proxy, "no_proxy": ".localhost"]),
        ("http://[::1]/x", ["http_proxy": proxy, "no_proxy": "::1"]),
    ])
    func p3_noVariableAppliesOrNoProxyBypassesIt(url: String, environment: [String: String]) throws {
        #expect(ProxyEnvironment.proxyVariable(for: try #require(URL(string: url)), environment: environment) == nil)
    }
}
