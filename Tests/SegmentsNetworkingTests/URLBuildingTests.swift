import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct URLBuildingTests {
    private static let segmentsPath = "/webxp/projects/TOKEN/segments"

    @Test(arguments: [
        ("https://api.exponea.com", "https://api.exponea.com"),
        ("https://api.exponea.com/", "https://api.exponea.com"),
        ("https://api.exponea.com///", "https://api.exponea.com"),
        ("  https://api.exponea.com/ \n", "https://api.exponea.com"),
        ("https://proxy.example/bloomreach", "https://proxy.example/bloomreach"),
        ("https://proxy.example/bloomreach/", "https://proxy.example/bloomreach"),
        ("https://proxy.example:8443/a/b//", "https://proxy.example:8443/a/b"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://localhost:9000/", "http://localhost:9000"),
    ])
    func wire_baseAndPathJoinWithExactlyOneSlash(base: String, expectedPrefix: String) async throws {
        let harness = Harness(baseURL: base)
        _ = try await harness.repository.fetchSegments(for: CustomerIds(cookie: "c"))
        let url = try #require(harness.transport.requests.first?.url.absoluteString)
        #expect(url == expectedPrefix + Self.segmentsPath + "?cookie=c")
    }

    @Test(arguments: [
        "", "   ", "not a url", "api.exponea.com", "https://", "ftp://api.exponea.com",
        "https://api.exponea.com?x=1", "https://api.exponea.com/#top", "ht tp://api.exponea.com", "://x",
        "https://api.exponea.com:99999", "https://api.exponea.com:0",
    ])
    func badBaseURLIsAnInvalidConfigurationNotACrash(base: String) async {
        let harness = Harness(baseURL: base)
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .invalidConfiguration)
        #expect(harness.transport.requests.isEmpty)
        #expect(throws: SegmentsError.self) { try harness.configuration.validate() }
    }

    @Test(arguments: ["http://api.exponea.com", "http://127.evil.example", "http://10.0.0.1"])
    func p3_plainHTTPNeedsExplicitPermissionOffLoopback(base: String) throws {
        let strict = BloomreachConfiguration(integration: Harness.project, baseURL: base)
        #expect(throws: SegmentsError.self) { try strict.validate() }
        let allowed = BloomreachConfiguration(integration: Harness.project, baseURL: base, allowsInsecureHTTP: true)
        try allowed.validate()
    }

    @Test(arguments: ["http://localhost", "http://127.0.0.1:1234", "http://[::1]:8080", "https://api.exponea.com"])
    func p3_httpsAndLoopbackNeedNoPermission(base: String) throws {
        try BloomreachConfiguration(integration: Harness.project, baseURL: base).validate()
    }

    @Test func emptyTokenOrStreamIdIsAnInvalidConfiguration() async {
        for integration in [BloomreachIntegration.project(token: ""), .stream(id: "")] {
            let harness = Harness(integration)
            let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
            #expect(error?.code == .invalidConfiguration)
            #expect(harness.transport.requests.isEmpty)
        }
    }

    static let awkwardValues = [
        "a/b?c&d#e f", "ünïcødé 🍪", "x=y+z%20", "..", ".", "semi;colon,comma", "tab\tnew\nline", "~-._",
    ]

    @Test(arguments: awkwardValues)
    func wire_cookieRoundTripsInQueryAndPath(cookie: String) async throws {
        let harness = Harness()
        let customer = CustomerIds(["cookie": cookie, "registered": "jane@example.com"])
        _ = try await harness.repository.fetchSegments(for: customer)
        try await harness.repository.linkCustomerIds(customer)
        let fetch = try #require(harness.transport.requests.first)
        #expect(fetch.queryValue("cookie") == cookie)
        #expect(fetch.path == Self.segmentsPath)
        let query = try #require(URLComponents(url: fetch.url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
        #expect(!query.contains("+") && !query.contains(" ") && query.split(separator: "&").count == 1)

        let link = try #require(harness.transport.requests.last)
        let segments = link.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false)
        #expect(segments.count == 7)
        #expect(segments[5].removingPercentEncoding == cookie)
        #expect(segments[6] == "link-ids")
    }

    @Test(arguments: awkwardValues)
    func wire_tokenAndStreamIdRoundTrip(value: String) async throws {
        let project = Harness(.project(token: value))
        _ = try await project.repository.fetchSegments(for: anonymous)
        let projectPath = try #require(project.transport.requests.first?.percentEncodedPath)
        let segments = projectPath.split(separator: "/", omittingEmptySubsequences: false)
        #expect(segments.count == 5)
        #expect(segments[3].removingPercentEncoding == value)

        let stream = Harness(.stream(id: value))
        try await stream.uploader.upload(TrackedEvent(kind: .customerUpdate, customerIds: anonymous, properties: [:], timestamp: Harness.now))
        let request = try #require(stream.transport.requests.first)
        #expect(request.queryValue("stream_id") == value)
        #expect(request.path == "/track/u/v1/customers")
    }

    @Test func reservedCharactersAreEncodedExactly() async throws {
        let harness = Harness(.project(token: "a/b"))
        _ = try await harness.repository.fetchSegments(for: CustomerIds(cookie: "x&y=z+1 #é"))
        let url = try #require(harness.transport.requests.first?.url.absoluteString)
        #expect(url == "https://api.exponea.com/webxp/projects/a%2Fb/segments?cookie=x%26y%3Dz%2B1%20%23%C3%A9")
    }
}
