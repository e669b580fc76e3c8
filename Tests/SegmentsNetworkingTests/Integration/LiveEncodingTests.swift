import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

extension LiveIntegrationTests {
    /// Percent-encoding over the wire: ids with reserved characters reach the emulator intact.
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveEncodingTests {
        /// Every character that would change a URL's meaning if sent raw, plus non-ASCII text.
        private static let awkwardCookie = "a/b?c&d#e f ü+%=.."

        @Test(arguments: LiveMode.allCases)
        func wire_cookieWithReservedCharactersRoundTripsInQueryAndPath(mode: LiveMode) async throws {
            let live = try LiveHarness(mode)
            defer { live.stop() }
            let cookie = Self.awkwardCookie
            let customer = CustomerIds(["cookie": cookie, "registered": "jane doe/ü?&#"])
            live.emulator.setFixedSegments(["discovery": [EmulatorSegment(id: "s", segmentationId: "g")]], forCookie: cookie)

            let segments = try await live.repository.fetchSegments(for: customer)
            try await live.repository.linkCustomerIds(customer)

            // The emulator found the fixed answer, so it decoded exactly this cookie.
            #expect(segments == [.discovery(): [Segment(id: "s", segmentationId: "g")]])
            let fetch = try #require(live.requests(on: .fetch).first)
            #expect(fetch.query == ["cookie": cookie])
            #expect(fetch.rawQuery == "cookie=a%2Fb%3Fc%26d%23e%20f%20%C3%BC%2B%25%3D..")
            #expect(fetch.path == mode.fetchPath())
            let link = try #require(live.emulator.links.first)
            #expect(link.cookie == cookie)
            #expect(link.externalIds == ["registered": "jane doe/ü?&#"])
            let linkRequest = try #require(live.requests(on: .link).first)
            #expect(linkRequest.pathComponents.count == 6)
            #expect(linkRequest.pathComponents[4] == cookie)
        }

        /// `.` and `..` are escaped in the path, so they cannot walk up it; `%2E` stays data.
        @Test(arguments: [".", "..", "%2E%2E"])
        func wire_dotSegmentCookieIsNeverResolvedAsAPath(cookie: String) async throws {
            let live = try LiveHarness(.stream)
            defer { live.stop() }
            let customer = CustomerIds(["cookie": cookie, "registered": "jane@example.com"])

            try await live.repository.linkCustomerIds(customer)
            _ = try await live.repository.fetchSegments(for: customer)

            #expect(live.emulator.links.map(\.cookie) == [cookie])
            #expect(
                live.requests(on: .link).first?.pathComponents
                    == ["webxp", "streams", LiveMode.streamId, "cookies", cookie, "link-ids"])
            #expect(live.requests(on: .fetch).first?.query == ["cookie": cookie])
        }

        @Test func wire_projectTokenWithReservedCharactersStaysOnePathSegment() async throws {
            let token = "tok/en ü?"
            let live = try LiveHarness(.project(token: token))
            defer { live.stop() }

            _ = try await live.repository.fetchSegments(for: anonymous)
            try await live.uploader.upload(Live.event("view"))

            #expect(live.emulator.requests.map(\.route) == [.fetch, .event])
            #expect(live.emulator.requests.first?.pathComponents == ["webxp", "projects", token, "segments"])
            #expect(live.emulator.events.first?.integration == .project(token: token))
        }

        @Test func wire_streamIdWithReservedCharactersStaysOneQueryValue() async throws {
            let id = "s&cookie=x #ü"
            let live = try LiveHarness(.stream(id: id))
            defer { live.stop() }

            try await live.uploader.upload(Live.event("view"))
            try await live.uploader.upload(Live.update)

            #expect(live.emulator.events.first?.integration == .stream(id: id))
            #expect(live.emulator.customerUpdates.first?.integration == .stream(id: id))
            #expect(live.emulator.requests.allSatisfy { $0.query == ["stream_id": id] })
        }
    }
}
