import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

extension LiveIntegrationTests {
    /// Credentials over real loopback HTTP: an emulator that requires them refuses wrong ones with 401,
    /// and stream mode refreshes a refused JWT once (Behaviour, wire format, "Status handling").
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveAuthorizationTests {
        @Test func wire_projectWithAWrongAPIKeyIsUnauthorizedOnEveryEndpoint() async throws {
            let live = try LiveHarness(.project(token: "TOKEN"), authorization: .token("WRONG"))
            defer { live.stop() }
            live.emulator.requireAuthorization("Token RIGHT")

            let fetch = await segmentsError { _ = try await live.repository.fetchSegments(for: identified) }
            let link = await segmentsError { try await live.repository.linkCustomerIds(identified) }
            let event = await segmentsError { try await live.uploader.upload(Live.purchase) }
            let update = await segmentsError { try await live.uploader.upload(Live.update) }

            #expect(fetch?.code == .unauthorized)
            #expect(fetch?.httpStatus == 401)
            #expect(fetch?.isTransient == false)
            #expect(link?.code == .linkFailed)
            #expect(link?.httpStatus == 401)
            #expect(link?.isTransient == false)
            #expect(event?.code == .unauthorized)
            #expect(update?.code == .unauthorized)
            #expect(live.emulator.requests.map { $0.header("Authorization") } == Array(repeating: "Token WRONG", count: 4))
            #expect(live.emulator.events.isEmpty && live.emulator.customerUpdates.isEmpty && live.emulator.links.isEmpty)
            #expect(live.scheduler.recordedSleeps.isEmpty)
        }

        @Test func wire_projectWithoutAnyAPIKeyIsUnauthorized() async throws {
            let live = try LiveHarness(.project(token: "TOKEN"))
            defer { live.stop() }
            live.emulator.requireAuthorization("Token RIGHT")

            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(error?.code == .unauthorized)
            #expect(live.emulator.requests.first?.header("Authorization") == nil)
        }

        @Test func wire_projectWithTheRightAPIKeySucceeds() async throws {
            let live = try LiveHarness(.project(token: "TOKEN"), authorization: .token("RIGHT"))
            defer { live.stop() }
            live.emulator.requireAuthorization("Token RIGHT")

            #expect(try await live.repository.fetchSegments(for: anonymous) == [:])
            try await live.uploader.upload(Live.purchase)
            #expect(live.emulator.events.count == 1)
        }

        @Test func wire_streamWithAStaticUnknownBearerIsUnauthorizedAndNotRetried() async throws {
            let live = try LiveHarness(.stream(id: "STREAM"), authorization: .bearer("unknown"))
            defer { live.stop() }
            live.emulator.acceptBearerTokens(["known"])

            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(error?.code == .unauthorized)
            #expect(error?.httpStatus == 401)
            #expect(live.emulator.requests.map { $0.header("Authorization") } == ["Bearer unknown"])
            #expect(live.scheduler.recordedSleeps.isEmpty)
        }

        @Test func wire_streamRefusedJWTIsReportedThenRetriedOnceAfter1sWithTheRefreshedToken() async throws {
            let timeline = Timeline()
            let provider = TokenSequence(["stale", "fresh"], timeline: timeline)
            let live = try LiveHarness(.stream(id: "STREAM"), stream: provider, timeline: timeline)
            defer { live.stop() }
            live.emulator.acceptBearerTokens(["fresh"])
            live.emulator.setFixedSegments(
                ["discovery": [EmulatorSegment(id: "s", segmentationId: "g")]], forCookie: anonymous.cookie ?? "")

            let segments = try await live.repository.fetchSegments(for: anonymous)

            #expect(segments == [.discovery(): [Segment(id: "s", segmentationId: "g")]])
            #expect(provider.failures == 1)
            #expect(live.scheduler.recordedSleeps == [1])
            #expect(timeline.all == ["token stale", "authorizationFailed", "sleep 1.0", "token fresh"])
            #expect(live.requests(on: .fetch).map { $0.header("Authorization") } == ["Bearer stale", "Bearer fresh"])
        }

        @Test func wire_streamRefreshAlsoCoversLinkAndTracking() async throws {
            let provider = TokenSequence(["stale", "fresh", "fresh", "fresh"])
            let live = try LiveHarness(.stream(id: "STREAM"), stream: provider)
            defer { live.stop() }
            live.emulator.acceptBearerTokens(["fresh"])

            try await live.repository.linkCustomerIds(identified)
            try await live.uploader.upload(Live.purchase)
            try await live.uploader.upload(Live.update)

            #expect(live.emulator.requests.map { $0.header("Authorization") } == [
                "Bearer stale", "Bearer fresh", "Bearer fresh", "Bearer fresh",
            ])
            #expect(live.emulator.links.count == 1)
            #expect(live.emulator.events.count == 1)
            #expect(live.emulator.customerUpdates.count == 1)
            #expect(provider.failures == 1)
        }

        @Test func wire_streamSecondRefusalFailsUnauthorized() async throws {
            let provider = TokenSequence(["first", "second", "third"])
            let live = try LiveHarness(.stream(id: "STREAM"), stream: provider)
            defer { live.stop() }
            live.emulator.acceptBearerTokens(["third"])

            let error = await segmentsError { try await live.uploader.upload(Live.purchase) }

            #expect(error?.code == .unauthorized)
            #expect(error?.isTransient == false)
            #expect(provider.failures == 2)
            #expect(live.scheduler.recordedSleeps == [1])
            #expect(live.emulator.requests.map { $0.header("Authorization") } == ["Bearer first", "Bearer second"])
            #expect(live.emulator.events.isEmpty)
        }
    }
}
