import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// The ODP GraphQL request (Behaviour, wire format, "ODP audiences query"): URL, headers, body, identifier rule, allow-list, time-out.
@Suite(Hang.timeLimit(minutes: 2)) struct ODPRequestTests {
    static let query =
        "query($userId: String, $audiences: [String]) {customer(fs_user_id: $userId) {audiences(subset: $audiences) {edges {node {name state}}}}}"
    static let empty = #"{"data":{"customer":{"audiences":{"edges":[]}}}}"#

    static func client(
        _ configuration: ODPConfiguration = ODPConfiguration(apiKey: "PUBLIC_KEY"),
        transport: RecordingTransport = RecordingTransport(fallback: .json(empty))
    ) -> ODPAudienceSegmentFetcher {
        ODPAudienceSegmentFetcher(configuration: configuration, transport: transport, clock: FixedClock(date: Harness.now))
    }

    @Test func o4_postsTheDocumentedQueryWithTheKeyToV3GraphQL() async throws {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        _ = try await Self.client(transport: transport).fetchQualifiedSegments(userId: "user123", candidates: ["seg-1", "seg-2"])
        let request = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(request.method == .post)
        #expect(request.url.absoluteString == "https://api.zaius.com/v3/graphql")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["x-api-key"] == "PUBLIC_KEY")
        #expect(request.headers["Authorization"] == nil)
        let body = try request.jsonBody()
        #expect(body["query"] as? String == Self.query)
        let variables = try #require(body["variables"] as? [String: Any])
        #expect(variables["userId"] as? String == "user123")
        #expect(variables["audiences"] as? [String] == ["seg-1", "seg-2"])
        #expect(Set(body.keys) == ["query", "variables"])
    }

    @Test(arguments: [
        ("vuid_0b7cdd1c5d8e4c2f9a550c4f8f", "vuid"),
        ("VUID_ABC", "vuid"),
        ("user123", "fs_user_id"),
        ("jane@example.com", "fs_user_id"),
    ])
    func o3_theIdentifierFieldFollowsTheVuidRule(userId: String, field: String) async throws {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        _ = try await Self.client(transport: transport).fetchQualifiedSegments(userId: userId, candidates: ["a"])
        let query = try #require(try transport.requests.first?.jsonBody()["query"] as? String)
        #expect(query.contains("{customer(\(field): $userId) {"))
    }

    @Test func o4_theDefaultTimeoutIs10SecondsAndConfigurable() throws {
        let request = try Self.client().request(for: AudienceIdentifier(userId: "u"), candidates: ["a"])
        #expect(request.timeout == 10)
        let quick = Self.client(ODPConfiguration(apiKey: "k", requestTimeout: 2.5))
        #expect(try quick.request(for: AudienceIdentifier(userId: "u"), candidates: ["a"]).timeout == 2.5)
    }

    @Test(arguments: [
        ("https://odp.example.com", "https://odp.example.com/v3/graphql"),
        ("https://odp.example.com/", "https://odp.example.com/v3/graphql"),
        ("https://odp.example.com/proxy//", "https://odp.example.com/proxy/v3/graphql"),
        ("  https://odp.example.com:8443 ", "https://odp.example.com:8443/v3/graphql"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v3/graphql"),
    ])
    func o4_theURLIsJoinedWithExactlyOneSlash(host: String, expected: String) throws {
        let client = Self.client(ODPConfiguration(apiKey: "k", apiHost: host))
        #expect(try client.request(for: AudienceIdentifier(userId: "u"), candidates: ["a"]).url.absoluteString == expected)
    }

    @Test(arguments: [
        "", "not a url", "odp.example.com", "ftp://odp.example.com", "http://odp.example.com",
        "https://odp.example.com?x=1", "https://odp.example.com#top", "https://odp.example.com:99999", "https://",
        "https://user:secret@", "mailto:someone@example.com",
    ])
    func o4_aBadHostIsAnErrorNeverACrashAndSendsNothing(host: String) async {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        let configuration = ODPConfiguration(apiKey: "k", apiHost: host)
        #expect(throws: SegmentsError.self) { try configuration.validate() }
        let error = await segmentsError {
            _ = try await Self.client(configuration, transport: transport).fetchQualifiedSegments(userId: "u", candidates: ["a"])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error.map { !$0.message.contains("secret") } ?? false)
        #expect(transport.requests.isEmpty)
    }

    @Test func o4_insecureHTTPIsAllowedOnlyWhenAsked() throws {
        try ODPConfiguration(apiKey: "k", apiHost: "http://odp.internal", allowsInsecureHTTP: true).validate()
        #expect(throws: SegmentsError.self) { try ODPConfiguration(apiKey: "k", apiHost: "http://odp.internal").validate() }
    }

    @Test(arguments: ["", "   ", "\n"])
    func o4_anEmptyKeyIsAConfigurationError(key: String) {
        #expect(throws: SegmentsError.self) { try ODPConfiguration(apiKey: key).validate() }
    }

    @Test func o4_onlyAllowListedFieldNamesReachTheQueryText() async throws {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        let email = AudienceIdentifier(field: AudienceIdentifier.Field(rawValue: "email"), value: "jane@example.com")
        let refused = await segmentsError {
            _ = try await Self.client(transport: transport).fetchQualifiedSegments(for: email, candidates: ["a"])
        }
        #expect(refused?.code == .invalidConfiguration)
        #expect(transport.requests.isEmpty)

        let configured = ODPConfiguration(apiKey: "k", additionalIdentifierFields: ["email"])
        _ = try await Self.client(configured, transport: transport).fetchQualifiedSegments(for: email, candidates: ["a"])
        let query = try #require(try transport.requests.first?.jsonBody()["query"] as? String)
        #expect(query.contains("{customer(email: $userId) {"))
    }

    @Test(arguments: ["fs_user_id: \"x\") {__schema} #", "e-mail", "1st", "", "na me", "ñame"])
    func o4_configuredFieldNamesMustBeGraphQLNames(name: String) async {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        let configuration = ODPConfiguration(apiKey: "k", additionalIdentifierFields: [name])
        #expect(throws: SegmentsError.self) { try configuration.validate() }
        let identifier = AudienceIdentifier(field: AudienceIdentifier.Field(rawValue: name), value: "u")
        let error = await segmentsError {
            _ = try await Self.client(configuration, transport: transport).fetchQualifiedSegments(for: identifier, candidates: ["a"])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(transport.requests.isEmpty)
    }

    @Test func o4_userIdsAndAudienceNamesTravelOnlyAsVariables() async throws {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        let hostile = #"u") {__schema {types {name}}} customer(vuid: "x"#
        _ = try await Self.client(transport: transport).fetchQualifiedSegments(userId: hostile, candidates: ["a\"}", "b"])
        let body = try #require(try transport.requests.first?.jsonBody())
        #expect(body["query"] as? String == Self.query)
        #expect((body["variables"] as? [String: Any])?["userId"] as? String == hostile)
        #expect((body["variables"] as? [String: Any])?["audiences"] as? [String] == ["a\"}", "b"])
    }

    @Test func o4_noCandidatesAnswerEmptyWithoutARequest() async throws {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        #expect(try await Self.client(transport: transport).fetchQualifiedSegments(userId: "u", candidates: []) == [])
        #expect(transport.requests.isEmpty)
    }

    @Test func o4_anEmptyUserIdIsAnInvalidIdentifierWithoutARequest() async {
        let transport = RecordingTransport(fallback: .json(Self.empty))
        let error = await segmentsError {
            _ = try await Self.client(transport: transport).fetchQualifiedSegments(userId: "", candidates: ["a"])
        }
        #expect(error?.code == .invalidIdentifier)
        #expect(transport.requests.isEmpty)
    }

    @Test func p4_theApiKeyNeverAppearsInDescriptions() throws {
        let configuration = ODPConfiguration(apiKey: "SECRET_KEY")
        #expect(!configuration.description.contains("SECRET_KEY"))
        let request = try Self.client(configuration).request(for: AudienceIdentifier(userId: "u"), candidates: ["a"])
        #expect(!request.headers.description.contains("SECRET_KEY"))
        #expect(request.headers.description.contains("x-api-key: <redacted>"))
    }
}
