import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The tests that the guides show, verbatim, so the guides' code is known to compile and pass.
@Suite(Hang.timeLimit(minutes: 2)) struct DocumentedExamples {
    // Docs/ODPAudiences.md and Docs/TestingWithFakes.md, "A ported Optimizely test": written with
    // the shipped test kit alone. Keep it identical to the guides (DocumentedExamplesTests checks).
    /// Optimizely's segment-manager tests, ported: cache hit, options forwarded, TTL on virtual time.
    @Suite(Hang.timeLimit(minutes: 1)) struct PortedSegmentManagerTests {
        let clock = TestScheduler()                      // virtual time for the cache's 600 s
        let fetcher = RecordingAudienceSegmentFetcher()  // the audience backend, scripted and recorded
        let audiences: AudienceSegmentsClient

        init() {
            fetcher.answer(["seg-1", "seg-2"], forUserId: "user123")
            audiences = AudienceSegmentsClient(
                fetcher: fetcher, candidateSegments: ["seg-1", "seg-2", "seg-3"],
                // Requests start at once; only the cache's clock is virtual. No disk, no network.
                options: .testing(runtime: SegmentsRuntime(scheduler: ImmediateSegmentsScheduler(), clock: clock)))
        }

        @Test func o3_aSecondFetchIsACacheHit() async throws {
            let user = audiences.createUserContext(userId: "user123")
            #expect(try await user.fetchQualifiedSegments() == ["seg-1", "seg-2"])
            #expect(try await user.fetchQualifiedSegments() == ["seg-1", "seg-2"])
            #expect(fetcher.callCount == 1)
        }

        @Test func o1_optionsAreForwarded() async throws {
            let user = audiences.createUserContext(userId: "user123")
            try await user.fetchQualifiedSegments(options: [.ignoreCache, .clearOnFailure])
            #expect(fetcher.calls.last?.options == [.ignoreCache, .clearOnFailure])
        }

        @Test func o3_anAnswerExpiresAfter600SecondsOfVirtualTime() async throws {
            let user = audiences.createUserContext(userId: "user123")
            try await user.fetchQualifiedSegments()
            await clock.advance(by: 599)
            try await user.fetchQualifiedSegments()
            #expect(fetcher.callCount == 1)              // still cached
            await clock.advance(by: 1)
            try await user.fetchQualifiedSegments()
            #expect(fetcher.callCount == 2)              // expired: asked again
        }

        @Test func o4_theODPAdapterAgainstTheRecordingODPEndpoint() async throws {
            let odp = RecordingODPEndpoint()
            odp.qualify(["seg-2"], forUserId: "user123")
            odp.enqueue(.status(503))                    // the first request fails
            let transport = RecordingTransport()
            transport.serveODP(odp)
            let client = try AudienceSegmentsClient(
                odp: ODPConfiguration(apiKey: "public-key"), candidateSegments: ["seg-1", "seg-2"],
                options: .testing(runtime: SegmentsRuntime(scheduler: ImmediateSegmentsScheduler(), clock: clock), transport: transport))
            let user = client.createUserContext(userId: "user123")
            let error = await #expect(throws: SegmentsError.self) { try await user.fetchQualifiedSegments() }
            #expect(error?.reason == .httpStatus(503))
            #expect(try await user.fetchQualifiedSegments() == ["seg-2"])
            #expect(odp.queries.last?.audiences == ["seg-1", "seg-2"])
            #expect(odp.queries.last?.field == .fsUserId)
        }
    }
}

/// The guides still show exactly the test above.
@Suite(Hang.timeLimit(minutes: 2)) struct DocumentedExamplesTests {
    @Test(arguments: ["ODPAudiences.md", "TestingWithFakes.md"])
    func o1_o3_o4_theGuidesShowThePortedTestVerbatim(guide: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Docs/\(guide)"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "    /// Optimizely's segment-manager tests"))
        let end = try #require(source.range(of: "\n}\n\n/// The guides still show"))
        let nested = source[start.lowerBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
        let shown = text.contains(nested)
        #expect(shown, "Docs/\(guide) no longer shows the ported test of DocumentedExamples verbatim")
    }

    /// Docs/TestingWithFakes.md shows each of these files verbatim from its first import on.
    @Test(arguments: ["DocumentedFacadeExample.swift", "DocumentedClientExample.swift"])
    func t1_t3_t4_g2_theTestingGuideShowsTheExampleFilesVerbatim(file: String) throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Docs/TestingWithFakes.md"), encoding: .utf8)
        let source = try String(contentsOf: here.appendingPathComponent(file), encoding: .utf8)
        let start = try #require(source.range(of: "import Foundation\n"))
        let example = "```swift\n" + source[start.lowerBound...] + "```\n"
        #expect(text.contains(example), "Docs/TestingWithFakes.md no longer shows \(file) verbatim")
    }

    /// Docs/SwiftUI.md shows DocumentedSwiftUIExample.swift verbatim from its first import on.
    @Test func m5_theSwiftUIGuideShowsTheExampleFileVerbatim() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Docs/SwiftUI.md"), encoding: .utf8)
        let source = try String(contentsOf: here.appendingPathComponent("DocumentedSwiftUIExample.swift"), encoding: .utf8)
        let start = try #require(source.range(of: "import Foundation\n"))
        let example = "```swift\n" + source[start.lowerBound...] + "```\n"
        #expect(text.contains(example), "Docs/SwiftUI.md no longer shows DocumentedSwiftUIExample.swift verbatim")
    }
}
