import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// ODP audiences over real loopback HTTP: URLSession against the emulator's `POST /v3/graphql`.
@Suite(Hang.timeLimit(minutes: 2)) struct ODPEndToEndTests {
    static let key = "PUBLIC_KEY"
    static let candidates = ["buyers", "seg-1", "seg-2"]

    /// Wall-clock limits that only matter on failure: under ThreadSanitizer on a loaded 2-core
    /// machine, the fetch's task can wait more than 30 s for a thread of the cooperative pool
    /// (scaled like the suites' limits, within the 300 s a time-out may be, P7).
    static let generous: TimeInterval = min(Hang.scaled(90), 300)

    /// A started emulator that accepts only ``key``, and an audience client pointed at it.
    final class Fixture: Sendable {
        let emulator = SegmentsEmulator()
        let baseURL: URL
        let logger = RecordingLogger()

        init() throws {
            emulator.acceptODPAPIKeys([ODPEndToEndTests.key])
            baseURL = try emulator.start()
        }

        func odp(key: String = ODPEndToEndTests.key, timeout: TimeInterval = ODPEndToEndTests.generous, fields: Set<String> = []) -> ODPConfiguration {
            ODPConfiguration(apiKey: key, apiHost: baseURL.absoluteString, requestTimeout: timeout, additionalIdentifierFields: fields)
        }

        func audiences(key: String = ODPEndToEndTests.key, timeout: TimeInterval = ODPEndToEndTests.generous) throws -> AudienceSegmentsClient {
            try AudienceSegmentsClient(
                odp: odp(key: key, timeout: timeout), candidateSegments: ODPEndToEndTests.candidates,
                options: .init(runtime: SegmentsRuntime(logger: logger), transport: URLSessionSegmentsTransport(), visitorStorage: .inMemory))
        }

        deinit { emulator.stop() }
    }

    @Test func o1_o3_aFetchOverLoopbackIsCachedAndIgnoreCacheAsksAgain() async throws {
        let fixture = try Fixture()
        fixture.emulator.setQualifiedAudiences(["seg-2"], forUser: "user123")
        let user = try fixture.audiences().createUserContext(userId: "user123")
        #expect(try await user.fetchQualifiedSegments() == ["seg-2"])
        #expect(user.isQualifiedFor(segment: "seg-2"))
        let request = try #require(fixture.emulator.requests(on: .graphql).first)
        #expect(request.method == "POST")
        #expect(request.header("x-api-key") == Self.key)
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.jsonBody?["variables"]?["audiences"] == ["buyers", "seg-1", "seg-2"])

        fixture.emulator.setQualifiedAudiences(["seg-1"], forUser: "user123")
        #expect(try await user.fetchQualifiedSegments() == ["seg-2"])
        #expect(fixture.emulator.requests(on: .graphql).count == 1)
        #expect(try await user.fetchQualifiedSegments(options: [.ignoreCache]) == ["seg-1"])
        #expect(fixture.emulator.requests(on: .graphql).count == 2)
    }

    @Test func o1_theBlockingFormOverLoopback() async throws {
        let fixture = try Fixture()
        fixture.emulator.setQualifiedAudiences(["seg-1", "buyers"], forUser: "vuid_abc")
        let user = try fixture.audiences().createUserContext(userId: "vuid_abc")
        let answer = try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: Self.generous) }
        #expect(Set(answer) == ["seg-1", "buyers"])
        let query = fixture.emulator.requests(on: .graphql).first?.jsonBody?["query"]
        #expect(query.map { "\($0)".contains("customer(vuid: $userId)") } == true)
    }

    @Test func o4_aWrongKeyIsUnauthorized() async throws {
        let fixture = try Fixture()
        fixture.emulator.setQualifiedAudiences(["seg-1"], forUser: "user123")
        let user = try fixture.audiences(key: "WRONG").createUserContext(userId: "user123")
        let error = await thrownSegmentsError { try await user.fetchQualifiedSegments() }
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == 401)
        #expect(!fixture.logger.messages.joined().contains("WRONG"))
    }

    @Test(arguments: [EmulatorUnknownUserAnswer.invalidIdentifier, .legacyInvalidIdentifier])
    func o4_anUnknownUserIsAnInvalidIdentifierInBothForms(answer: EmulatorUnknownUserAnswer) async throws {
        let fixture = try Fixture()
        fixture.emulator.setUnknownUserAnswer(answer)
        let user = try fixture.audiences().createUserContext(userId: "stranger")
        let error = await thrownSegmentsError { try await user.fetchQualifiedSegments() }
        #expect(error?.code == .invalidIdentifier)
        #expect(user.qualifiedSegments == nil)
    }

    @Test func o4_aNullCustomerIsNoSegments() async throws {
        let fixture = try Fixture()
        fixture.emulator.setUnknownUserAnswer(.nullCustomer)
        #expect(try await fixture.audiences().createUserContext(userId: "stranger").fetchQualifiedSegments() == [])
    }

    @Test func o4_aGraphQLClassificationFailsTheFetchWithThatReason() async throws {
        let fixture = try Fixture()
        let odp = ODPAudienceSegmentFetcher(
            configuration: fixture.odp(fields: ["email"]), transport: URLSessionSegmentsTransport(), clock: SystemClock())
        let email = AudienceIdentifier(field: AudienceIdentifier.Field(rawValue: "email"), value: "jane@example.com")
        let error = await thrownSegmentsError { _ = try await odp.fetchQualifiedSegments(for: email, candidates: ["a"]) }
        #expect(error?.code == .invalidResponse)
        #expect((error?.underlying as? ODPGraphQLError)?.classification == "ValidationError")
    }

    @Test func o4_aSlowAnswerTimesOut() async throws {
        let fixture = try Fixture()
        fixture.emulator.setQualifiedAudiences(["seg-1"], forUser: "user123")
        fixture.emulator.injectFault(.delay(2), on: .graphql)
        let user = try fixture.audiences(timeout: 0.2).createUserContext(userId: "user123")
        let error = await thrownSegmentsError { try await user.fetchQualifiedSegments() }
        #expect(error?.code == .timeout)
    }

    @Test func o4_o5_audienceRulesQualifyAUserFromEventsTrackedThroughTheSDK() async throws {
        let fixture = try Fixture()
        fixture.emulator.setAudienceRules([EmulatorAudienceRule(audience: "buyers", eventType: "purchase")])
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tracker = try SegmentsClient(
            configuration: .init(backend: .bloomreach(BloomreachConfiguration(
                integration: .project(token: "project"), baseURL: fixture.baseURL.absoluteString))),
            options: .init(runtime: SegmentsRuntime(logger: fixture.logger), transport: URLSessionSegmentsTransport(), storage: .directory(directory.url)))
        defer { tracker.stop() }
        try tracker.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        try tracker.trackEvent(properties: ["price": 10], timestamp: nil, eventType: "purchase")
        #expect(await eventually { fixture.emulator.events.count == 1 })
        let jane = try fixture.audiences().createUserContext(userId: "jane")
        #expect(try await jane.fetchQualifiedSegments() == ["buyers"])
    }

    @Test func o5_theRealTimeEngineRunsOverODP() async throws {
        let fixture = try Fixture()
        fixture.emulator.setUnknownUserAnswer(.nullCustomer)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let client = try SegmentsClient(
            configuration: .init(backend: .odp(fixture.odp(), candidates: ["seg-1", "seg-2"])),
            options: .init(runtime: SegmentsRuntime(logger: fixture.logger), timings: EndToEndHarness.timings, transport: URLSessionSegmentsTransport(), storage: .directory(directory.url)))
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .audiences(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        #expect(told.all == [[]])
        let cookie = try #require(client.customerCookie)
        fixture.emulator.setQualifiedAudiences(["seg-1"], forUser: "vuid_\(cookie)")
        let fresh = try await client.getSegments(force: true, category: .audiences())
        #expect(fresh == [Segment(id: "seg-1", segmentationId: "odp")])
        #expect(await eventually { told.count == 2 })
        #expect(told.all.last == fresh)
    }
}
