import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// An app's error whose text must not reach the SDK's messages or logs (see Behaviour P4).
struct TokenServiceDown: Error, CustomStringConvertible {
    var description: String { "token service down, last jwt-secret-7" }
}

/// Project mode with an authorization provider: the same rules as stream mode (Behaviour, wire format, "Requests",
/// "Status handling"; see Behaviour P4), which `StreamAuthorizationTests` covers for streams.
@Suite(Hang.timeLimit(minutes: 2)) struct ProjectAuthorizationTests {
    private static let path = "/webxp/projects/TOKEN/segments"

    @Test func wire_theProvidersTokenIsSentAsBearerOnEveryProjectRequest() async throws {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: tokens)
        _ = try await harness.repository.fetchSegments(for: identified)
        try await harness.repository.linkCustomerIds(identified)
        try await harness.uploader.upload(TrackedEvent(kind: .event(type: "x"), customerIds: identified, properties: [:], timestamp: Harness.now))
        try await harness.uploader.upload(TrackedEvent(kind: .customerUpdate, customerIds: identified, properties: [:], timestamp: Harness.now))
        #expect(harness.transport.requests.map(\.url.path) == [
            Self.path, "/webxp/projects/TOKEN/cookies/\(identified.cookie ?? "")/link-ids",
            "/track/v2/projects/TOKEN/customers/events", "/track/v2/projects/TOKEN/customers",
        ])
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == Array(repeating: "Bearer jwt-1", count: 4))
        #expect(tokens.asked == 4)
    }

    @Test func wire_aRefreshedTokenIsUsedFromTheNextRequestOn() async throws {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: tokens)
        _ = try await harness.repository.fetchSegments(for: anonymous)
        tokens.set("jwt-2")
        _ = try await harness.repository.fetchSegments(for: anonymous)
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == ["Bearer jwt-1", "Bearer jwt-2"])
    }

    @Test(arguments: [nil, ""] as [String?])
    func wire_withoutATokenTheStaticAuthorizationIsSent(token: String?) async throws {
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: RecordingAuthorizationProvider(token))
        _ = try await harness.repository.fetchSegments(for: anonymous)
        #expect(harness.transport.requests.first?.headers["Authorization"] == "Token KEY")
        let none = Harness(Harness.project, provider: RecordingAuthorizationProvider(token))
        _ = try await none.repository.fetchSegments(for: anonymous)
        #expect(none.transport.requests.first?.headers["Authorization"] == nil)
    }

    @Test(arguments: [401, 403])
    func wire_aProjectRefusalIsReportedThenRetriedOnceAfter1sWithTheRefreshedToken(status: Int) async throws {
        let timeline = Timeline()
        let provider = TokenSequence(["old", "new"], timeline: timeline)
        let transport = RecordingTransport { request in
            timeline.record("send \(request.headers["Authorization"] ?? "none")")
            return SegmentsHTTPResponse(status: 200, body: Data("{}".utf8))
        }
        transport.enqueue(.handler { request in
            timeline.record("send \(request.headers["Authorization"] ?? "none")")
            return SegmentsHTTPResponse(status: status)
        }, for: Self.path)
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: provider, transport: transport, timeline: timeline)
        #expect(try await harness.repository.fetchSegments(for: anonymous) == [:])
        #expect(provider.failures == 1)
        #expect(timeline.all == [
            "token old", "send Bearer old", "authorizationFailed", "sleep 1.0", "token new", "send Bearer new",
        ])
        #expect(harness.logger.messages(at: .warning) == [
            "Segments: Fetching segments was refused (HTTP \(status)), retrying once with a refreshed token"
        ])
    }

    @Test func wire_aSecondProjectRefusalIsReportedAndFailsUnauthorized() async {
        let provider = TokenSequence(["a", "b", "c"])
        let harness = Harness(
            Harness.project, authorization: .token("KEY"), provider: provider, transport: RecordingTransport(fallback: .status(401)))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == 401)
        #expect(provider.failures == 2)
        #expect(harness.scheduler.recordedSleeps == [1])
        #expect(harness.transport.requests.map { $0.headers["Authorization"] } == ["Bearer a", "Bearer b"])
    }

    @Test func p4_aProviderErrorFailsTheRequestUnauthorizedWithoutSendingIt() async {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        tokens.fail(with: TokenServiceDown())
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: tokens)
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == nil)
        #expect(error?.underlying is TokenServiceDown)
        #expect(error?.message == "Fetching segments was not sent: the authorization provider failed (TokenServiceDown)")
        #expect(!"\(String(describing: error))".contains("jwt-secret"))
        #expect(harness.transport.requests.isEmpty)
        #expect(tokens.refusals == 0, "nothing was refused: the app is not told to refresh")
        #expect(harness.logger.messages.allSatisfy { !$0.contains("jwt-secret") })
    }

    /// A provider whose token service is only unreachable says so with a transient
    /// `SegmentsError`: it reaches the caller as it is, so reloads back off and retry (T7).
    @Test func t7_aSegmentsErrorFromTheProviderPassesThroughSoItCanBeTransient() async {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        tokens.fail(with: SegmentsError(.network, "token service unreachable"))
        let harness = Harness(Harness.project, authorization: .token("KEY"), provider: tokens)
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .network)
        #expect(error?.isTransient == true)
        #expect(error?.message == "token service unreachable")
        #expect(harness.transport.requests.isEmpty)
    }

    @Test func p4_aProviderErrorWhenRefreshingFailsTheRetry() async {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        let transport = RecordingTransport(fallback: .json("{}"))
        transport.enqueue(.handler { _ in
            tokens.fail(with: TokenServiceDown())                // the refresh after this refusal fails
            return SegmentsHTTPResponse(status: 401)
        }, for: Self.path)
        let harness = Harness(Harness.project, provider: tokens, transport: transport)
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .unauthorized)
        #expect(error?.underlying is TokenServiceDown)
        #expect(harness.transport.requests.count == 1)
        #expect(tokens.refusals == 1)
    }

    @Test func c4_aProviderErrorWhileLinkingIsALinkFailureLikeA401() async {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        tokens.fail(with: TokenServiceDown())
        let harness = Harness(Harness.project, provider: tokens)
        let error = await segmentsError { try await harness.repository.linkCustomerIds(identified) }
        #expect(error?.code == .linkFailed)
        #expect((error?.underlying as? SegmentsError)?.code == .unauthorized)
        #expect(error?.isTransient == false)
    }

    @Test func aProviderThatIsCancelledCancelsTheRequest() async {
        let tokens = RecordingAuthorizationProvider("jwt-1")
        tokens.fail(with: CancellationError())
        let harness = Harness(Harness.stream, provider: tokens)
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .cancelled)
        #expect(harness.transport.requests.isEmpty)
    }
}

/// The names from when the provider served streams only still compile; deprecated, so only a
/// deprecated context uses them without a warning.
@available(*, deprecated)
private func oldStreamProviderNamesStillCompile(_ provider: any StreamAuthorizationProvider) -> BloomreachConfiguration {
    var configuration = BloomreachConfiguration(integration: .stream(id: "S"), streamAuthorization: provider)
    configuration.streamAuthorization = configuration.authorizationProvider
    return configuration
}
