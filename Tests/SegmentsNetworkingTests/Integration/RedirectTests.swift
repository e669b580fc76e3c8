import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P6 over real loopback HTTP: the emulator answers a redirect whose `Location` is a second
/// listener on 127.0.0.1, and that listener must receive nothing — no header, no body.
@Suite(Hang.timeLimit(minutes: 2)) struct RedirectTests {
    static let statuses = [301, 302, 303, 307, 308]

    /// A listener that would answer 200 to anything: what a credential thief would run.
    private static func thief() throws -> LoopbackServer {
        try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: Data("{}".utf8))) }
    }

    @Test(arguments: statuses)
    func p6_aRedirectIsAnHTTPFailureAndTheLocationReceivesNothing(status: Int) async throws {
        let thief = try Self.thief()
        defer { thief.stop() }
        let live = try LiveHarness(.project)
        defer { live.stop() }
        live.emulator.injectFault(.redirect(status, location: thief.url("/steal").absoluteString), on: .fetch)

        let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(error?.isTransient == false)
        #expect(thief.received.isEmpty, "the Location got \(thief.received.map(\.head))")
        #expect(live.requests(on: .fetch).count == 1)
    }

    @Test(arguments: [307, 308])
    func p6_aRedirectedUploadSendsNeitherItsKeyNorItsBodyToTheLocation(status: Int) async throws {
        let thief = try Self.thief()
        defer { thief.stop() }
        let live = try LiveHarness(.project)
        defer { live.stop() }
        live.emulator.injectFault(.redirect(status, location: thief.url("/steal").absoluteString), on: .event)

        let error = await segmentsError { try await live.uploader.upload(Live.purchase) }

        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(thief.received.isEmpty)
        #expect(live.emulator.events.isEmpty, "a redirect answers without processing")
    }

    @Test func p6_anODPRedirectDoesNotCarryTheAPIKeyToTheLocation() async throws {
        let thief = try Self.thief()
        defer { thief.stop() }
        let emulator = SegmentsEmulator()
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        emulator.injectFault(.redirect(307, location: thief.url("/v3/graphql").absoluteString), on: .graphql)
        let odp = ODPAudienceSegmentFetcher(
            configuration: ODPConfiguration(apiKey: "PUBLIC_KEY", apiHost: baseURL.absoluteString),
            transport: URLSessionSegmentsTransport(timeout: 5), clock: FixedClock(date: Harness.now))

        let error = await segmentsError { _ = try await odp.fetchQualifiedSegments(userId: "u1", candidates: ["a"]) }

        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == 307)
        #expect(thief.received.isEmpty)
    }

    @Test func p6_theTransportReturnsTheRedirectItselfAsTheResponse() async throws {
        let thief = try Self.thief()
        defer { thief.stop() }
        let redirecting = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("302 Found", headers: ["Location: \(thief.url("/x").absoluteString)"]))
        }
        defer { redirecting.stop() }
        let request = SegmentsHTTPRequest(
            method: .post, url: redirecting.url("/track"), headers: ["Authorization": "Token SECRET"],
            body: Data("{}".utf8))

        let response = try await URLSessionSegmentsTransport().send(request)

        #expect(response.status == 302)
        #expect(thief.received.isEmpty)
    }
}
